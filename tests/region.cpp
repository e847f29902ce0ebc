#include <alloy/region.hpp>

#include <alloy/aligned_mallocator.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/ref.hpp>

#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "support/conformance.hpp"
#include "support/bump_model.hpp"
#include "support/differential.hpp"

using alloy::Block;
using alloy::Ternary;

template <class P = alloy::NullAllocator, std::size_t A = alloy::platform_alignment, alloy::GrowDownwards D = alloy::GrowDownwards::no>
using R = alloy::Region<P, A, D>;

// Capabilities, with their iff rules.
static_assert(alloy::allocator<R<>> && R<>::alignment == 16);
static_assert(alloy::has_aligned_allocate<R<>> && alloy::has_allocate_all<R<>> && alloy::has_deallocate<R<>> &&
              alloy::has_deallocate_all<R<>> && alloy::has_owns<R<>> && alloy::has_empty<R<>> &&
              alloy::has_good_alloc_size<R<>>);
static_assert(alloy::has_expand<R<>> && !alloy::has_expand<R<alloy::NullAllocator, 16, alloy::GrowDownwards::yes>>);
static_assert(!alloy::has_reallocate<R<>> && !alloy::has_resolve_internal_pointer<R<>>);
static_assert(!alloy::has_copy<R<>> && !alloy::has_copy<R<alloy::Mallocator>> && alloy::has_copy<R<alloy::NoAccessAllocator>>);
static_assert(R<alloy::NoAccessAllocator>::memory_space == alloy::MemorySpace::device);
static_assert(R<alloy::Mallocator>::memory_space == alloy::MemorySpace::host && R<>::memory_space == alloy::MemorySpace::host);
// Copyable over a span; move-only when it may own memory.
static_assert(std::is_copy_constructible_v<R<>> && std::is_copy_assignable_v<R<>>);
static_assert(!std::is_copy_constructible_v<R<alloy::Mallocator>> && std::is_nothrow_move_constructible_v<R<alloy::Mallocator>>);
static_assert(!std::is_copy_assignable_v<R<alloy::Mallocator>> && std::is_nothrow_move_assignable_v<R<alloy::Mallocator>>);
// State: three pointers (and the ownership flag when the parent can own).
static_assert(sizeof(R<>) == 3 * sizeof(void*));
static_assert(sizeof(R<alloy::Mallocator>) == 4 * sizeof(void*));
// A parent with a small alignment and aligned_allocate serves a larger MinAlign.
static_assert(std::is_constructible_v<R<alloy::AlignedMallocator, 4096>, std::size_t>);
// Not default-constructible parent: only (parent, n).
static_assert(!std::is_constructible_v<R<alloy::Ref<alloy::Mallocator>>, std::size_t>);
static_assert(std::is_constructible_v<R<alloy::Ref<alloy::Mallocator>>, alloy::Ref<alloy::Mallocator>, std::size_t>);

alignas(4096) static std::byte g_buf[1 << 16];

TEST_CASE_TEMPLATE("Region: conformance, owning", A, R<alloy::Mallocator>, R<alloy::Mallocator, 16, alloy::GrowDownwards::yes>,
                   R<alloy::Mallocator, 8>, R<alloy::Mallocator, 1>, R<alloy::Mallocator, 1, alloy::GrowDownwards::yes>,
                   R<alloy::AlignedMallocator, 64>, R<alloy::AlignedMallocator, 4096, alloy::GrowDownwards::yes>, R<alloy::NoAccessAllocator>,
                   R<alloy::NoAccessAllocator, 16, alloy::GrowDownwards::yes>, R<alloy::NoAccessAllocator, 8192>) {
  alloy::test::check_allocator([] { return A(1 << 16); });
}

TEST_CASE_TEMPLATE("Region: conformance, over a span", A, R<>, R<alloy::NullAllocator, 16, alloy::GrowDownwards::yes>,
                   R<alloy::NullAllocator, 1>, R<alloy::NullAllocator, 64, alloy::GrowDownwards::yes>, R<alloy::Mallocator>) {
  alloy::test::check_allocator([] { return A(std::span<std::byte>(g_buf)); });
}

TEST_CASE("Region: conformance of regions that cannot serve anything") {
  alloy::test::check_allocator([] { return R<>(); });
  alloy::test::check_allocator([] { return R<alloy::Mallocator>(0); });
  alloy::test::check_allocator([] { return R<alloy::Mallocator>(SIZE_MAX); });  // rounding overflows: no memory
  alloy::test::check_allocator([] { return R<>(std::span<std::byte>(g_buf + 1, 14)); });  // no aligned byte
}

