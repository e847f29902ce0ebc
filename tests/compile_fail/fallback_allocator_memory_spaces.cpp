// expect: FallbackAllocator: Primary and Fallback hand out memory of different memory spaces
// A device region backed by host memory: a block's memory space would depend on which part served it.
#include <alloy/fallback_allocator.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/region.hpp>
alloy::FallbackAllocator<alloy::Region<alloy::NoAccessAllocator>, alloy::Mallocator> a;
