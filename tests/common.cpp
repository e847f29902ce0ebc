#include <alloy/common.hpp>

#include <alloy/mallocator.hpp>
#include <alloy/mmap_allocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/region.hpp>

#include <cstring>
#include <vector>

#include <doctest/doctest.h>

#include "support/conformance.hpp"
#include "support/differential.hpp"
#include "support/test_allocators.hpp"

using alloy::Block;
using alloy::test::BumpArena;
using alloy::test::CheckedHeap;
namespace caps = alloy::test::caps;
constexpr std::size_t MAX = SIZE_MAX;

using Plain = CheckedHeap<16>;
using Expanding = CheckedHeap<16, caps::expand>;
using Aligned = CheckedHeap<16, caps::aligned>;
static_assert(alloy::has_deallocate<Plain> && !alloy::has_expand<Plain> && !alloy::has_reallocate<Plain>);
static_assert(alloy::has_expand<Expanding> && !alloy::has_reallocate<Expanding>);
static_assert(alloy::has_aligned_allocate<Aligned> && !alloy::has_aligned_reallocate<Aligned>);
static_assert(!alloy::has_deallocate<BumpArena<64>>);

// ---------------------------------------------------------------------------------------------------------------
// Arithmetic: every checked helper at its overflow edge, in constant expressions where it is constexpr.

constexpr std::size_t ru(std::size_t n, std::size_t a) {
  std::size_t r = 12345;
  return alloy::round_up_checked(n, a, r) ? r : 12345;
}
static_assert(ru(0, 16) == 0 && ru(1, 16) == 16 && ru(16, 16) == 16 && ru(17, 16) == 32);
static_assert(ru(MAX, 1) == MAX);             // a == 1 never rounds
static_assert(ru(MAX - 15, 16) == MAX - 15);  // the largest multiple of 16
static_assert(ru(MAX - 14, 16) == 12345);     // one past it overflows: out untouched
static_assert(ru(MAX, 2) == 12345);
static_assert(ru(MAX / 2 + 1, MAX / 2 + 1) == MAX / 2 + 1);
static_assert(ru(MAX / 2 + 2, MAX / 2 + 1) == 12345);
static_assert(alloy::round_up(17, 16) == 32 && alloy::round_down(31, 16) == 16 &&
              alloy::round_down(MAX, 4096) == MAX - 4095);

constexpr std::size_t rm(std::size_t n, std::size_t m) {
  std::size_t r = 12345;
  return alloy::round_up_to_multiple_checked(n, m, r) ? r : 12345;
}
static_assert(rm(10, 3) == 12 && rm(12, 3) == 12 && rm(0, 7) == 0 && rm(1, 1) == 1);
static_assert(rm(MAX, 3) == MAX);  // 2^64 - 1 is a multiple of 3
static_assert(rm(MAX - 1, 3) == MAX && rm(MAX - 2, 4) == 12345 && rm(MAX - 3, 4) == MAX - 3);
static_assert(rm(MAX, 10) == 12345 && rm(MAX - 5, 10) == MAX - 5);

constexpr std::size_t add(std::size_t a, std::size_t b) {
  std::size_t r = 12345;
  return alloy::add_checked(a, b, r) ? r : 12345;
}
constexpr std::size_t mul(std::size_t a, std::size_t b) {
  std::size_t r = 12345;
  return alloy::mul_checked(a, b, r) ? r : 12345;
}
static_assert(add(MAX - 1, 1) == MAX && add(MAX, 1) == 12345 && add(MAX, 0) == MAX &&
              add(MAX / 2 + 1, MAX / 2 + 1) == 12345);
