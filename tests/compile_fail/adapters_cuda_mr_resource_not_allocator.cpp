// CudaMrResource over a struct whose alignment is a function, not a static constant: not an alloy allocator.
// needs: cuda
// expect: CudaMrResource: A must be an alloy allocator: a type with `static constexpr std::size_t alignment`.*a cuda::mr resource \(or an RMM memory resource\) is not an alloy allocator
#include <alloy/adapters/cuda_mr_resource.hpp>

struct AlignmentFunction {
  static constexpr std::size_t alignment() noexcept { return 256; }
  alloy::Block allocate(std::size_t) noexcept { return {}; }
};

int main() {
  alloy::CudaMrResource<AlignmentFunction> mr;
  return mr.allocate_sync(64, 16) != nullptr;
}
