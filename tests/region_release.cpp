// Region with ALLOY_ASSERT compiled out, as in a release build: what it does where a debug build stops at an
// assertion. Every test preset builds with assertions on, so this file turns them off itself (its own executable:
// tests/main.cpp includes no alloy header that uses ALLOY_ASSERT).
#define ALLOY_ENABLE_ASSERTS 0
#include <alloy/region.hpp>

#include <cstddef>
#include <span>

#include <doctest/doctest.h>

static_assert(!ALLOY_ENABLE_ASSERTS);

using alloy::Block;
using alloy::Ternary;

TEST_CASE("Region, assertions off: expand and deallocate refuse a block that ends where this region's next one starts") {
  // Two regions over the two halves of one buffer: a block that fills the left one ends exactly at the right one's
  // current pointer. expand grew it into the right region (found in review), whose next allocation
  // then overlapped it.
  alignas(64) static std::byte buf[256];
  alloy::Region<> left(std::span<std::byte>(buf, 128)), right(std::span<std::byte>(buf + 128, 128));
  Block a = left.allocate(128);
  REQUIRE(a);
  REQUIRE(static_cast<std::byte*>(a.ptr) + a.size == buf + 128);
  CHECK(right.owns(a) == Ternary::no);
  CHECK(!right.expand(a, 64));
  CHECK(a.size == 128);                 // unchanged
  CHECK(right.available() == 128);      // nothing taken
  CHECK(!right.deallocate(a));
  const Block c = right.allocate(64);
  REQUIRE(c);
  CHECK(c.ptr == buf + 128);
  CHECK(left.expand(a, 0));
  CHECK(!left.expand(a, 1));            // the left region is full
  CHECK(left.deallocate(a));
  CHECK(right.deallocate(c));
  CHECK(left.empty() == Ternary::yes);
  CHECK(right.empty() == Ternary::yes);
}
