// expect: Bucketizer: the sizes \[Min, Max\] must split into whole buckets: \(Max - Min \+ 1\) must be a multiple of
// [1, 500] is 500 sizes, not a whole number of 64-byte buckets.
#include <alloy/bucketizer.hpp>
#include <alloy/mallocator.hpp>
alloy::Bucketizer<alloy::Mallocator, 1, 500, 64> a;
