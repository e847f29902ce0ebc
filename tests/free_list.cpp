// ctest-labels: heavy
#include <alloy/free_list.hpp>

#include <alloy/mallocator.hpp>
#include <alloy/mmap_allocator.hpp>
#include <alloy/region.hpp>

#include <span>
#include <vector>

#include <doctest/doctest.h>

#include "support/conformance.hpp"
#include "support/differential.hpp"
#include "support/free_list_model.hpp"
#include "support/test_allocators.hpp"

using alloy::Adaptive;
using alloy::Block;
using alloy::choose_at_runtime;
using alloy::FreeList;
using alloy::Mallocator;
using alloy::Ternary;
using alloy::unbounded;
using Heap = alloy::test::CheckedHeap<16>;
using ExpandHeap = alloy::test::CheckedHeap<16, alloy::test::caps::expand>;
using Arena = alloy::Region<Mallocator>;

// Capabilities, with their iff rules.
static_assert(alloy::has_deallocate<FreeList<Mallocator, 64>> && alloy::has_good_alloc_size<FreeList<Mallocator, 64>>);
static_assert(!alloy::has_owns<FreeList<Mallocator, 64>> && !alloy::has_expand<FreeList<Mallocator, 64>>);
static_assert(alloy::has_reallocate<FreeList<Mallocator, 64>> && !alloy::has_deallocate_all<FreeList<Mallocator, 64>>);
static_assert(alloy::has_owns<FreeList<Arena, 64>> && alloy::has_expand<FreeList<Arena, 64>> &&
              alloy::has_deallocate_all<FreeList<Arena, 64>> && !alloy::has_reallocate<FreeList<Arena, 64>>);
static_assert(alloy::has_expand<FreeList<ExpandHeap, 16, 64>> && !alloy::has_reallocate<FreeList<ExpandHeap, 16, 64>>);
// The unchecked list cannot forward expand or reallocate (it does not know a list block's size).
static_assert(!alloy::has_expand<FreeList<Arena, 0, unbounded>> && !alloy::has_reallocate<FreeList<Mallocator, 0, unbounded>>);
static_assert(!alloy::has_empty<FreeList<Arena, 64>> && !alloy::has_allocate_all<FreeList<Arena, 64>>);
template <class F>
concept can_minimize = requires(F& f) { f.minimize(); };
static_assert(can_minimize<FreeList<Mallocator, 64>> && !can_minimize<FreeList<Arena, 0, unbounded>>);
static_assert(FreeList<Mallocator, 64>::alignment == 16 && FreeList<alloy::MmapAllocator, 4096>::alignment == 4096);
// State: one pointer over a stateless parent; the bounds chosen at run time add a word each.
static_assert(sizeof(FreeList<Mallocator, 64>) == sizeof(void*));
static_assert(sizeof(FreeList<Mallocator, choose_at_runtime, choose_at_runtime>) == 3 * sizeof(void*));
static_assert(std::is_constructible_v<FreeList<Mallocator, 16, choose_at_runtime>, std::size_t>);
static_assert(!std::is_default_constructible_v<FreeList<Mallocator, 16, choose_at_runtime>>);
static_assert(std::is_constructible_v<FreeList<Mallocator, choose_at_runtime, choose_at_runtime>, int, int>);
static_assert(!std::is_copy_constructible_v<FreeList<Mallocator, 64>> &&
              std::is_nothrow_move_constructible_v<FreeList<Mallocator, 64>>);

// An owner that sends one size (what D's unchecked FreeList!(0, unbounded) relies on): requests up to N bytes
// become N-byte requests.
template <class A, std::size_t N>
struct OneSize {
  static constexpr std::size_t alignment = A::alignment;
  A a;
  Block allocate(std::size_t n) noexcept {
    if (n == 0 || n > N) return {};
    const Block b = a.allocate(N);
    return b ? Block{b.ptr, n} : Block{};
  }
  bool deallocate(Block b) noexcept { return !b || a.deallocate(Block{b.ptr, N}); }
};

TEST_CASE_TEMPLATE("FreeList: conformance", A, FreeList<Mallocator, 64>, FreeList<Mallocator, 16, 128>,
                   FreeList<Mallocator, 0, 64>, FreeList<Mallocator, 1, 4096>, FreeList<Heap, 8, 64>,
                   FreeList<ExpandHeap, 16, 64>, FreeList<Mallocator, 32, 64, Adaptive::yes>,
                   FreeList<alloy::MmapAllocator, 4096, 8192>) {
  alloy::test::check_allocator([] { return A{}; });
}