static_assert(mul(MAX, 1) == MAX && mul(MAX, 0) == 0 && mul(0, MAX) == 0 && mul(MAX / 2 + 1, 2) == 12345);
static_assert(mul(std::size_t{1} << 32, std::size_t{1} << 31) == std::size_t{1} << 63);
static_assert(mul(std::size_t{1} << 32, std::size_t{1} << 32) == 12345);
// On overflow every checked helper leaves `out` as it was (primitives.md; found in review: the builtins wrote the
// wrapped value into it).
template <class F>
constexpr bool leaves_out_alone(F f) {
  std::size_t out = 12345;
  return !f(out) && out == 12345;
}
static_assert(leaves_out_alone([](std::size_t& o) { return alloy::add_checked(MAX, 2, o); }));
static_assert(leaves_out_alone([](std::size_t& o) { return alloy::mul_checked(MAX / 2 + 1, 3, o); }));
static_assert(leaves_out_alone([](std::size_t& o) { return alloy::round_up_to_multiple_checked(MAX, 10, o); }));
static_assert(leaves_out_alone([](std::size_t& o) { return alloy::round_up_checked(MAX - 14, 16, o); }));
static_assert(alloy::divide_round_up(0, 7) == 0 && alloy::divide_round_up(7, 7) == 1 &&
              alloy::divide_round_up(8, 7) == 2);
static_assert(alloy::divide_round_up(MAX, 2) == MAX / 2 + 1 && alloy::divide_round_up(MAX, MAX) == 1);
static_assert(alloy::log2_exact(1) == 0 && alloy::log2_exact(4096) == 12 &&
              alloy::log2_exact(std::size_t{1} << 63) == 63);
static_assert(alloy::is_power_of_two(1) && alloy::is_power_of_two(std::size_t{1} << 63) && !alloy::is_power_of_two(0) &&
              !alloy::is_power_of_two(24) && !alloy::is_power_of_two(MAX));

TEST_CASE("common: alignment helpers on addresses") {
  alignas(64) unsigned char buf[256];
  CHECK(alloy::is_aligned(buf, 64));
  CHECK(!alloy::is_aligned(buf + 1, 2));
  CHECK(alloy::align_up(static_cast<void*>(buf + 1), 64) == buf + 64);
  CHECK(alloy::align_up(static_cast<void*>(buf), 64) == buf);
  CHECK(alloy::align_up(std::uintptr_t{65}, 64) == 128);
  CHECK(alloy::to_pointer(alloy::address_of(buf)) == buf);
  CHECK(Block{buf, 10}.end_address() == alloy::address_of(buf) + 10);
}

TEST_CASE("common: block_within at the edges, without overflow") {
  alignas(16) unsigned char buf[100];
  CHECK(alloy::block_within({buf, 100}, buf, 100));
  CHECK(alloy::block_within({buf + 99, 1}, buf, 100));
  CHECK(alloy::block_within({buf + 100, 0}, buf, 100));
  CHECK_FALSE(alloy::block_within({buf + 99, 2}, buf, 100));
  CHECK_FALSE(alloy::block_within({buf, 101}, buf, 100));
  CHECK_FALSE(alloy::block_within({buf + 1, MAX}, buf, 100));  // size + offset would wrap
  CHECK_FALSE(alloy::block_within({alloy::to_pointer(alloy::address_of(buf) - 1), 1}, buf, 100));
  CHECK_FALSE(alloy::block_within({alloy::to_pointer(alloy::address_of(buf) + 101), 0}, buf, 100));
}

// ---------------------------------------------------------------------------------------------------------------
// good_alloc_size

TEST_CASE("common: good_alloc_size rounds to the alignment, or asks the allocator") {
  Plain h;
  CHECK(alloy::good_alloc_size(h, 0) == 0);
  CHECK(alloy::good_alloc_size(h, 1) == 16);
  CHECK(alloy::good_alloc_size(h, 16) == 16);
  CHECK(alloy::good_alloc_size(h, 17) == 32);
  CHECK(alloy::good_alloc_size(h, MAX - 15) == MAX - 15);
  CHECK(alloy::good_alloc_size(h, MAX - 14) == 0);  // no request of that size can succeed
  CHECK(alloy::good_alloc_size(h, MAX) == 0);
  alloy::MmapAllocator m;  // declares its own: whole pages
  CHECK(alloy::good_alloc_size(m, 1) == 4096);
  CHECK(alloy::good_alloc_size(m, 4097) == 8192);
  CHECK(alloy::good_alloc_size(m, MAX) == 0);
  CHECK(alloy::good_alloc_size(alloy::Mallocator::instance, 100) == 112);  // a const instance works too
  static_assert(alloy::good_alloc_size(alloy::Mallocator{}, 1) == 16);     // constexpr where A allows
}