template <class A>
void differential(A& a, std::size_t ops, std::uint64_t seed, std::size_t max_size = 600) {
  constexpr std::size_t min_align = A::alignment;
  alloy::test::BumpModel<min_align, A::grows_downwards> model(a.data(), a.capacity());
  alloy::test::DiffOptions o;
  o.seed = seed;
  o.ops = ops;
  o.max_size = max_size;
  o.slots = 64;
  o.deallocate_all_every = 400;
  const auto st = alloy::test::run_differential(a, model, o);
  CHECK(st.allocations > ops / 15);
  CHECK(st.failures > 0);               // the region fills up between rewinds
  CHECK(st.deallocations > 100);        // the last block is sometimes the one picked
  CHECK(st.refused_deallocations > 100);
  CHECK(st.deallocate_alls > 10);
  if constexpr (alloy::has_expand<A>) CHECK(st.expansions > 100);
  MESSAGE(A::alignment << std::string(A::grows_downwards ? " down" : " up") << ": " << st.allocations << " allocations, "
                       << st.failures << " failures, " << st.deallocations << " deallocations");
}

TEST_CASE_TEMPLATE("Region: randomized against a bump pointer over the same addresses", A, R<alloy::Mallocator>,
                   R<alloy::Mallocator, 16, alloy::GrowDownwards::yes>, R<alloy::Mallocator, 1>, R<alloy::Mallocator, 1, alloy::GrowDownwards::yes>,
                   R<alloy::AlignedMallocator, 64>, R<alloy::AlignedMallocator, 256, alloy::GrowDownwards::yes>) {
  A a(24 * 1024);
  differential(a, 150'000, 0x5EED0001 + A::alignment + A::grows_downwards);
}

TEST_CASE("Region: randomized over a span with an unaligned start and end") {
  R<> a(std::span<std::byte>(g_buf + 3, 20'000));
  CHECK(static_cast<std::byte*>(a.data()) == g_buf + 16);
  CHECK(a.capacity() == 20'000 - 16);  // [16, 20000) within [3, 20003)
  differential(a, 100'000, 7);
  R<alloy::NullAllocator, 32, alloy::GrowDownwards::yes> d(std::span<std::byte>(g_buf + 5, 30'000));
  CHECK(d.capacity() == 29'984 - 32);  // [32, 29984) within [5, 30005)
  differential(d, 100'000, 8);
}

TEST_CASE("Region: over NoAccessAllocator it never touches its memory (device-like parent)") {
  const std::size_t before = alloy::NoAccessAllocator::live_blocks();
  {
    R<alloy::NoAccessAllocator> a(64 * 1024);
    CHECK(alloy::NoAccessAllocator::live_blocks() == before + 1);
    differential(a, 100'000, 11, 2000);  // contents checked through copy only
    R<alloy::NoAccessAllocator, 16, alloy::GrowDownwards::yes> d(64 * 1024);
    differential(d, 50'000, 12, 2000);
  }
  CHECK(alloy::NoAccessAllocator::live_blocks() == before);  // the destructor gave the memory back
}

TEST_CASE("Region: D's unittests") {
  SUBCASE("expand the last allocation") {
    R<alloy::Mallocator> reg(1024 * 64);
    Block b = reg.allocate(101);
    CHECK(b.size == 101);
    CHECK(reg.expand(b, 20));
    CHECK(reg.expand(b, 73));
    CHECK(b.size == 194);
    CHECK(!reg.expand(b, 1024 * 64));
    CHECK(b.size == 194);
    CHECK(reg.deallocate_all());
  }
  SUBCASE("grow downwards: allocate 101 and 42, give back 42") {
    R<alloy::Mallocator, alloy::Mallocator::alignment, alloy::GrowDownwards::yes> reg(1024 * 64);
    CHECK(reg.empty() == Ternary::yes);
    const Block b = reg.allocate(101);
    CHECK(b.size == 101);
    CHECK(reg.owns(b) == Ternary::yes);
    const Block c = reg.allocate(42);
    CHECK(c.size == 42);
    CHECK(reg.deallocate(c));
    CHECK(reg.empty() == Ternary::no);
  }
  SUBCASE("grow downwards, 64-byte buffer, 32-aligned request takes it all") {
    alloy::AlignedMallocator am;
    Block buf = am.aligned_allocate(64, 64);
    R<alloy::NullAllocator, 64, alloy::GrowDownwards::yes> reg(std::span<std::byte>(static_cast<std::byte*>(buf.ptr), 64));
    CHECK(reg.aligned_allocate(10, 32).size == 10);
    CHECK(reg.available() == 0);
    am.deallocate(buf);
  }
}

TEST_CASE("Region: exact offsets (checked against D's Region with ldc2)") {
  std::byte* const buf = g_buf;  // 4096-aligned, as the buffer of the D program
  R<> r{std::span<std::byte>(buf, 1024)};
  auto off = [&](Block b) { return static_cast<std::byte*>(b.ptr) - buf; };
  CHECK(off(r.allocate(1)) == 0);
  CHECK(off(r.allocate(17)) == 16);
  CHECK(off(r.aligned_allocate(5, 64)) == 64);
  CHECK(off(r.allocate(3)) == 80);
  CHECK(off(r.aligned_allocate(1, 256)) == 256);
  CHECK(r.available() == 1024 - 272);
  R<alloy::NullAllocator, 16, alloy::GrowDownwards::yes> d{std::span<std::byte>(buf, 1024)};
  CHECK(off(d.allocate(1)) == 1008);
  CHECK(off(d.allocate(17)) == 976);
  CHECK(off(d.aligned_allocate(5, 64)) == 960);
  CHECK(off(d.allocate(3)) == 944);
  CHECK(off(d.aligned_allocate(1, 256)) == 768);
  CHECK(d.available() == 768);
}

TEST_CASE("Region: edge cases") {
  alignas(16) std::byte buf[256];
  R<> r{std::span<std::byte>(buf)};
  SUBCASE("size 0, overflow, exhaustion") {
    CHECK(!r.allocate(0));
    CHECK(!r.aligned_allocate(0, 64));
    CHECK(!r.allocate(SIZE_MAX));
    CHECK(!r.allocate(SIZE_MAX - 14));
    CHECK(!r.aligned_allocate(SIZE_MAX - 14, 32));
    CHECK(!r.aligned_allocate(16, SIZE_MAX / 2 + 1));  // aligning the pointer overflows
    CHECK(!r.aligned_allocate(16, 3));                 // not a power of two
    CHECK(r.good_alloc_size(SIZE_MAX) == 0);
    CHECK(r.good_alloc_size(17) == 32);
    // above the capacity too: the hint rounds (D's rule, primitives.md); allocate says whether it fits
    CHECK(r.good_alloc_size(256) == 256);
    CHECK(r.good_alloc_size(257) == 272);
    CHECK(!r.allocate(257));
    CHECK(R<>{}.good_alloc_size(1) == 16);  // no memory at all: still the rounding
    CHECK(!R<>{}.allocate(1));
    CHECK(r.allocate(256));
    CHECK(!r.allocate(1));
    CHECK(!r.allocate_all());
  }
  SUBCASE("deallocate: the last block only; the null block is true") {
    const Block a = r.allocate(10), b = r.allocate(10);
    CHECK(r.deallocate({}));
    CHECK(!r.deallocate(a));
    CHECK(r.deallocate(b));
    CHECK(r.deallocate(a));  // now a is the last
    CHECK(r.empty() == Ternary::yes);
  }
  SUBCASE("expand: only the last block, not past the end, by 0 always") {
    Block a = r.allocate(10), b = r.allocate(10);
    const Block a0 = a;
    CHECK(!r.expand(a, 1));
    CHECK(a == a0);
    CHECK(r.expand(a, 0));
    CHECK(r.expand(b, 6));  // within its 16 bytes: no movement
    CHECK(r.available() == 256 - 32);
    CHECK(r.expand(b, 1));
    CHECK(r.available() == 256 - 48);
    CHECK(!r.expand(b, 224));  // b starts at 16: 17 + 224 rounds to 256 bytes, past the end
    CHECK(r.expand(b, 223));
    CHECK(b.size == 240);
    CHECK(r.available() == 0);
    Block z{};
    CHECK(!r.expand(z, 1));
    CHECK(r.deallocate(b));
    CHECK(r.available() == 256 - 16);
  }
  SUBCASE("allocate_all after some allocations takes the rest; deallocating it restores") {
    r.allocate(20);
    const Block all = r.allocate_all();
    CHECK(all.size == 224);
    CHECK(r.owns(all) == Ternary::yes);
    CHECK(r.deallocate(all));
    CHECK(r.available() == 224);
  }
  SUBCASE("owns: the region's memory, nothing else") {
    CHECK(r.owns({buf, 256}) == Ternary::yes);
    CHECK(r.owns({buf + 1, 255}) == Ternary::yes);
    CHECK(r.owns({buf + 1, 256}) == Ternary::no);
    CHECK(r.owns({buf + 256, 1}) == Ternary::no);
    CHECK(r.owns({}) == Ternary::no);
  }
  SUBCASE("a copy hands out the same memory") {
    R<> c = r;
    CHECK(c.allocate(16).ptr == r.allocate(16).ptr);
  }
}

TEST_CASE("Region: owning: size rounded up, parent refusal, move, destructor") {
  const std::size_t before = alloy::NoAccessAllocator::live_blocks();
  R<alloy::NoAccessAllocator> a(1000);
  CHECK(a.capacity() == 1008);  // rounded up to MinAlign, not to the parent's pages
  CHECK(alloy::NoAccessAllocator::live_blocks() == before + 1);
  R<alloy::NoAccessAllocator> b(std::move(a));
  CHECK(a.capacity() == 0);  // NOLINT(bugprone-use-after-move): moved-from is an empty region
  CHECK(!a.allocate(1));
  CHECK(b.capacity() == 1008);
  CHECK(b.allocate(1008));
  R<alloy::NoAccessAllocator> c(16);
  CHECK(alloy::NoAccessAllocator::live_blocks() == before + 2);
  c = std::move(b);  // c's old memory is given back
  CHECK(alloy::NoAccessAllocator::live_blocks() == before + 1);
  CHECK(c.capacity() == 1008);
  CHECK(!c.allocate(1));
  {
    R<alloy::NoAccessAllocator> d(0);  // the parent has nothing to give: an empty region
    CHECK(d.capacity() == 0);
    CHECK(!d.allocate(1));
    CHECK(d.empty() == Ternary::yes);
  }
  c = R<alloy::NoAccessAllocator>();
  CHECK(alloy::NoAccessAllocator::live_blocks() == before);
}

TEST_CASE("Region: a stateful parent shared through Ref, and a span borrowed by an owning-capable Region") {
  R<> outer{std::span<std::byte>(g_buf)};
  {
    R<alloy::Ref<R<>>> inner(alloy::Ref<R<>>(outer), 100);
    CHECK(inner.capacity() == 112);
    CHECK(outer.available() == sizeof g_buf - 112);
    CHECK(inner.allocate(112));
  }
  CHECK(outer.empty() == Ternary::yes);  // the destructor gave the chunk back to the parent
  {
    R<alloy::Mallocator> borrowed{std::span<std::byte>(g_buf)};  // borrowed: never passed to free
    CHECK(borrowed.allocate(100));
  }
}

// Found by a mutation sweep of region.hpp.
TEST_CASE("Region: good_alloc_size depends on the capacity, not on what is left") {
  alignas(16) std::byte buf[256];
  R<> r{std::span<std::byte>(buf)};
  R<alloy::NullAllocator, 16, alloy::GrowDownwards::yes> d{std::span<std::byte>(buf)};
  REQUIRE(r.allocate(200));
  REQUIRE(d.allocate(200));
  // only 48 bytes are left, but a request of 256 succeeds after deallocate_all: not 0
  CHECK(r.good_alloc_size(256) == 256);
  CHECK(d.good_alloc_size(256) == 256);
  CHECK(r.good_alloc_size(100) == 112);
  CHECK(r.good_alloc_size(257) == 272);  // beyond the capacity: still the rounding, never 0
}

TEST_CASE("Region: a span whose aligned interior is empty gives a region without memory (null data)") {
  // [g_buf + 1, g_buf + 16): the aligned start and the aligned end are the same address, g_buf + 16
  R<> r{std::span<std::byte>(g_buf + 1, 15)};
  CHECK(r.data() == nullptr);
  CHECK(r.capacity() == 0);
  CHECK(!r.allocate(1));
  R<alloy::NullAllocator, 16, alloy::GrowDownwards::yes> d{std::span<std::byte>(g_buf + 1, 15)};
  CHECK(d.data() == nullptr);
  CHECK(d.capacity() == 0);
}

namespace {
// A parent that breaks the size contract: it hands out 16 bytes more than asked for.
struct OverGivingParent {
  static constexpr std::size_t alignment = 16;
  static inline int live = 0;
  alloy::Block allocate(std::size_t n) noexcept {
    alloy::Block b = alloy::Mallocator{}.allocate(n + 16);
    if (b) ++live;
    return b;
  }
  bool deallocate(alloy::Block b) noexcept {
    --live;
    return alloy::Mallocator{}.deallocate(b);
  }
};
}  // namespace

TEST_CASE("Region: a chunk of a size other than asked for is refused and given back") {
  {
    R<OverGivingParent> r(100);
    CHECK(r.capacity() == 0);  // not 128: the chunk is treated as a refusal
    CHECK(!r.allocate(1));
    CHECK(OverGivingParent::live == 0);
  }
  CHECK(OverGivingParent::live == 0);
}
