#!/usr/bin/env bash
# The main job: build and run the examples, then run the benchmark comparison (W1-W6 against the anchors), print
# the table and write docs/performance.md, benchmarks/results/<date>.json and docs/performance.png.
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