// ---------------------------------------------------------------------------------------------------------------
// owns, deallocate, copy fallbacks

TEST_CASE("common: owns, deallocate and copy fallbacks") {
  alloy::Mallocator m;
  Block b = m.allocate(8);
  CHECK(alloy::owns(m, b) == alloy::Ternary::unknown);  // Mallocator cannot tell
  CHECK(alloy::owns(m, {}) == alloy::Ternary::no);
  alloy::NoAccessAllocator dev;
  Block d = dev.allocate(8);
  CHECK(alloy::owns(dev, d) == alloy::Ternary::yes);  // forwarded
  int dummy = 0;
  CHECK(alloy::owns(dev, {&dummy, sizeof dummy}) == alloy::Ternary::no);
  CHECK(alloy::deallocate(dev, d));
  CHECK(alloy::deallocate(m, b));

  BumpArena<256> arena;
  Block x = arena.allocate(10);
  CHECK(!alloy::deallocate(arena, x));  // no deallocate: false, and the block stays where it is
  CHECK(alloy::deallocate(arena, {}));  // the empty block is always given back

  char s[] = "abcdefgh";
  CHECK(alloy::copy(m, s + 2, s, 5));  // overlapping copies are fine (memmove)
  CHECK(std::strcmp(s, "ababcdeh") == 0);
  CHECK(alloy::copy(m, nullptr, nullptr, 0));
}

// ---------------------------------------------------------------------------------------------------------------
// reallocate fallback

template <class A>
void check_reallocate_fallback(A& a) {
  static_assert(!alloy::has_reallocate<A>);
  Block b{};
  CHECK(alloy::reallocate(a, b, 0));  // empty to empty
  CHECK(!b);
  REQUIRE(alloy::reallocate(a, b, 40));  // empty: allocate
  CHECK(b.size == 40);
  alloy::test::write_pattern(a, b, 1);
  Block same = b;
  CHECK(alloy::reallocate(a, same, 40));  // same size: nothing happens
  CHECK(same == b);
  for (std::size_t n : {std::size_t{100}, std::size_t{300}, std::size_t{5000}, std::size_t{41}, std::size_t{7}}) {
    const std::size_t before = b.size;
    REQUIRE(alloy::reallocate(a, b, n));
    CHECK(b.size == n);
    CHECK(alloy::is_aligned(b.ptr, A::alignment));
    CHECK(alloy::test::check_pattern(a, b, 1, before < 40 ? before : 40));
  }
  const Block kept = b;
  CHECK_FALSE(alloy::reallocate(a, b, MAX));
  CHECK(b == kept);
  CHECK_FALSE(alloy::reallocate(a, b, MAX - 7));
  CHECK(b == kept);
  CHECK(alloy::reallocate(a, b, 0));  // frees
  CHECK(!b);
}

TEST_CASE("common: reallocate over allocate + deallocate only") {
  Plain h;
  check_reallocate_fallback(h);
  CHECK(h.live_blocks() == 0);
  CHECK(h.live_bytes() == 0);

  // A failed allocation leaves b as it was, still live and intact.
  Block b = h.allocate(16);
  std::memset(b.ptr, 0x5A, 16);
  h.fail_after(0);
  const Block before = b;
  CHECK_FALSE(alloy::reallocate(h, b, 64));
  CHECK(b == before);
  CHECK(h.is_live(b));
  CHECK(static_cast<unsigned char*>(b.ptr)[15] == 0x5A);
  h.fail_after(MAX);
  CHECK(h.deallocate(b));
  CHECK(h.live_blocks() == 0);

  // A null Block allocates, whatever its size says (found in review: a null Block whose size equalled n was
  // "already that size" and stayed null).
  Block null5{nullptr, 5};
  CHECK(alloy::reallocate(h, null5, 5));
  CHECK(null5);
  CHECK(null5.size == 5);
  CHECK(h.deallocate(null5));
  CHECK(h.live_blocks() == 0);
}

