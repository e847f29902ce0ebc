// ctest-labels: tsan
#include <alloy/aligned_mallocator.hpp>

#include <cstring>

#include <doctest/doctest.h>

#include "support/conformance.hpp"
#include "support/differential.hpp"
#include "support/rng.hpp"
#include "support/threads.hpp"

using alloy::AlignedMallocator;
using alloy::Block;

static_assert(alloy::allocator<AlignedMallocator> && alloy::has_aligned_allocate<AlignedMallocator> &&
              alloy::has_reallocate<AlignedMallocator> && alloy::has_aligned_reallocate<AlignedMallocator> &&
              alloy::has_deallocate<AlignedMallocator>);
static_assert(!alloy::has_owns<AlignedMallocator> && !alloy::has_expand<AlignedMallocator> &&
              !alloy::has_allocate_all<AlignedMallocator> && !alloy::has_deallocate_all<AlignedMallocator> &&
              !alloy::has_empty<AlignedMallocator> && !alloy::has_resolve_internal_pointer<AlignedMallocator>);
static_assert(alloy::has_instance<AlignedMallocator> && alloy::stateless_allocator<AlignedMallocator>);
static_assert(alloy::allocator<const AlignedMallocator> && alloy::has_aligned_reallocate<const AlignedMallocator>);
static_assert(AlignedMallocator::alignment == alloy::platform_alignment);

TEST_CASE("AlignedMallocator: conformance") {
  alloy::test::check_allocator([] { return AlignedMallocator{}; });
}

TEST_CASE("AlignedMallocator: every power of two, and nothing else") {
  const AlignedMallocator& a = AlignedMallocator::instance;
  for (std::size_t al = 1; al <= (std::size_t{1} << 20); al *= 2) {
    Block b = a.aligned_allocate(al == 1 ? 1 : al - 1, al);
    REQUIRE(b);
    CHECK(alloy::is_aligned(b.ptr, al));
    std::memset(b.ptr, 0xAB, b.size);
    CHECK(a.deallocate(b));
  }
  for (std::size_t bad : {std::size_t{0}, std::size_t{3}, std::size_t{24}, std::size_t{4095}, SIZE_MAX})
    CHECK(!a.aligned_allocate(64, bad));
  CHECK(!a.aligned_allocate(0, 64));
  CHECK(!a.aligned_allocate(SIZE_MAX / 2 + 1, 64));
  CHECK(!a.aligned_allocate(64, std::size_t{1} << 63));  // the C heap refuses: an empty Block, no crash
  CHECK(a.deallocate({}));
}

TEST_CASE("AlignedMallocator: aligned_reallocate keeps contents and alignment") {
  AlignedMallocator a;
  Block b = a.aligned_allocate(100, 256);
  for (std::size_t i = 0; i < 100; ++i) static_cast<unsigned char*>(b.ptr)[i] = static_cast<unsigned char>(i);
  const Block same = b;
  CHECK(a.aligned_reallocate(b, 100, 256));  // already right: nothing happens
  CHECK(b == same);
  CHECK_FALSE(a.aligned_reallocate(b, 200, 48));
  CHECK(b == same);
  CHECK_FALSE(a.aligned_reallocate(b, SIZE_MAX, 64));
  CHECK(b == same);
  for (std::size_t al : {std::size_t{4096}, std::size_t{64}, std::size_t{1} << 16}) {
    REQUIRE(a.aligned_reallocate(b, 50 + al / 64, al));
    CHECK(alloy::is_aligned(b.ptr, al));
    for (std::size_t i = 0; i < 50; ++i) CHECK(static_cast<unsigned char*>(b.ptr)[i] == i);
  }
  CHECK(a.aligned_reallocate(b, 0, 64));
  CHECK(!b);
  CHECK(a.aligned_reallocate(b, 10, 1024));  // from empty: allocates
  CHECK(alloy::is_aligned(b.ptr, 1024));
  CHECK(a.reallocate(b, 5000));  // realloc: platform alignment only
  CHECK(alloy::is_aligned(b.ptr, alloy::platform_alignment));
  CHECK(a.reallocate(b, 0));
  CHECK(!b);
}

TEST_CASE("AlignedMallocator: randomized against the invariants") {
  AlignedMallocator a;
  alloy::test::DiffOptions o;
  o.ops = 200'000;
  o.max_size = 4096;
  o.max_alignment = 1 << 14;
  const auto st = alloy::test::run_differential(a, o);
  CHECK(st.failures == 0);
  CHECK(st.reallocations > 1000);
  CHECK(st.deallocations > 1000);
}

TEST_CASE("AlignedMallocator: thread-safe (4 threads allocate, resize, check and free at once)") {
  const AlignedMallocator& a = AlignedMallocator::instance;
  for (int e : alloy::test::stress_threads(a, [](std::size_t n) { return std::size_t{1} << (n % 12); })) CHECK(e == 0);
}

TEST_CASE("AlignedMallocator: aligned_reallocate to 0 with a bad alignment fails and keeps the block") {
  const AlignedMallocator& a = AlignedMallocator::instance;
  Block b = a.aligned_allocate(100, 64);
  REQUIRE(b);
  const Block before = b;
  CHECK_FALSE(a.aligned_reallocate(b, 0, 48));  // not a power of two: fails before anything is freed
  CHECK(b == before);
  std::memset(b.ptr, 1, b.size);  // still the caller's
  CHECK(a.deallocate(b));
}
