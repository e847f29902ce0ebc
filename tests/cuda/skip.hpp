#pragma once
// Included first by every tests/cuda/*.cu: without a CUDA device the program prints a skip line and exits 77 before
// any test runs, so ctest reports "skipped" (SKIP_RETURN_CODE 77), never "passed".
#include <alloy/cuda_mallocator.hpp>

#include <cstdio>
#include <cstdlib>

namespace alloy::test {
inline const bool cuda_device_present = [] {
  if (!alloy::cuda_available()) {
    const alloy::cuda_device_query q = alloy::query_cuda_devices();
    std::printf("ALLOY_SKIP: no CUDA device (cudaGetDeviceCount: error %d, count %d)\n", q.error, q.count);
    std::fflush(stdout);
    std::exit(77);
  }
  return true;
}();
}  // namespace alloy::test
