// expect: Segregator: the thresholds must increase strictly
// 4096 then 128: the second allocator would serve no size at all.
#include <alloy/mallocator.hpp>
#include <alloy/segregator.hpp>
alloy::Segregator<4096, alloy::Mallocator, alloy::threshold<128>, alloy::Mallocator, alloy::Mallocator> a;
