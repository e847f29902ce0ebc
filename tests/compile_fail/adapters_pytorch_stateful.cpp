// PyTorchAllocator builds one stack per device on first use, so a stack without a default constructor is refused.
// expect: PyTorchAllocator: the stack is built on first use for each device, so it must be default-constructible
#include <alloy/adapters/pytorch_allocator.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/ref.hpp>

int main() { (void)alloy::PyTorchAllocator<alloy::Ref<alloy::Mallocator>>::alloc(8, 0, nullptr); }
