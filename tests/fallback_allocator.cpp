// ctest-labels: heavy
#include <alloy/fallback_allocator.hpp>

#include <alloy/aligned_mallocator.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/null_allocator.hpp>
#include <alloy/region.hpp>

#include <span>

#include <doctest/doctest.h>

#include "support/bitmapped_block_model.hpp"
#include "support/bump_model.hpp"
#include "support/combinator_support.hpp"
#include "support/conformance.hpp"
#include "support/differential.hpp"

using alloy::Block;
using alloy::FallbackAllocator;
using alloy::Ternary;
using BB = alloy::BitmappedBlock<64, 16>;                           // over a span
using BBM = alloy::BitmappedBlock<64, 16, alloy::Mallocator>;
using BB2 = alloy::BitmappedBlock<32, 16>;                          // over a span
using Reg = alloy::Region<>;                                        // over a span
using RegM = alloy::Region<alloy::Mallocator>;
using RegD = alloy::Region<alloy::NoAccessAllocator>;

// Capabilities and their iff rules (D's): routing needs Primary::owns; owns, empty, deallocate_all need both parts.
using FM = FallbackAllocator<BBM, alloy::Mallocator>;
static_assert(alloy::has_deallocate<FM> && alloy::has_expand<FM> && alloy::has_reallocate<FM> &&
              alloy::has_aligned_allocate<FM> && alloy::has_aligned_reallocate<FM> && alloy::has_good_alloc_size<FM>);
static_assert(!alloy::has_owns<FM> && !alloy::has_empty<FM> && !alloy::has_deallocate_all<FM> &&
              !alloy::has_resolve_internal_pointer<FM> && !alloy::has_copy<FM> && !alloy::has_allocate_all<FM>);
using FR = FallbackAllocator<BB, BB2>;
static_assert(alloy::has_owns<FR> && alloy::has_empty<FR> && alloy::has_deallocate_all<FR> && alloy::has_expand<FR>);
// No owns on the primary: nothing can be routed back, so only allocate (and what needs no routing).
using FMM = FallbackAllocator<alloy::Mallocator, alloy::AlignedMallocator>;
static_assert(alloy::allocator<FMM> && !alloy::has_deallocate<FMM> && !alloy::has_expand<FMM> &&
              !alloy::has_reallocate<FMM> && alloy::has_aligned_allocate<FMM>);
static_assert(FMM::alignment == std::min(alloy::Mallocator::alignment, alloy::AlignedMallocator::alignment));
// Device memory: copy comes from the parts, and with it reallocate.
using FD = FallbackAllocator<RegD, alloy::NoAccessAllocator>;
static_assert(FD::memory_space == alloy::MemorySpace::device && !alloy::host_accessible<FD>);
static_assert(alloy::has_copy<FD> && alloy::has_reallocate<FD> && alloy::has_owns<FD> && alloy::has_deallocate<FD>);
// NullAllocator fits any memory space.
static_assert(FallbackAllocator<alloy::NullAllocator, alloy::NoAccessAllocator>::memory_space == alloy::MemorySpace::device);
// Stream-ordered iff a part is (and blocks can be routed back).
using FS = FallbackAllocator<BB, alloy::test::StreamHeap<>>;
static_assert(alloy::has_stream_ordered<FS> && !alloy::has_stream_ordered<FR>);
// Stateless parts cost (almost) nothing: [[no_unique_address]] of two distinct empty types.
static_assert(sizeof(FMM) == 1);

template <class P, std::size_t A, alloy::GrowDownwards D, class F>
inline constexpr bool alloy::test::deallocates_last_only<FallbackAllocator<alloy::Region<P, A, D>, F>> = true;

alignas(4096) static std::byte g_a[1 << 15];
alignas(4096) static std::byte g_b[1 << 15];

TEST_CASE("FallbackAllocator: conformance") {
  alloy::test::check_allocator([] { return FM(BBM(64 * 64)); });
  alloy::test::check_allocator([] { return FR(BB(std::span<std::byte>(g_a, 8192)), BB2(std::span<std::byte>(g_b))); });
  alloy::test::check_allocator([] { return FallbackAllocator<Reg, BB2>(Reg(std::span<std::byte>(g_a, 4096)),
                                                                       BB2(std::span<std::byte>(g_b))); });
  alloy::test::check_allocator([] { return FallbackAllocator<BBM, alloy::AlignedMallocator>(BBM(64 * 64)); });
  // (a Region primary over a heap: the kit gives back only the last aligned block where a block is taken back only
  // if it is the last, which would leak the heap's; Region primaries are checked over spans and NullAllocator)
  alloy::test::check_allocator([] { return FallbackAllocator<alloy::NullAllocator, alloy::Mallocator>(); });
  alloy::test::check_allocator([] { return FallbackAllocator<RegM, alloy::NullAllocator>(RegM(4096)); });
  alloy::test::check_allocator([] { return FallbackAllocator<RegM, alloy::NullAllocator>(RegM(0)); });  // serves nothing
  alloy::test::check_allocator([] { return FS(BB(std::span<std::byte>(g_a, 8192))); });
}