TEST_CASE("FreeList: conformance with bounds chosen at run time, over a Region, unchecked under an owner") {
  alloy::test::check_allocator([] { return FreeList<Mallocator, choose_at_runtime, choose_at_runtime>(16, 256); });
  alloy::test::check_allocator([] { return FreeList<Mallocator, 8, choose_at_runtime>(100); });
  alloy::test::check_allocator([] { return FreeList<Mallocator, choose_at_runtime, 64>(33); });
  alloy::test::check_allocator([] { return FreeList<Arena, 0, 4096>(Arena(1 << 20)); });
  alloy::test::check_allocator([] { return OneSize<FreeList<Arena, 0, unbounded>, 4096>{FreeList<Arena, 0, unbounded>(Arena(1 << 20))}; });
}

TEST_CASE("FreeList: D's unittest, and the list in action") {
  FreeList<Mallocator, 0, 8> fl;
  const Block b1 = fl.allocate(7);
  const Block b2 = fl.allocate(8);
  CHECK(b1.size == 7);
  CHECK(fl.deallocate(b1));
  const Block b3 = fl.allocate(8);  // served from the list
  CHECK(b3.ptr == b1.ptr);
  CHECK(b3.size == 8);
  CHECK(fl.good_alloc_size(3) == 16);  // 8 bytes, rounded by malloc's alignment
  CHECK(fl.good_alloc_size(9) == 16);
  CHECK(fl.deallocate(b2));
  CHECK(fl.deallocate(b3));
  CHECK(!fl.allocate(0));
  CHECK(fl.deallocate(Block{}));
}

TEST_CASE("FreeList: blocks from the list have MaxSize bytes; the parent sees exact sizes") {
  FreeList<Heap, 16, 64> fl;
  const Block a = fl.allocate(16);
  CHECK(fl.parent().is_live(Block{a.ptr, 64}));  // a miss asks for MaxSize
  CHECK(fl.deallocate(a));
  CHECK(fl.parent().live_blocks() == 1);        // on the list, still the parent's
  const Block b = fl.allocate(64);
  CHECK(b.ptr == a.ptr);
  const Block c = fl.allocate(100);             // not eligible: exactly 100 from the parent
  CHECK(fl.parent().is_live(c));
  const Block d = fl.allocate(15);
  CHECK(fl.parent().is_live(d));
  CHECK(fl.deallocate(c));
  CHECK(fl.deallocate(d));
  CHECK(fl.deallocate(b));
  CHECK(fl.parent().live_blocks() == 1);
  fl.minimize();                                // the list goes back with MaxSize (CheckedHeap checks it)
  CHECK(fl.parent().live_blocks() == 0);
}

TEST_CASE("FreeList: expand and reallocate keep list blocks and parent blocks apart") {
  FreeList<ExpandHeap, 16, 64> fl;
  Block a = fl.allocate(20);
  CHECK(fl.expand(a, 44));                       // within the 64 bytes it has
  CHECK(a.size == 64);
  CHECK(fl.parent().expansions() == 0);
  CHECK(fl.expand(a, 36));                       // past MaxSize: the parent grows its 64 bytes to 100
  CHECK(a.size == 100);
  CHECK(fl.parent().is_live(a));
  Block small = fl.allocate(8);                  // from the parent, below MinSize
  CHECK_FALSE(fl.expand(small, 10));             // 18 would be taken for a 64-byte list block later
  CHECK(small.size == 8);
  CHECK(fl.expand(small, 100));                  // 108: past MaxSize, still the parent's
  CHECK(fl.deallocate(small));
  CHECK(fl.deallocate(a));
  CHECK(fl.parent().live_blocks() == 0);

  FreeList<Mallocator, 16, 64> m;
  Block b = m.allocate(16);
  std::memset(b.ptr, 7, 16);
  const Block before = b;
  CHECK(m.reallocate(b, 64));                    // stays in the list block
  CHECK(b.ptr == before.ptr);
  CHECK(m.reallocate(b, 1000));                  // leaves the bounds: moves, contents kept
  CHECK(b.size == 1000);
  CHECK(static_cast<unsigned char*>(b.ptr)[15] == 7);
  CHECK(m.reallocate(b, 2000));                  // parent to parent: realloc
  CHECK(m.reallocate(b, 32));                    // back into the bounds: a list-sized block
  CHECK(static_cast<unsigned char*>(b.ptr)[0] == 7);
  CHECK(m.reallocate(b, 0));
  CHECK(!b);
}

