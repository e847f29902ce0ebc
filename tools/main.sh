#!/usr/bin/env bash
# The main job: build and run the examples, then run the benchmark comparison (W1-W6 against the anchors), print
# the table and write the report (performance.md, performance.png, results/<date>.json) into build/report/, which
# git ignores: a checkout stays clean. The last line says where; docs/performance.md changes only through
# tools/bench_report.sh --publish (see that script).
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/deps.sh
ensure_packages cmake ninja-build g++ libboost-dev doctest-dev libbenchmark-dev libfoonathan-memory-dev \
  ldc gnuplot-nox python3 valgrind libmimalloc-dev
jobs=$(nproc 2>/dev/null || echo 2)
echo "=== alloy: examples ==="
cmake --preset default >/dev/null
examples=$(cmake --build --preset default --target help | sed -n 's/^\(example_[A-Za-z0-9_]*\):.*/\1/p' | sort -u)
cmake --build --preset default -j "$jobs" --target $examples
ctest --preset default -L example --output-on-failure
echo "=== alloy: benchmark comparison ==="
exec tools/bench_report.sh "$@"
