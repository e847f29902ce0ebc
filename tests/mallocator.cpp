#include <alloy/mallocator.hpp>

#include <doctest/doctest.h>

#include "support/conformance.hpp"
#include "support/differential.hpp"

using alloy::Mallocator;
static_assert(alloy::allocator<Mallocator>);
static_assert(alloy::has_deallocate<Mallocator> && alloy::has_reallocate<Mallocator>);
static_assert(!alloy::has_owns<Mallocator> && !alloy::has_expand<Mallocator> && !alloy::has_aligned_allocate<Mallocator>);
static_assert(alloy::has_instance<Mallocator> && alloy::stateless_allocator<Mallocator>);
static_assert(Mallocator::alignment == alignof(std::max_align_t));

TEST_CASE("Mallocator: conformance") { alloy::test::check_allocator([] { return Mallocator{}; }); }

TEST_CASE("Mallocator: randomized against the invariants") {
  Mallocator m;
  alloy::test::DiffOptions o;
  o.ops = 200'000;
  o.max_size = 4096;
  const auto st = alloy::test::run_differential(m, o);
  CHECK(st.failures == 0);
  CHECK(st.reallocations > 1000);
  CHECK(st.deallocations > 1000);
}

TEST_CASE("Mallocator: reallocate to 0 frees and empties") {
  Mallocator m;
  alloy::Block b = m.allocate(10);
  REQUIRE(b);
  CHECK(m.reallocate(b, 0));
  CHECK(!b);
}
