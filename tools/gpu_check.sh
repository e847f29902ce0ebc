#!/usr/bin/env bash
# Runs alloy's CUDA tests on a machine with a GPU, in one short step.
#
#   tools/gpu_check.sh prepare   here (no GPU needed): builds the binaries that link the real CUDA runtime (preset
#                                default: the kernel tests tests/cuda/*.cu, the host tests of the CUDA paths over the
#                                real runtime, the CUDA headers' doc examples, the device example and the device
#                                benchmark when it is built) and copies them, with libcudart, into .gpu/ (ignored by git).
#   tools/gpu_check.sh run       on the GPU machine, from the repository root (.gpu/ carried there): runs each binary,
#                                then, where compute-sanitizer is installed, every test under memcheck (API errors not
#                                reported: the tests make failing calls on purpose, and check their answers) and the
#                                kernel tests under racecheck and synccheck; then the device benchmark once. One log per
#                                run under ${OUT:-.gpu/out}, a summary in summary.txt. Exits 1 when any run failed or
#                                was skipped (a skip there means the GPU was not seen).
#
# Binaries built here rather than there: the GPU image has nvcc and CMake but not Debian's doctest and Boost packages
# that the tests build with. They need a glibc at least as new as this machine's (Debian 12: 2.36) and a driver for
# CUDA 13; libcudart comes along in .gpu/lib, and this machine's libstdc++ in .gpu/lib/cxx, used only when the
# binaries do not load with the image's own.
set -euo pipefail
cd "$(dirname "$0")/.."

kernel_tests=(tests/test_cuda_adapters_gpu tests/test_cuda_device_buffer tests/test_cuda_stream_ordered)
host_tests=(tests/test_cuda_mallocator tests/test_cuda_headers tests/test_device_buffer_cuda
            tests/test_adapters_cuda_parents tests/test_stream_ordered tests/test_per_device)
bins=("${kernel_tests[@]}" "${host_tests[@]}" examples/example_device_pool)

case "${1:-}" in
  prepare)
    grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
    cmake --preset default -DALLOY_GPU_TESTS=ON >/dev/null  # the real-runtime builds of the device tests too
    targets=()
    for b in "${bins[@]}"; do targets+=("$(basename "$b")"); done
    cmake --build --preset default --target "${targets[@]}"
    rm -rf .gpu && mkdir -p .gpu/bin .gpu/lib
    for b in "${bins[@]}"; do cp "build/default/$b" .gpu/bin/; done
    # The device benchmark (benchmarks/device, bench preset), with RMM's libraries when tools/fetch_rmm.sh fetched them.
    cmake --preset bench >/dev/null
    cmake --build --preset bench --target device_bench
    cp build/bench/benchmarks/device/device_bench .gpu/bin/
    if [ -d .deps/rmm/lib ]; then cp -L .deps/rmm/lib/*.so .gpu/lib/; fi
    lib=$(ldd build/default/tests/test_cuda_device_buffer | awk '/libcudart/ {print $3}')
    cp -L "$lib" .gpu/lib/
    # This machine's C++ runtime, used there only if the image's is older than the binaries need.
    mkdir -p .gpu/lib/cxx
    for l in libstdc++.so.6 libgcc_s.so.1; do
      cp -L "$(ldd build/default/tests/test_cuda_device_buffer | awk -v l="$l" '$1 == l {print $3}')" .gpu/lib/cxx/
    done
    du -sh .gpu
    echo "now: run(command='tools/gpu_check.sh run', carry=['.gpu'])"
    ;;
  run)
    out=${OUT:-.gpu/out}
    mkdir -p "$out"
    export LD_LIBRARY_PATH="$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    if ! .gpu/bin/test_cuda_mallocator --version > "$out/loader.log" 2>&1; then
      echo "the binaries do not load with this machine's C++ runtime (loader.log): using .gpu/lib/cxx" | tee -a "$out/loader.log"
      export LD_LIBRARY_PATH="$PWD/.gpu/lib/cxx:$LD_LIBRARY_PATH"
    fi
    export PATH="$PATH:/usr/local/cuda/bin"  # compute-sanitizer ships with the toolkit, often off the PATH
    nvidia-smi -L > "$out/nvidia-smi.txt" 2>&1 || true
    failed=0
    : > "$out/summary.txt"
    run_one() {  # name, command...
      local name=$1 rc=0
      shift
      timeout 120 "$@" > "$out/$name.log" 2>&1 || rc=$?
      local verdict=passed
      [ "$rc" -eq 77 ] && verdict=skipped
      [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && verdict=failed
      [ "$verdict" = passed ] || failed=1
      printf '%-44s rc=%-3s %s\n' "$name" "$rc" "$verdict" | tee -a "$out/summary.txt"
    }
    for b in .gpu/bin/test_* .gpu/bin/example_*; do run_one "$(basename "$b")" "$b"; done
    if command -v compute-sanitizer >/dev/null; then
      for b in .gpu/bin/test_*; do
        run_one "memcheck_$(basename "$b")" compute-sanitizer --tool memcheck --report-api-errors no \
          --error-exitcode 3 "$b"
      done
      for b in "${kernel_tests[@]}"; do
        b=.gpu/bin/$(basename "$b")
        run_one "racecheck_$(basename "$b")" compute-sanitizer --tool racecheck --error-exitcode 3 "$b"
        run_one "synccheck_$(basename "$b")" compute-sanitizer --tool synccheck --error-exitcode 3 "$b"
      done
    else
      echo "compute-sanitizer not found: memcheck, racecheck and synccheck not run" | tee -a "$out/summary.txt"
    fi
    if [ -x .gpu/bin/device_bench ]; then
      run_one device_bench .gpu/bin/device_bench --benchmark_out="$out/device_bench.json" --benchmark_out_format=json
    fi
    exit "$failed"
    ;;
  *)
    echo "usage: tools/gpu_check.sh prepare|run" >&2
    exit 2
    ;;
esac
