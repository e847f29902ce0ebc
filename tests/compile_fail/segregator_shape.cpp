// expect: Segregator: write Segregator<Threshold, Small, Large> or Segregator<n1, A1, alloy::threshold<n2>
// A threshold after the first must be spelled alloy::threshold<n>: here an allocator stands where it should be.
#include <alloy/mallocator.hpp>
#include <alloy/segregator.hpp>
alloy::Segregator<128, alloy::Mallocator, alloy::Mallocator, alloy::Mallocator, alloy::Mallocator> a;
