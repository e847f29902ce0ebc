// AllocatorList with ALLOY_ASSERT compiled out, as in a release build: what it does where a debug build stops at an
// assertion. Every test preset builds with assertions on, so this file turns them off itself (its own executable).
#define ALLOY_ENABLE_ASSERTS 0
#include <alloy/allocator_list.hpp>

#include <alloy/null_allocator.hpp>
#include <alloy/region.hpp>

#include <algorithm>
#include <vector>

#include <doctest/doctest.h>

static_assert(!ALLOY_ENABLE_ASSERTS);

using alloy::Block;
using alloy::Ternary;

struct Regions {
  alloy::Region<alloy::Mallocator> operator()(std::size_t n) const {
    return alloy::Region<alloy::Mallocator>(std::max<std::size_t>(n, 4096));
  }
};

// In-band, the node array lies in the first region's memory. The region owns it (as in D), but no caller ever got
// it: the primitives that take a caller's block refuse it, and the list goes on working.
TEST_CASE("AllocatorList, in-band, assertions off: the node array is owned but refused as a caller's block") {
  alloy::AllocatorList<Regions, alloy::NullAllocator> a;
  const Block x = a.allocate(100);
  REQUIRE(x);
  void* base = nullptr;
  a.for_each_allocator([&](alloy::Region<alloy::Mallocator>& r) { base = r.data(); });
  Block array{base, 4 * a.node_capacity()};  // the array starts the region: its first bytes are enough
  REQUIRE(array.ptr != x.ptr);
  CHECK(a.owns(array) == Ternary::yes);
  CHECK_FALSE(a.deallocate(array));
  CHECK_FALSE(a.expand(array, 16));
  CHECK_FALSE(a.reallocate(array, 4096));
  CHECK(array.ptr == base);
  CHECK(a.empty() == Ternary::no);  // x
  CHECK(a.deallocate(x));
  CHECK(a.empty() == Ternary::yes);  // the array is not a block
  CHECK_FALSE(a.deallocate(array));
  CHECK(a.empty() == Ternary::yes);
  // The list still grows its array and serves requests.
  std::vector<Block> bs;
  for (int i = 0; i < 20; ++i) bs.push_back(a.allocate(4000));
  for (Block b : bs) CHECK(b);
  CHECK(a.node_capacity() >= 16);
  for (auto it = bs.rbegin(); it != bs.rend(); ++it) CHECK(a.deallocate(*it));
  CHECK(a.empty() == Ternary::yes);
  CHECK(a.allocator_count() <= 2);  // the array's home and at most one empty region
}
