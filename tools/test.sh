#!/usr/bin/env bash
# The whole test suite, as CI runs it, each test source compiled once per compiler:
#   asan     clang 14, ASan + UBSan (LSan at exit), -O0: every host test, the examples, the tests over the CPU
#            stand-in for the CUDA runtime, the kit audit;
#   default  g++ 12, -O1: what depends on the compiler or the CUDA toolkit (ALLOY_TEST_SCOPE=compiler when asan runs
#            too): the `// needs: cuda` tests (over the stand-in, and over the real runtime, which report a skip
#            without a GPU), every header and doc example, compile_fail, the package tests, the nvcc kernel tests;
#   tsan     g++ 12, ThreadSanitizer: the tests labelled tsan.
# Two compilers because they differ in argument evaluation order and in what they accept.
# Usage: tools/test.sh [--long] [preset ...]     (default: asan default tsan)
#   --long: the randomized tests run their full length (ALLOY_TEST_LONG=1: 10^6 operations per block and mode and
#           more seeds); run it by hand before a release. Without it they run a twentieth of that, as CI does.
# A single preset named alone builds all of its tests (`tools/test.sh default` is the whole suite under g++).
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/deps.sh
ensure_packages cmake ninja-build g++ clang libclang-rt-14-dev libboost-dev doctest-dev libbenchmark-dev pkgconf
jobs=$(nproc 2>/dev/null || echo 2)
presets=()
for a in "$@"; do
  if [ "$a" = --long ]; then export ALLOY_TEST_LONG=1; else presets+=("$a"); fi
done
[ ${#presets[@]} -eq 0 ] && presets=(asan default tsan)
passed=0 failed=0 skipped=0 status=0
for p in "${presets[@]}"; do
  echo "=== alloy: preset $p: configure, build, test ==="
  mkdir -p build
  scope=()
  if [ "$p" = default ]; then
    if [[ " ${presets[*]} " == *" asan "* ]]; then scope=(-DALLOY_TEST_SCOPE=compiler); else scope=(-DALLOY_TEST_SCOPE=all); fi
  fi
  cmake --preset "$p" "${scope[@]}" >"build/$p.configure.log" 2>&1 || { cat "build/$p.configure.log"; exit 1; }
  rm -f "build/$p.configure.log"
  cmake --build --preset "$p" -j "$jobs"
  log=$(mktemp)
  extra=()
  if [[ "$p" = asan && " ${presets[*]} " == *" default "* ]]; then
    extra=(-E '^(compile_fail|consumer)_')  # run by default (g++); by name: a -LE would override the preset's filter
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
