// Built (not run) where the installed alloy has alloy::cuda and the CUDA toolkit is found: the CUDA parents compile
// with the host compiler and link against the CUDA runtime.
#include <alloy/alloy.hpp>
#include <alloy/cuda_mallocator.hpp>

int main() {
  alloy::Region<alloy::CudaMallocator> r(1 << 20);
  alloy::Block b = r.allocate(256);
  return b ? 0 : 1;
}