TEST_CASE("common: reallocate grows in place with expand, moves when expand fails") {
  Expanding h;
  check_reallocate_fallback(h);
  CHECK(h.live_blocks() == 0);

  const std::size_t expansions = h.expansions();
  Block b = h.allocate(10);  // capacity 256
  std::memset(b.ptr, 7, 10);
  void* const p = b.ptr;
  REQUIRE(alloy::reallocate(h, b, 200));
  CHECK(b.ptr == p);  // in place
  CHECK(h.expansions() == expansions + 1);
  REQUIRE(alloy::reallocate(h, b, 100));  // shrinking never expands: a new block
  CHECK(b.size == 100);
  CHECK(static_cast<unsigned char*>(b.ptr)[9] == 7);
  REQUIRE(alloy::reallocate(h, b, 1000));  // beyond the capacity: moves
  CHECK(b.size == 1000);
  CHECK(static_cast<unsigned char*>(b.ptr)[0] == 7);
  CHECK(h.deallocate(b));
  CHECK(h.live_blocks() == 0);
}

TEST_CASE("common: reallocate over an allocator without deallocate") {
  BumpArena<1024> arena;
  Block b = arena.allocate(8);
  std::memcpy(b.ptr, "1234567", 8);
  REQUIRE(alloy::reallocate(arena, b, 100));  // allocate + copy; the old block is not given back
  CHECK(std::strcmp(static_cast<char*>(b.ptr), "1234567") == 0);
  CHECK(arena.used() == 16 + 112);
  CHECK(alloy::reallocate(arena, b, 0));  // nothing to free with: just empties b (as D)
  CHECK(!b);
  Block c = arena.allocate(800);
  CHECK_FALSE(alloy::reallocate(arena, c, 900));  // out of memory: c unchanged
  CHECK(c.size == 800);
}

TEST_CASE("common: reallocate of device memory copies through the allocator's copy") {
  const std::size_t before = alloy::NoAccessAllocator::live_blocks();
  alloy::NoAccessAllocator dev;  // touching its memory from the host would crash this test
  check_reallocate_fallback(dev);
  CHECK(alloy::NoAccessAllocator::live_blocks() == before);
}

// ---------------------------------------------------------------------------------------------------------------
// aligned_reallocate fallback

template <class A>
void check_aligned_reallocate_fallback(A& a) {
  static_assert(!alloy::has_aligned_reallocate<A>);
  Block b{};
  CHECK(alloy::aligned_reallocate(a, b, 0, 64));
  CHECK(!b);
  REQUIRE(alloy::aligned_reallocate(a, b, 30, 64));
  CHECK(b.size == 30);
  CHECK(alloy::is_aligned(b.ptr, 64));
  alloy::test::write_pattern(a, b, 3);
  const Block kept = b;
  CHECK_FALSE(alloy::aligned_reallocate(a, b, 100, 48));  // not a power of two
  CHECK(b == kept);
  CHECK_FALSE(alloy::aligned_reallocate(a, b, MAX, 64));
  CHECK(b == kept);
  CHECK(alloy::aligned_reallocate(a, b, 30, 64));  // already right
  CHECK(b == kept);
  for (std::size_t al : {std::size_t{8192}, std::size_t{16}, std::size_t{65536}}) {
    REQUIRE(alloy::aligned_reallocate(a, b, 30 + al / 8, al));
    CHECK(b.size == 30 + al / 8);
    CHECK(alloy::is_aligned(b.ptr, al));
    CHECK(alloy::test::check_pattern(a, b, 3, 30));
  }
  CHECK(alloy::aligned_reallocate(a, b, 0, 64));
  CHECK(!b);
}

