// expect: Bucketizer: Min must not exceed Max
#include <alloy/bucketizer.hpp>
#include <alloy/mallocator.hpp>
alloy::Bucketizer<alloy::Mallocator, 512, 64, 64> a;
