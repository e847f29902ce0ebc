#!/usr/bin/env bash
# The fuzzers of tests/fuzz (libFuzzer, clang 14, ASan + UBSan, -O1: the fuzz preset).
# Usage: tools/fuzz.sh [--long | --time S] [--jobs N] [name ...]   (names as in tests/fuzz/<name>.cpp; default: all)
#   default: a smoke run, each fuzzer over its seed corpus plus 20 seconds of generated inputs.
#   --long:  10^7 executions per fuzzer (before a release), growing a working corpus in build/fuzz/corpus/<name>
#            (seeded from tests/fuzz/corpus/<name>; the repository's seeds are not written to).
#   --time S: as --long, but S seconds per fuzzer instead of 10^7 executions (a campaign that fits a session).
# Per fuzzer it prints one row: executions, coverage (libFuzzer's cov: and ft:), findings, wall time; the rows of a
# --long run go into docs/reliability.md. Findings (crash-*, leak-*, timeout-*, oom-*) are kept in
# build/fuzz/findings/; reproduce one with build/fuzz/tests/fuzz/fuzz_<name> <file>.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/deps.sh
ensure_packages cmake ninja-build clang libboost-dev doctest-dev
long=0 seconds=0 jobs=1 names=()
while [ $# -gt 0 ]; do
  case "$1" in
    --long) long=1 ;;
    --time) long=1 seconds="$2"; shift ;;
    --jobs) jobs="$2"; shift ;;
    *) names+=("$1") ;;
  esac
  shift
done
if [ ${#names[@]} -eq 0 ]; then
  for f in tests/fuzz/*.cpp; do names+=("$(basename "$f" .cpp)"); done
fi
cmake --preset fuzz >build/fuzz.configure.log 2>&1 || { cat build/fuzz.configure.log; exit 1; }
cmake --build build/fuzz -j "$(nproc 2>/dev/null || echo 2)" --target "${names[@]/#/fuzz_}"
mkdir -p build/fuzz/findings build/fuzz/logs
run_one() {
  local name=$1 bin=build/fuzz/tests/fuzz/fuzz_$1 log=build/fuzz/logs/$1.log args=()
  args=(-seed=1 -max_len=512 -dict=tests/fuzz/fuzz.dict -artifact_prefix=build/fuzz/findings/$name-
        -print_final_stats=1)
  if [ "$long" = 1 ]; then
    mkdir -p "build/fuzz/corpus/$name"
    if [ "$seconds" -gt 0 ]; then args+=(-max_total_time="$seconds"); else args+=(-runs=10000000); fi
    args+=("build/fuzz/corpus/$name" "tests/fuzz/corpus/$name")
  else
    local seeds
    seeds=$(ls -d "tests/fuzz/corpus/$name"/* 2>/dev/null | paste -sd, -)
    args+=(-max_total_time=20)
    [ -n "$seeds" ] && args+=("-seed_inputs=$seeds")
  fi
  local t0 t1 rc=0
  t0=$(date +%s)
  "$bin" "${args[@]}" >"$log" 2>&1 || rc=$?
  t1=$(date +%s)
  local execs cov ft findings
  execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?')
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo '?')
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo '?')
  findings=$(ls build/fuzz/findings | grep -c "^$name-" || true)
  printf '| %s | %s | %s | %s | %s | %s s | %s |\n' "$name" "$execs" "$cov" "$ft" "$findings" "$((t1 - t0))" \
    "$([ $rc -eq 0 ] && echo ok || echo "exit $rc, see $log")"
  return $rc
}
export -f run_one
export long seconds
echo "| fuzzer | executions | cov | ft | findings | wall | result |"
echo "|---|---|---|---|---|---|---|"
status=0
printf '%s\n' "${names[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}' || status=1
exit $status
