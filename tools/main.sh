#!/usr/bin/env bash
# The main job: build and run the examples, then run the benchmark comparison (W1-W6 against the anchors), print
# the table and write the report (performance.md, performance.png, results/<date>.json) into build/report/, which
# git ignores: a checkout stays clean. The last line says where; docs/performance.md changes only through
# tools/bench_report.sh --publish (see that script).
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/deps.sh
ensure_packages cmake ninja-build g++ libboost-dev doctest-dev libbenchmark-dev libfoonathan-memory-dev \
  ldc gnuplot-nox python3 valgrind libmimalloc-dev \
  libjemalloc-dev libgoogle-perftools-dev  # jemalloc and tcmalloc anchors (benchmarks only)
jobs=$(nproc 2>/dev/null || echo 2)
echo "=== alloy: examples ==="
cmake --preset default -DALLOY_TEST_SCOPE=all >/dev/null  # tools/test.sh may have scoped this build
examples=$(cmake --build --preset default --target help | sed -n 's/^\(example_[A-Za-z0-9_]*\):.*/\1/p' | sort -u)
cmake --build --preset default -j "$jobs" --target $examples
ctest --preset default -L example --output-on-failure
echo "=== alloy: device benchmark (D1-D3) ==="
# On a machine with a GPU: device_bench over the real runtime (RMM's rows too after tools/fetch_rmm.sh). Without one
# it is not run; device_bench_standin runs the same code over the CPU stand-in (host timings of the stand-in only).
if nvidia-smi -L >/dev/null 2>&1; then
  cmake --preset bench >/dev/null
  cmake --build --preset bench -j "$jobs" --target device_bench
  build/bench/benchmarks/device/device_bench --benchmark_out=build/device_bench.json --benchmark_out_format=json
  echo "device benchmark: build/device_bench.json"
else
  echo "no GPU here (nvidia-smi): the device benchmark is not run (tools/gpu_check.sh runs it on a GPU machine)"
fi
echo "=== alloy: benchmark comparison ==="
exec tools/bench_report.sh "$@"
