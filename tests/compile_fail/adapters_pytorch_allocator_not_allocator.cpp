// PyTorchAllocator over std::allocator: a standard allocator, not an alloy one.
// expect: PyTorchAllocator: A must be an alloy allocator: a type with `static constexpr std::size_t alignment`.*alloy::CudaMallocator
#include <alloy/adapters/pytorch_allocator.hpp>

#include <cstddef>
#include <memory>

int main() { (void)alloy::PyTorchAllocator<std::allocator<std::byte>>::alloc(8, 0, nullptr); }
