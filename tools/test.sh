#!/usr/bin/env bash
# The whole test suite, as CI runs it: presets default (with the CUDA tests built when nvcc is there; without a GPU
# they report a skip), asan (ASan+UBSan) and tsan (the thread-safe blocks).
# Usage: tools/test.sh [preset ...]     (default: default asan tsan)
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/deps.sh
ensure_packages cmake ninja-build g++ libboost-dev doctest-dev libbenchmark-dev pkgconf
jobs=$(nproc 2>/dev/null || echo 2)
presets=("$@")
[ ${#presets[@]} -eq 0 ] && presets=(default asan tsan)
passed=0 failed=0 skipped=0 status=0
for p in "${presets[@]}"; do
  echo "=== alloy: preset $p: configure, build, test ==="
  mkdir -p build
  cmake --preset "$p" >"build/$p.configure.log" 2>&1 || { cat "build/$p.configure.log"; exit 1; }
  rm -f "build/$p.configure.log"
  cmake --build --preset "$p" -j "$jobs"
  log=$(mktemp)
  ctest --preset "$p" 2>&1 | tee "$log" || status=1
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