TEST_CASE("FreeList: the adaptive list gives blocks back when misses are rare") {
  FreeList<Heap, 64, 64, Adaptive::yes> fl;
  std::vector<Block> v;
  for (int i = 0; i < 200; ++i) v.push_back(fl.allocate(64));
  for (Block b : v) CHECK(fl.deallocate(b));
  CHECK(fl.parent().live_blocks() == 200);
  // Hits only, with an ineligible request now and then (each one updates the estimate): the miss rate falls
  // below 1% and the list shrinks one block per update.
  for (int i = 0; i < 20'000; ++i) {
    const Block b = fl.allocate(64);
    CHECK(fl.deallocate(b));
    if (i % 10 == 0) CHECK(fl.deallocate(fl.allocate(8)));
  }
  CHECK(fl.parent().live_blocks() < 10);
  FreeList<Heap, 64, 64> fixed;  // not adaptive: the list keeps everything
  v.clear();
  for (int i = 0; i < 200; ++i) v.push_back(fixed.allocate(64));
  for (Block b : v) CHECK(fixed.deallocate(b));
  for (int i = 0; i < 2'000; ++i) CHECK(fixed.deallocate(fixed.allocate(64)));
  CHECK(fixed.parent().live_blocks() == 200);
}

TEST_CASE("FreeList: D's unchecked list serves any request from the list") {
  alignas(16) static std::byte buf[1 << 12];
  FreeList<alloy::Region<>, 0, unbounded> fl{alloy::Region<>(std::span<std::byte>(buf))};
  const Block a = fl.allocate(48);
  CHECK(a.size == 48);
  CHECK(fl.good_alloc_size(48) == 48);
  CHECK(fl.deallocate(a));
  const Block b = fl.allocate(48);
  CHECK(b.ptr == a.ptr);
  CHECK(fl.deallocate_all());
  CHECK(fl.parent().empty() == Ternary::yes);
}

template <std::size_t Min, std::size_t Max>
void against_model(std::size_t ops, std::uint64_t seed, std::size_t min_size, std::size_t max_size) {
  alignas(16) static std::byte buf[256 * 1024];
  FreeList<alloy::Region<>, Min, Max> fl{alloy::Region<>(std::span<std::byte>(buf))};
  alloy::test::FreeListModel<Min, Max> model(buf, sizeof buf);
  alloy::test::DiffOptions o;
  o.seed = seed;
  o.ops = ops;
  o.min_size = min_size;
  o.max_size = max_size;
  o.slots = 128;
  o.deallocate_all_every = 4'000;
  const auto st = alloy::test::run_differential(fl, model, o);
  CHECK(st.allocations > ops / 20);
  CHECK(st.deallocations > ops / 100);
  CHECK(st.refused_deallocations > 0);  // the Region takes back only its last block
  CHECK(st.expansions > 500);
  CHECK(st.failed_expansions > 100);
  CHECK(st.deallocate_alls > ops / 8'000);
  MESSAGE("FreeList<Region, " << Min << ", " << Max << ">: " << st.ops << " ops, " << st.allocations
                              << " allocations, " << st.failures << " failures");
}

TEST_CASE("FreeList: randomized against a stack over a bump pointer (10^6 operations)") {
  against_model<17, 128>(1'000'000, 0xF1EE, 1, 140);  // ~10% of the sizes outside the bounds
  against_model<64, 64>(200'000, 0xF1EF, 62, 66);
  against_model<0, 256>(200'000, 0xF1F0, 1, 300);
}

TEST_CASE("FreeList: randomized over malloc, reallocate included") {
  FreeList<Mallocator, 16, 128> fl;
  alloy::test::DiffOptions o;
  o.ops = 200'000;
  o.max_size = 400;
  const auto st = alloy::test::run_differential(fl, o);
  CHECK(st.reallocations > 10'000);
  FreeList<ExpandHeap, 16, 128> fe;
  const auto se = alloy::test::run_differential(fe, o);
  CHECK(se.expansions > 1000);
}