TEST_CASE("FallbackAllocator: over device memory (NoAccessAllocator) it never touches the memory") {
  const std::size_t before = alloy::NoAccessAllocator::live_blocks();
  {
    // (a BitmappedBlock primary: the kit and the differential without a model want every deallocate to succeed)
    using BBD = alloy::BitmappedBlock<256, 64, alloy::NoAccessAllocator>;
    alloy::test::check_allocator([] { return FallbackAllocator<BBD, alloy::NoAccessAllocator>(BBD(256 * 64)); });
    FallbackAllocator<BBD, alloy::NoAccessAllocator> a(BBD(256 * 64));
    alloy::test::DiffOptions o;
    o.ops = 20'000;
    o.slots = 48;
    o.max_size = 3000;
    o.deallocate_all = false;
    const auto st = alloy::test::run_differential(a, o);  // contents through copy only
    CHECK(st.allocations > 5'000);
    CHECK(st.reallocations > 500);
  }
  {
    FD a(RegD(1 << 14));
    Block b = a.allocate(100);
    CHECK(a.primary().owns(b) == Ternary::yes);
    CHECK(a.reallocate(b, 20'000));  // does not fit the region: moved to the parent's pages through copy
    CHECK(a.primary().owns(b) == Ternary::no);
    CHECK(a.deallocate(b));
  }
  CHECK(alloy::NoAccessAllocator::live_blocks() == before);
}

// The model: a BitmapModel for each part, over the same addresses, routed as D routes (primary.owns == yes), with
// D's cross-part move. (Regions as parts leak what a move leaves behind until deallocate_all, as D's do, which the
// differential's final emptiness check cannot tell from a leak: they are covered by the conformance kit and the
// unit cases.)
struct FallbackModel {
  alloy::test::BitmapModel p;
  alloy::test::BitmapModel f;
  Block allocate(std::size_t n) {
    if (Block b = p.allocate(n)) return b;
    return f.allocate(n);
  }
  Block aligned_allocate(std::size_t n, std::size_t a) {
    if (Block b = p.aligned_allocate(n, a)) return b;
    return f.aligned_allocate(n, a);
  }
  bool in_p(Block b) const { return p.owns(b) == Ternary::yes; }
  bool deallocate(Block b) {
    if (!b) return true;
    return in_p(b) ? p.deallocate(b) : f.deallocate(b);
  }
  bool expand(Block& b, std::size_t d) {
    if (d == 0) return true;
    if (!b) return false;
    return in_p(b) ? p.expand(b, d) : f.expand(b, d);
  }
  template <class From, class To>
  static bool move(From& from, To& to, Block& b, std::size_t n) {
    const Block nb = to.allocate(n);
    if (!nb) return false;
    from.deallocate(b);
    b = nb;
    return true;
  }
  bool reallocate(Block& b, std::size_t n) {
    if (!b) {
      if (n == 0) return true;
      const Block nb = allocate(n);
      if (!nb) return false;
      b = nb;
      return true;
    }
    if (n == 0) {
      if (!deallocate(b)) return false;
      b = {};
      return true;
    }
    if (b.size == n) return true;
    if (in_p(b)) return p.reallocate(b, n) || move(p, f, b, n);
    return f.reallocate(b, n) || move(f, p, b, n);
  }
  Ternary owns(Block b) const { return p.owns(b) | f.owns(b); }
  Ternary empty() const { return p.empty() & f.empty(); }
  bool deallocate_all() {
    p.deallocate_all();
    return f.deallocate_all();
  }
};

TEST_CASE("FallbackAllocator: 10^6 random operations against a model (two BitmappedBlocks)") {
  FR a(BB(std::span<std::byte>(g_a, 64 * 130)), BB2(std::span<std::byte>(g_b, 32 * 200)));
  FallbackModel m{alloy::test::BitmapModel(a.primary().payload(), 64, a.primary().block_count(), 16, true),
                  alloy::test::BitmapModel(a.fallback().payload(), 32, a.fallback().block_count(), 16, true)};
  REQUIRE(a.primary().block_count() >= 120);
  alloy::test::DiffOptions o;
  o.seed = 0xFA11BAC4;
  o.ops = 1'000'000;
  o.slots = 64;
  o.max_size = 700;
  o.max_alignment = 256;
  o.aligned_reallocate = false;  // the model restates reallocate only (aligned_reallocate: the run below)
  o.deallocate_all_every = 3'000;
  const auto st = alloy::test::run_differential(a, m, o);
  CHECK(st.ops == 1'000'000);
  CHECK(st.allocations > 200'000);
  CHECK(st.failures > 1'000);         // both parts fill up between rewinds
  CHECK(st.reallocations > 50'000);
  CHECK(st.failed_reallocations > 100);
  CHECK(st.expansions > 10'000);
  CHECK(st.deallocate_alls > 100);
  MESSAGE(st.allocations << " allocations, " << st.failures << " failures, " << st.reallocations << " reallocations");
}

TEST_CASE("FallbackAllocator: random operations with aligned_reallocate, invariants only") {
  FallbackAllocator<BBM, alloy::AlignedMallocator> a(BBM(64 * 64));
  alloy::test::DiffOptions o;
  o.seed = 77;
  o.ops = 200'000;
  o.slots = 64;
  o.max_size = 900;
  const auto st = alloy::test::run_differential(a, o);
  CHECK(st.reallocations > 10'000);
}

TEST_CASE("FallbackAllocator: routing, D's unittest, and the parts' failures") {
  SUBCASE("D: a region on the stack backed by the heap") {
    FallbackAllocator<alloy::InSituRegion<16384>, alloy::Mallocator> a;
    Block b1 = a.allocate(1024);
    CHECK(b1.size == 1024);
    CHECK(a.primary().owns(b1) == Ternary::yes);
    Block b2 = a.allocate(1024 * 1024);
    CHECK(a.primary().owns(b2) == Ternary::no);
    CHECK(a.deallocate(b2));
    CHECK(a.deallocate(b1));
    CHECK(a.primary().empty() == Ternary::yes);
  }
  SUBCASE("expand goes to the owner; a part without expand says no") {
    FallbackAllocator<RegM, alloy::Mallocator> a(RegM(256));
    Block r = a.allocate(100);
    CHECK(a.expand(r, 50));
    CHECK(r.size == 150);
    Block m = a.allocate(500);
    CHECK(a.primary().owns(m) == Ternary::no);
    const Block m0 = m;
    CHECK(!a.expand(m, 1));  // Mallocator has no expand
    CHECK(m == m0);
    CHECK(a.expand(m, 0));
    Block z{};
    CHECK(!a.expand(z, 1));
    CHECK(a.deallocate(m));
    CHECK(a.deallocate(r));
  }
  SUBCASE("reallocate moves from the fallback back into the primary when the fallback refuses") {
    FallbackAllocator<RegM, RegM> a(RegM(1024), RegM(64));
    Block b = a.allocate(2000);
    CHECK(!b);
    Block x = a.allocate(1000);   // primary
    Block y = a.allocate(40);     // fallback: the primary has 16 bytes left
    REQUIRE(x);
    REQUIRE(y);
    CHECK(a.fallback().owns(y) == Ternary::yes);
    CHECK(a.deallocate(x));
    CHECK(a.reallocate(y, 500));  // the fallback (64 bytes) cannot: into the primary
    CHECK(a.primary().owns(y) == Ternary::yes);
    CHECK(a.fallback().empty() == Ternary::yes);
    CHECK(a.empty() == Ternary::no);
    CHECK(a.reallocate(y, 0));
    CHECK(!y);
    CHECK(a.empty() == Ternary::yes);
  }
  SUBCASE("without Primary::owns nothing is routed back: allocate and aligned_allocate only") {
    FMM a;  // (not run through the kit: it cannot give its blocks back, so the kit would leak them)
    Block b = a.allocate(10);
    Block c = a.aligned_allocate(10, 16);    // Mallocator serves alignments up to its own through allocate
    Block d = a.aligned_allocate(10, 4096);  // only AlignedMallocator can
    CHECK(b.size == 10);
    CHECK(alloy::is_aligned(c.ptr, 16));
    CHECK(alloy::is_aligned(d.ptr, 4096));
    CHECK(alloy::Mallocator::instance.deallocate(b));
    CHECK(alloy::Mallocator::instance.deallocate(c));
    CHECK(alloy::AlignedMallocator::instance.deallocate(d));
  }
  SUBCASE("good_alloc_size is the primary's hint, rounded as the invariant asks") {
    FallbackAllocator<BBM, alloy::Mallocator> a(BBM(64 * 4));
    CHECK(a.good_alloc_size(1) == 64);
    CHECK(a.good_alloc_size(1000) == 1024);  // beyond the primary's capacity: still its rounding
    CHECK(a.good_alloc_size(SIZE_MAX) == 0);
  }
}

TEST_CASE("FallbackAllocator: stream-ordered calls reach the part that serves") {
  using H = alloy::test::StreamHeap<>;
  FS a(BB(std::span<std::byte>(g_a, 64 * 4)));
  const std::size_t s0 = H::stream_allocs, f0 = H::stream_frees;
  Block small = a.allocate(alloy::stream_view{}, 64);  // the bitmapped block (no stream primitives)
  CHECK(a.primary().owns(small) == Ternary::yes);
  CHECK(H::stream_allocs == s0);                       // the primary served it: the heap was not asked
  Block big = a.allocate(alloy::stream_view{}, 1000);  // the primary refuses: the heap's stream-ordered allocate
  CHECK(H::stream_allocs == s0 + 1);
  CHECK(a.deallocate(alloy::stream_view{}, big));
  CHECK(H::stream_frees == f0 + 1);
  CHECK(a.deallocate(alloy::stream_view{}, small));
  CHECK(H::stream_frees == f0 + 1);
  CHECK(a.deallocate(alloy::stream_view{}, Block{}));
}
