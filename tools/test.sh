#!/usr/bin/env bash
# The whole test suite, as CI runs it: presets default (with the CUDA tests built when nvcc is there; without a GPU
# they report a skip), asan (ASan+UBSan), tsan (the thread-safe blocks) and clang (clang 14: the tests over the CPU
# stand-in for the CUDA runtime, since g++ and clang evaluate arguments in different orders).
# Usage: tools/test.sh [--long] [preset ...]     (default: default asan tsan clang)
#   --long: the randomized tests run their full length (ALLOY_TEST_LONG=1: 10^6 operations per block and mode and
#           more seeds); run it by hand before a release. Without it they run a tenth of that, as CI does.
# compile_fail and consumer (package) tests run the compiler with the same flags in every g++ preset: when default is
# in the list, asan and tsan leave them to it.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/deps.sh
ensure_packages cmake ninja-build g++ clang libboost-dev doctest-dev libbenchmark-dev pkgconf
jobs=$(nproc 2>/dev/null || echo 2)
presets=()
for a in "$@"; do
  if [ "$a" = --long ]; then export ALLOY_TEST_LONG=1; else presets+=("$a"); fi
done
[ ${#presets[@]} -eq 0 ] && presets=(default asan tsan clang)
passed=0 failed=0 skipped=0 status=0
for p in "${presets[@]}"; do
  echo "=== alloy: preset $p: configure, build, test ==="
  mkdir -p build
  cmake --preset "$p" >"build/$p.configure.log" 2>&1 || { cat "build/$p.configure.log"; exit 1; }
  rm -f "build/$p.configure.log"
  cmake --build --preset "$p" -j "$jobs"
  log=$(mktemp)
  extra=()
  if [[ "$p" =~ ^(asan|tsan)$ && " ${presets[*]} " == *" default "* ]]; then
    extra=(-E '^(compile_fail|consumer)_')  # by name: the presets' own label filters would override a -LE here
  fi
  ctest --preset "$p" "${extra[@]}" 2>&1 | tee "$log" || status=1
  line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1 || true)
  if [ -n "$line" ]; then
    total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")
    nf=$(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<<"$line")
    ns=$(grep -c '\*\*\*Skipped' "$log" || true)
    passed=$((passed + total - nf - ns)); failed=$((failed + nf)); skipped=$((skipped + ns))
  else
    status=1
  fi
  rm -f "$log"
done
echo "alloy tests: $passed passed, $failed failed, $skipped skipped"
exit $status
