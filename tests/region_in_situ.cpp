#include <alloy/region.hpp>

#include <cstring>

#include <doctest/doctest.h>

#include "support/conformance.hpp"
#include "support/differential.hpp"

using alloy::Block;
using alloy::InSituRegion;
using alloy::Ternary;

static_assert(std::is_default_constructible_v<InSituRegion<4096>>);
static_assert(!std::is_copy_constructible_v<InSituRegion<4096>> && !std::is_move_constructible_v<InSituRegion<4096>>);
static_assert(!std::is_copy_assignable_v<InSituRegion<4096>>);
static_assert(alloy::has_aligned_allocate<InSituRegion<4096>> && alloy::has_allocate_all<InSituRegion<4096>> &&
              alloy::has_deallocate<InSituRegion<4096>> && alloy::has_deallocate_all<InSituRegion<4096>> &&
              alloy::has_owns<InSituRegion<4096>> && alloy::has_empty<InSituRegion<4096>>);
static_assert(!alloy::has_expand<InSituRegion<4096>>);  // grows downwards, as D's on x86
static_assert(InSituRegion<4096, 64>::alignment == 64 && InSituRegion<4096>::alignment == alloy::platform_alignment);
static_assert(alignof(InSituRegion<4096, 256>) == 256);
static_assert(sizeof(InSituRegion<4096, 16>) == 4096 + 3 * sizeof(void*) + 8);  // storage + Region (padded to 16)

TEST_CASE_TEMPLATE("InSituRegion: conformance", A, InSituRegion<65536>, InSituRegion<65536, 1>,
                   InSituRegion<65536, 4096>, InSituRegion<100000, 8>) {
  alloy::test::check_allocator([] { return A(); });
}

TEST_CASE("InSituRegion: D's unittests") {
  InSituRegion<128 * 1024, 16> r1;
  const Block a1 = r1.allocate(101);
  CHECK(a1.size == 101);

  InSituRegion<4096, 1> r2;
  Block a = r2.allocate(2001);
  CHECK(a.size == 2001);
  CHECK(r2.available() == 2095);
  CHECK(r2.deallocate(a));
  CHECK(r2.deallocate_all());

  InSituRegion<65536, 4096> r3;
  CHECK(r3.available() <= 65536);
  a = r3.allocate(2001);
  CHECK(a.size == 2001);
  const Block buff = r3.allocate(42);
  CHECK(r3.owns(buff) == Ternary::yes);
  CHECK(r3.deallocate_all());
}

TEST_CASE("InSituRegion: memory inside the object, from the end down") {
  InSituRegion<1024, 16> r;
  const auto lo = alloy::address_of(&r), hi = lo + sizeof r;
  const Block a = r.allocate(10);
  CHECK(alloy::address_of(a.ptr) >= lo);
  CHECK(a.end_address() <= hi);
  CHECK(r.owns(a) == Ternary::yes);
  const Block b = r.allocate(10);
  CHECK(alloy::address_of(b.ptr) + 16 == alloy::address_of(a.ptr));
  std::memset(a.ptr, 0xAB, a.size);
  std::memset(b.ptr, 0xCD, b.size);
  CHECK(static_cast<unsigned char*>(a.ptr)[9] == 0xAB);
  CHECK(!r.deallocate(a));
  CHECK(r.deallocate(b));
  CHECK(r.deallocate(a));
  CHECK(r.empty() == Ternary::yes);
  CHECK(r.available() == 1024);
  const Block all = r.allocate_all();
  CHECK(all.size == 1024);
  CHECK(!r.allocate(1));
  CHECK(r.deallocate(all));
  CHECK(!r.allocate(1025));
  CHECK(!r.allocate(0));
  const Block c = r.aligned_allocate(1, 512);
  CHECK(alloy::is_aligned(c.ptr, 512));
  CHECK(r.deallocate_all());
  CHECK(r.empty() == Ternary::yes);
}

TEST_CASE("InSituRegion: randomized against a downward Region over the same memory") {
  static InSituRegion<32768, 16> r;  // static storage
  const Block all = r.allocate_all();
  REQUIRE(r.deallocate(all));
  alloy::Region<alloy::NullAllocator, 16, alloy::GrowDownwards::yes> model(std::span<std::byte>(static_cast<std::byte*>(all.ptr), all.size));
  alloy::test::DiffOptions o;
  o.ops = 200'000;
  o.slots = 64;
  o.max_size = 600;
  o.deallocate_all_every = 400;
  const auto st = alloy::test::run_differential(r, model, o);
  CHECK(st.allocations > 20'000);
  CHECK(st.deallocations > 100);
  CHECK(st.refused_deallocations > 100);
}