TEST_CASE("common: aligned_reallocate over aligned_allocate + deallocate only") {
  Aligned h;
  check_aligned_reallocate_fallback(h);
  CHECK(h.live_blocks() == 0);
  Block b = h.aligned_allocate(10, 128);
  h.fail_after(0);
  const Block kept = b;
  CHECK_FALSE(alloy::aligned_reallocate(h, b, 20, 128));
  CHECK(b == kept);
  CHECK(h.is_live(b));
  h.fail_after(MAX);
  CHECK(h.deallocate(b));
}

TEST_CASE("common: aligned_reallocate grows in place with expand when aligned") {
  CheckedHeap<16, caps::aligned | caps::expand> h;
  check_aligned_reallocate_fallback(h);
  Block b = h.aligned_allocate(10, 256);
  void* const p = b.ptr;
  REQUIRE(alloy::aligned_reallocate(h, b, 200, 256));
  CHECK(b.ptr == p);
  CHECK(h.expansions() == 1);
  CHECK(h.deallocate(b));
  CHECK(h.live_blocks() == 0);
}

TEST_CASE("common: aligned_reallocate of device memory copies through copy") {
  const std::size_t before = alloy::NoAccessAllocator::live_blocks();
  alloy::NoAccessAllocator dev;
  check_aligned_reallocate_fallback(dev);
  CHECK(alloy::NoAccessAllocator::live_blocks() == before);
}

// ---------------------------------------------------------------------------------------------------------------
// The test allocators themselves go through the kit (they are used to test everything else).

TEST_CASE_TEMPLATE("common: test allocators pass the conformance check", A, Plain, Expanding, Aligned,
                   CheckedHeap<64, caps::aligned | caps::expand>) {
  alloy::test::check_allocator([] { return A{}; });
}

TEST_CASE("common: BumpArena passes the conformance check") {
  alloy::test::check_allocator([] { return BumpArena<1 << 16>{}; });
}

TEST_CASE_TEMPLATE("common: test allocators, randomized", A, Plain, Expanding,
                   CheckedHeap<64, caps::aligned | caps::expand>) {
  A a;
  alloy::test::DiffOptions o;
  o.ops = 100'000;
  o.max_size = 1024;
  const auto st = alloy::test::run_differential(a, o);
  CHECK(st.failures == 0);
  CHECK(st.deallocations > 1000);
  if (alloy::has_expand<A>) CHECK(st.expansions > 100);
  CHECK(a.live_blocks() == 0);
}

// Over an allocator without reallocate the kit cannot reallocate; over Ref-like wrappers it would. Here the
// fallback is exercised at random: the kit's model is the slot contents (patterns survive each reallocate).
TEST_CASE("common: reallocate fallback, randomized with contents") {
  Expanding h;
  alloy::test::Rng rng{42};
  std::vector<Block> blocks(64);
  std::vector<unsigned char> tag(64);
  for (int i = 0; i < 50'000; ++i) {
    const std::size_t s = rng.below(blocks.size());
    Block& b = blocks[s];
    const std::size_t n = rng.below(700);
    const std::size_t keep = b.size < n ? b.size : n;
    if (!alloy::reallocate(h, b, n)) {
      FAIL_CHECK("reallocate failed");
      continue;
    }
    REQUIRE(b.size == n);
    for (std::size_t k = 0; k < keep; ++k)
      if (static_cast<unsigned char*>(b.ptr)[k] != tag[s]) {
        FAIL_CHECK("contents lost at op " << i);
        break;
      }
    tag[s] = static_cast<unsigned char>(rng.next());
    if (n) std::memset(b.ptr, tag[s], n);
  }
  for (Block& b : blocks) CHECK(alloy::reallocate(h, b, 0));
  CHECK(h.live_blocks() == 0);
  CHECK(h.expansions() > 1000);
}

// ---------------------------------------------------------------------------------------------------------------
// Gaps found by a mutation sweep.

