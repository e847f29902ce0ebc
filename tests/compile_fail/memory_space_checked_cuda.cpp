// The memory-space rule (DESIGN.md §4): Checked writes a header and guard bytes into the parent's memory, so over alloy::CudaMallocator (device memory) it must not compile; the message names the alternative.
// needs: cuda
// expect: Checked writes a header and guard bytes.*must be host-accessible.*compute-sanitizer
#include <alloy/checked.hpp>
#include <alloy/cuda_mallocator.hpp>

int main() {
  alloy::Checked<alloy::CudaMallocator> a;
  return a.allocate(64) ? 0 : 1;
}
