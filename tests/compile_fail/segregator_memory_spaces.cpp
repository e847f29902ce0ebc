// expect: Segregator: Small and Large hand out memory of different memory spaces
// Small blocks in device memory, large ones on the host: a block's space would depend on its size.
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/segregator.hpp>
alloy::Segregator<128, alloy::NoAccessAllocator, alloy::Mallocator> a;