// round_up_object_size at its edge: PTRDIFF_MAX bytes is a size an object can have, one more is not.
static_assert(alloy::round_up_object_size(PTRDIFF_MAX, 1) == PTRDIFF_MAX);
static_assert(alloy::round_up_object_size(std::size_t{PTRDIFF_MAX} + 1, 1) == 0);
static_assert(alloy::round_up_object_size(std::size_t{PTRDIFF_MAX} - 4095, 4096) == std::size_t{PTRDIFF_MAX} - 4095);
static_assert(alloy::round_up_object_size(std::size_t{PTRDIFF_MAX} - 4094, 4096) == 0);
static_assert(alloy::round_up_object_size(MAX, 4096) == 0 && alloy::round_up_object_size(1, 4096) == 4096);

TEST_CASE("common: reallocate of an empty Block fails when the allocation fails") {
  Plain h;
  h.fail_after(0);
  Block b{};
  CHECK_FALSE(alloy::reallocate(h, b, 40));
  CHECK(!b);
  h.fail_after(MAX);
  alloy::Region<alloy::Mallocator> r(256);  // no reallocate of its own
  static_assert(!alloy::has_reallocate<alloy::Region<alloy::Mallocator>>);
  Block c{};
  CHECK_FALSE(alloy::reallocate(r, c, 1000));
  CHECK(!c);
}

// A heap whose copy fails (a device copy that reports an error, say).
struct FailingCopyHeap : CheckedHeap<16, caps::aligned> {
  bool copy(void*, const void*, std::size_t, alloy::stream_view) noexcept { return false; }
};
static_assert(alloy::has_copy<FailingCopyHeap> && !alloy::has_reallocate<FailingCopyHeap> &&
              !alloy::has_aligned_reallocate<FailingCopyHeap>);

TEST_CASE("common: when the copy fails, reallocate and aligned_reallocate give the new block back") {
  FailingCopyHeap h;
  Block b = h.allocate(16);
  REQUIRE(b);
  const Block kept = b;
  CHECK_FALSE(alloy::reallocate(h, b, 64));
  CHECK(b == kept);
  CHECK(h.live_blocks() == 1);
  CHECK_FALSE(alloy::aligned_reallocate(h, b, 64, 256));
  CHECK(b == kept);
  CHECK(h.live_blocks() == 1);
  CHECK(h.deallocate(b));
  CHECK(h.live_blocks() == 0);
}

TEST_CASE("common: aligned_reallocate to the same size moves a block that lacks the alignment") {
  Aligned h;
  Block b = h.aligned_allocate(30, 16);
  REQUIRE(b);
  std::memset(b.ptr, 0x3C, 30);
  const std::uintptr_t addr = alloy::address_of(b.ptr);
  const std::size_t al = 2 * (addr & (~addr + 1));  // twice b's own alignment: b is not aligned to it
  REQUIRE(alloy::aligned_reallocate(h, b, 30, al));
  CHECK(b.size == 30);
  CHECK(alloy::is_aligned(b.ptr, al));
  CHECK(static_cast<unsigned char*>(b.ptr)[29] == 0x3C);
  CHECK(h.deallocate(b));
  CHECK(h.live_blocks() == 0);
}

TEST_CASE("common: aligned_reallocate to 0 fails, b unchanged, when the allocator keeps the block") {
  alloy::Region<alloy::Mallocator> r(4096);  // gives back only its last block; no aligned_reallocate of its own
  static_assert(!alloy::has_aligned_reallocate<alloy::Region<alloy::Mallocator>>);
  Block x = r.aligned_allocate(100, 64);
  const Block y = r.allocate(100);
  REQUIRE(x);
  REQUIRE(y);
  const Block kept = x;
  CHECK_FALSE(alloy::aligned_reallocate(r, x, 0, 64));
  CHECK(x == kept);
  CHECK_FALSE(alloy::reallocate(r, x, 0));
  CHECK(x == kept);
  CHECK(r.deallocate(y));
  CHECK(alloy::aligned_reallocate(r, x, 0, 64));
  CHECK(!x);
}
