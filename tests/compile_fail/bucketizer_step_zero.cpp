// expect: Bucketizer: Step must be positive
#include <alloy/bucketizer.hpp>
#include <alloy/mallocator.hpp>
alloy::Bucketizer<alloy::Mallocator, 1, 512, 0> a;
