#include <alloy/allocator_list.hpp>

#include <alloy/aligned_mallocator.hpp>
#include <alloy/make.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/mmap_allocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/region.hpp>

#include <algorithm>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

#include <doctest/doctest.h>

#include "support/bump_model.hpp"
#include "support/conformance.hpp"
#include "support/differential.hpp"
#include "support/rewinding_arena.hpp"
#include "support/rng.hpp"
#include "support/test_length.hpp"

using alloy::Block;
using alloy::Ternary;

// Factories: regions of at least Min bytes (D's `(n) => Region!Parent(max(n, Min))`).
template <class Parent, std::size_t Min, std::size_t MinAlign = alloy::platform_alignment>
struct Regions {
  alloy::Region<Parent, MinAlign> operator()(std::size_t n) const {
    return alloy::Region<Parent, MinAlign>(std::max(n, Min));
  }
};
// Exactly Size bytes, whatever the request (a request larger than Size fails).
template <class Parent, std::size_t Size>
struct FixedRegions {
  alloy::Region<Parent> operator()(std::size_t) const { return alloy::Region<Parent>(Size); }
};
// A stateful factory: regions of `size` bytes, counting how many it made.
struct CountingFactory {
  std::size_t size = 4096;
  std::size_t* made = nullptr;
  alloy::Region<alloy::Mallocator> operator()(std::size_t n) const {
    if (made) ++*made;
    return alloy::Region<alloy::Mallocator>(std::max(n, size));
  }
};

template <class F, class B = alloy::Mallocator>
using L = alloy::AllocatorList<F, B>;
using RegionList = L<Regions<alloy::Mallocator, 64 * 1024>>;
using InBandRegionList = L<Regions<alloy::Mallocator, 64 * 1024>, alloy::NullAllocator>;
using DeviceRegionList = L<Regions<alloy::NoAccessAllocator, 64 * 1024>>;

namespace alloy::test {
template <class F, class B>
inline constexpr bool deallocates_last_only<alloy::AllocatorList<F, B>> = true;  // over Regions
}

// Capabilities, with their iff rules.
static_assert(alloy::allocator<RegionList> && RegionList::alignment == 16);
static_assert(alloy::has_owns<RegionList> && alloy::has_deallocate<RegionList> && alloy::has_expand<RegionList> &&
              alloy::has_aligned_allocate<RegionList> && alloy::has_reallocate<RegionList> &&
              alloy::has_deallocate_all<RegionList> && alloy::has_empty<RegionList>);
static_assert(!alloy::has_allocate_all<RegionList> && !alloy::has_copy<RegionList>);
static_assert(DeviceRegionList::memory_space == alloy::MemorySpace::device && alloy::has_copy<DeviceRegionList>);
static_assert(alloy::has_reallocate<DeviceRegionList>);  // through copy
// Allocators without owns: no owns, no deallocate, no expand, no reallocate (the owner cannot be found).
struct NoOwnsArena {
  alloy::Region<alloy::Mallocator> r;
  static constexpr std::size_t alignment = 16;
  alloy::Block allocate(std::size_t n) noexcept { return r.allocate(n); }
  alloy::Block aligned_allocate(std::size_t n, std::size_t a) noexcept { return r.aligned_allocate(n, a); }
  bool deallocate(alloy::Block b) noexcept { return r.deallocate(b); }
};
struct NoOwnsFactory {
  NoOwnsArena operator()(std::size_t n) const { return {alloy::Region<alloy::Mallocator>(std::max<std::size_t>(n, 4096))}; }
};
static_assert(!alloy::has_owns<L<NoOwnsFactory>> && !alloy::has_deallocate<L<NoOwnsFactory>> &&
              !alloy::has_reallocate<L<NoOwnsFactory>> && !alloy::has_expand<L<NoOwnsFactory>>);
static_assert(alloy::has_aligned_allocate<L<NoOwnsFactory>> && alloy::has_deallocate_all<L<NoOwnsFactory>>);
// Layout: a stateless factory and bookkeeping allocator cost nothing. The list holds its order (root, allocator
// count, live blocks) and its node storage: the array, its capacity and the free-slot chain, plus in-band the slot
// of the allocator that holds the array.
static_assert(sizeof(RegionList) == 6 * sizeof(void*));
static_assert(sizeof(InBandRegionList) == 7 * sizeof(void*));
static_assert(!std::is_copy_constructible_v<RegionList> && std::is_nothrow_move_constructible_v<RegionList>);
// A stateful factory is stored and passed to the constructor.
static_assert(!std::is_default_constructible_v<L<CountingFactory>> ||
              std::is_constructible_v<L<CountingFactory>, CountingFactory>);

TEST_CASE_TEMPLATE("AllocatorList: conformance", A, RegionList, InBandRegionList, DeviceRegionList,
                   L<Regions<alloy::Mallocator, 256, 1>>, L<Regions<alloy::AlignedMallocator, 4096, 64>>,
                   L<Regions<alloy::MmapAllocator, 1 << 20>, alloy::NullAllocator>, L<NoOwnsFactory>) {
  alloy::test::check_allocator([] { return A(); });
}

TEST_CASE("AllocatorList: D's scenario, regions of 256 x 16 bytes, the allocator count after each step") {
  constexpr std::size_t bs = 16;
  L<FixedRegions<alloy::Mallocator, 256 * bs>> a;
  Block b1 = a.allocate(192 * bs);
  CHECK(b1.size == 192 * bs);
  CHECK(a.allocator_count() == 1);
  const Block b2 = a.allocate(64 * bs);
  CHECK(b2.size == 64 * bs);
  CHECK(a.allocator_count() == 1);
  const Block b3 = a.allocate(192 * bs);
  CHECK(b3.size == 192 * bs);
  CHECK(a.allocator_count() == 2);
  CHECK(!a.deallocate(b1));  // not the last block of its region
  b1 = a.allocate(64 * bs);
  CHECK(b1.size == 64 * bs);
  CHECK(a.allocator_count() == 2);
  CHECK(a.deallocate_all());
  CHECK(a.allocator_count() == 0);
  CHECK(a.empty() == Ternary::yes);
}

TEST_CASE_TEMPLATE("AllocatorList: D's scenario, 8 MiB through a list of 4 MiB regions", B, alloy::Mallocator,
                   alloy::NullAllocator) {
  L<Regions<alloy::Mallocator, 4 << 20>, B> a;
  const Block b1 = a.allocate(8 << 20);
  CHECK(b1.size == 8u << 20);  // still works: the factory overdimensions
  Block b2 = a.allocate(10 << 10);
  CHECK(b2.size == 10u << 10);
  CHECK(a.allocator_count() == 2);
  CHECK(a.expand(b2, 10));
  CHECK(b2.size == (10u << 10) + 10);
  CHECK(a.reallocate(b2, 1024));
  CHECK(b2.size == 1024);
  CHECK(a.allocate((4 << 20) - (64 << 10)));
  CHECK(a.empty() == Ternary::no);
  CHECK(a.deallocate_all());
  CHECK(a.empty() == Ternary::yes);
}

TEST_CASE("AllocatorList: D's scenario, aligned allocations and count growth 1 -> 2 -> 3") {
  L<Regions<alloy::Mallocator, 4 << 20>> a;
  const Block b0 = a.aligned_allocate(1, 1024);
  CHECK(b0.size == 1);
  CHECK(alloy::is_aligned(b0.ptr, 1024));
  CHECK(a.allocator_count() == 1);
  const Block b1 = a.aligned_allocate(4 << 20, 1024);
  CHECK(b1.size == 4u << 20);
  CHECK(alloy::is_aligned(b1.ptr, 1024));
  CHECK(a.allocator_count() == 2);
  const Block b2 = a.aligned_allocate(1024, 128);
  CHECK(b2.size == 1024);
  CHECK(alloy::is_aligned(b2.ptr, 128));
  CHECK(a.allocator_count() == 2);
  const Block b3 = a.allocate(1024);
  CHECK(b3.size == 1024);
  CHECK(a.allocator_count() == 2);
  const Block b4 = a.allocate(4 << 20);
  CHECK(b4.size == 4u << 20);
  CHECK(a.allocator_count() == 3);
  bool root_empty = true;
  a.for_each_allocator([&](auto& r) { root_empty = root_empty && r.empty() == Ternary::yes; });
  CHECK(!root_empty);
  CHECK(a.deallocate(b4));  // its region is empty now, and kept (the only empty one)
  CHECK(a.allocator_count() == 3);
  std::size_t empties = 0;
  a.for_each_allocator([&](auto& r) { empties += r.empty() == Ternary::yes; });
  CHECK(empties == 1);
  CHECK(!a.aligned_allocate(0, 1024));
  CHECK(!a.aligned_allocate(1, 0));
  CHECK(!a.aligned_allocate(1, 3));
  CHECK(!a.aligned_allocate(SIZE_MAX, 1024));  // n + a - 1 overflows: fails, no allocator is made
  CHECK(a.allocator_count() == 3);
  CHECK(a.deallocate_all());
  CHECK(a.empty() == Ternary::yes);
}

TEST_CASE("AllocatorList: at most one empty allocator is kept") {
  std::size_t made = 0;
  L<CountingFactory> a(CountingFactory{1024, &made});
  std::vector<Block> blocks;
  for (int i = 0; i < 8; ++i) blocks.push_back(a.allocate(1024));  // one region each
  CHECK(a.allocator_count() == 8);
  CHECK(made == 8);
  for (int i = 0; i < 8; ++i) {
    CHECK(a.deallocate(blocks[static_cast<std::size_t>(i)]));
    CHECK(a.allocator_count() == (i == 0 ? 8u : 8u - static_cast<std::size_t>(i)));
  }
  CHECK(a.allocator_count() == 1);
  CHECK(a.empty() == Ternary::yes);
  // The kept one serves the next request: no thrashing at the boundary.
  for (int i = 0; i < 100; ++i) {
    const Block b = a.allocate(1000);
    CHECK(a.deallocate(b));
  }
  CHECK(made == 8);
  CHECK(a.allocator_count() == 1);
}

TEST_CASE("AllocatorList: freed node slots are reused (unlike D)") {
  std::size_t made = 0;
  L<CountingFactory> a(CountingFactory{512, &made});
  for (int round = 0; round < 200; ++round) {
    std::vector<Block> bs;
    for (int i = 0; i < 6; ++i) bs.push_back(a.allocate(512));
    for (auto it = bs.rbegin(); it != bs.rend(); ++it) CHECK(a.deallocate(*it));
  }
  CHECK(made > 1000);  // allocators came and went
  CHECK(a.node_capacity() == 8);
  CHECK(a.allocator_count() == 1);
}

TEST_CASE("AllocatorList: a failed new allocator is destroyed at once") {
  std::size_t made = 0;
  struct Tiny {
    std::size_t* made;
    alloy::Region<alloy::Mallocator> operator()(std::size_t) const {
      ++*made;
      return alloy::Region<alloy::Mallocator>(64);  // too small for larger requests
    }
  };
  L<Tiny> a(Tiny{&made});
  CHECK(!a.allocate(100));
  CHECK(a.allocator_count() == 0);
  CHECK(!a.allocate(100));
  CHECK(made == 2);
  CHECK(a.allocate(64));
  CHECK(a.allocator_count() == 1);
  CHECK(!a.allocate(SIZE_MAX));
  CHECK(a.allocator_count() == 1);
  CHECK(!a.allocate(0));
  CHECK(made == 4);  // allocate(0) asks nothing of the factory
}

TEST_CASE("AllocatorList: memory goes back to the parent") {
  const std::size_t before = alloy::NoAccessAllocator::live_blocks();
  {
    L<FixedRegions<alloy::NoAccessAllocator, 4096>> a;
    std::vector<Block> bs;
    for (int i = 0; i < 10; ++i) bs.push_back(a.allocate(4096));
    CHECK(alloy::NoAccessAllocator::live_blocks() == before + 10);
    for (int i = 9; i >= 0; --i) CHECK(a.deallocate(bs[static_cast<std::size_t>(i)]));
    CHECK(alloy::NoAccessAllocator::live_blocks() == before + 1);  // one empty region kept
    CHECK(a.allocate(100));
    CHECK(a.allocate(4096));
    CHECK(alloy::NoAccessAllocator::live_blocks() == before + 2);
    L<FixedRegions<alloy::NoAccessAllocator, 4096>> moved(std::move(a));
    CHECK(a.allocator_count() == 0);  // NOLINT(bugprone-use-after-move): a moved-from list is empty
    CHECK(moved.allocator_count() == 2);
    CHECK(moved.deallocate_all());
    CHECK(alloy::NoAccessAllocator::live_blocks() == before);
    CHECK(moved.allocate(1));
  }
  CHECK(alloy::NoAccessAllocator::live_blocks() == before);  // the destructor
}

TEST_CASE("AllocatorList: in-band nodes live inside the regions") {
  InBandRegionList a;
  const Block b = a.allocate(100);
  REQUIRE(b);
  CHECK(a.allocator_count() == 1);
  // The region holds the node array and the block.
  std::size_t used = 0;
  a.for_each_allocator([&](auto& r) { used = r.capacity() - r.available(); });
  CHECK(used == 4 * 56 + 112);  // 4 nodes of 56 bytes (Region<Mallocator> + live + next + used), then the block
  CHECK(a.deallocate(b));
  CHECK(a.empty() == Ternary::yes);
  CHECK(a.allocator_count() == 1);
  // Growth: more regions than the first array holds.
  std::vector<Block> bs;
  for (int i = 0; i < 20; ++i) bs.push_back(a.allocate(60 * 1024));
  CHECK(a.allocator_count() >= 20);
  for (Block x : bs) CHECK(a.owns(x) == Ternary::yes);
  CHECK(a.deallocate_all());
  CHECK(a.allocator_count() == 0);
  CHECK(a.allocate(10));
}

// Regression test: when the in-band array moved to a new region, the old region kept the old array (a
// Region gives back only its last block) and counted it as live for good, so every old home stayed alive, one more
// each time the array doubled. The list now stops counting the old array either way.
TEST_CASE("AllocatorList, in-band over Regions: old homes of the node array go once their blocks are freed") {
  for (const int k : {4, 9, 33}) {
    CAPTURE(k);
    InBandRegionList a;
    std::vector<Block> bs;
    for (int i = 0; i < k; ++i) bs.push_back(a.allocate(60 * 1024));  // one region each
    for (auto it = bs.rbegin(); it != bs.rend(); ++it) CHECK(a.deallocate(*it));
    CHECK(a.empty() == Ternary::yes);
    CHECK(a.allocator_count() <= 2);  // the array's home and at most one empty region
  }
}

// Regression test: a reallocate that moves leaves the old block in a Region that cannot give it back (not
// its last); the list kept counting it, so empty() never said yes again and the region could never go.
TEST_CASE_TEMPLATE("AllocatorList over Regions: a block left behind by reallocate is not counted as live", A,
                   L<Regions<alloy::Mallocator, 4096>>, L<Regions<alloy::Mallocator, 4096>, alloy::NullAllocator>) {
  A a;
  Block x = a.allocate(100), y = a.allocate(100);
  REQUIRE(x);
  REQUIRE(y);
  CHECK(a.reallocate(x, 200));  // x is not the region's last block: moved, the old copy stays in the region
  CHECK(a.deallocate(x));
  CHECK(a.deallocate(y));
  CHECK(a.empty() == Ternary::yes);
  const Block big = a.allocate(8000);  // a second region
  CHECK(a.deallocate(big));
  // One empty region kept, not two; in-band, the first region also holds the node array and stays.
  constexpr bool in_band = std::is_same_v<A, L<Regions<alloy::Mallocator, 4096>, alloy::NullAllocator>>;
  CHECK(a.allocator_count() == (in_band ? 2u : 1u));
}

// Regression test: the list had no aligned_reallocate, and D's generic fallback gave the moved-away
// block back to a Region that kept it, so the list kept counting it: empty() never said yes again, and each
// make / expand_array / dispose round of an over-aligned T left one more region behind.
TEST_CASE_TEMPLATE("AllocatorList over Regions: a block left behind by aligned_reallocate is not counted as live", A,
                   L<Regions<alloy::Mallocator, 4096>>, L<Regions<alloy::Mallocator, 4096>, alloy::NullAllocator>) {
  static_assert(alloy::has_aligned_reallocate<A>);
  A a;
  Block x = a.aligned_allocate(100, 64), y = a.allocate(100);
  REQUIRE(x);
  REQUIRE(y);
  std::memset(x.ptr, 0x5A, x.size);
  // x is not the region's last block: moved, the old copy stays behind. (Alignment 16, the region's own: a larger
  // one could leave padding after y, and a Region gives back only a block that ends at its top.)
  CHECK(a.aligned_reallocate(x, 300, 16));
  CHECK(x.size == 300);
  CHECK(alloy::is_aligned(x.ptr, 16));
  CHECK((static_cast<unsigned char*>(x.ptr)[0] == 0x5A && static_cast<unsigned char*>(x.ptr)[99] == 0x5A));
  Block z = x;
  CHECK(a.aligned_reallocate(z, 700, 16));  // the last block, aligned: expanded in place
  CHECK((z.ptr == x.ptr && z.size == 700));
  x = z;
  CHECK(!a.aligned_reallocate(x, 800, 48));  // not a power of two: refused, x unchanged
  CHECK(x.size == 700);
  CHECK(a.deallocate(x));
  CHECK(a.deallocate(y));  // the last block again: x's old copy, below it, is no longer counted
  CHECK(a.empty() == Ternary::yes);
  Block e;
  CHECK(a.aligned_reallocate(e, 50, 256));  // an empty block is allocated
  CHECK((e.size == 50 && alloy::is_aligned(e.ptr, 256)));
  CHECK(a.aligned_reallocate(e, 0, 256));  // n == 0 frees
  CHECK(!e);
  CHECK(a.empty() == Ternary::yes);
  constexpr bool in_band = std::is_same_v<A, L<Regions<alloy::Mallocator, 4096>, alloy::NullAllocator>>;
  CHECK(a.allocator_count() <= (in_band ? 2u : 1u));
  // make's expand_array of an over-aligned T takes this path: rounds of make / expand / dispose leave nothing behind.
  struct alignas(64) Wide {
    unsigned char bytes[64];
  };
  for (int round = 0; round < 100; ++round) {
    std::span<Wide> w = alloy::make_array<Wide>(a, 2), v = alloy::make_array<Wide>(a, 1);
    REQUIRE(w.size() == 2);
    REQUIRE(v.size() == 1);
    REQUIRE(alloy::expand_array(a, w, 3));  // w is not the last block: it moves
    CHECK(alloy::dispose(a, w));
    CHECK(alloy::dispose(a, v));
    CHECK(a.empty() == Ternary::yes);
  }
  CHECK(a.allocator_count() <= (in_band ? 2u : 1u));
}

// A factory that throws (out of memory, say) fails the request; the list stays usable. The primitives are noexcept,
// so before this the throw ended the program.
struct ThrowingRegions {
  int* calls;
  alloy::Region<alloy::Mallocator> operator()(std::size_t n) const {
    if ((*calls)++ % 2 == 0) throw std::bad_alloc();
    return alloy::Region<alloy::Mallocator>(std::max<std::size_t>(n, 4096));
  }
};
TEST_CASE_TEMPLATE("AllocatorList: a throwing factory fails the request", B, alloy::Mallocator, alloy::NullAllocator) {
  int calls = 0;
  L<ThrowingRegions, B> a(ThrowingRegions{&calls});
  CHECK(!a.allocate(100));  // the first call throws
  CHECK(a.allocator_count() == 0);
  const Block x = a.allocate(100);
  REQUIRE(x);
  CHECK(a.allocator_count() == 1);
  CHECK(!a.aligned_allocate(8000, 64));  // a new region is needed, and the factory throws
  CHECK(a.allocator_count() == 1);
  const Block y = a.aligned_allocate(8000, 64);
  REQUIRE(y);
  CHECK(alloy::is_aligned(y.ptr, 64));
  CHECK(a.allocator_count() == 2);
  CHECK(a.deallocate(y));
  CHECK(a.deallocate(x));
  CHECK(a.empty() == Ternary::yes);
}

// ---------------------------------------------------------------------------------------------------------------
// Randomized, against an exact model: a plain re-implementation of the list (a std::vector in most-recently-used
// order of bump-pointer models), fed with the chunks the factory made (logged as they are made).

struct ChunkLog {
  std::vector<std::pair<void*, std::size_t>> chunks;
};
ChunkLog g_log;

template <std::size_t Min, std::size_t MinAlign>
struct LoggedRegions {
  alloy::Region<alloy::AlignedMallocator, MinAlign> operator()(std::size_t n) const {
    alloy::Region<alloy::AlignedMallocator, MinAlign> r(std::max(n, Min));
    g_log.chunks.emplace_back(r.data(), r.capacity());
    return r;
  }
};

template <std::size_t MinAlign>
struct ListModel {
  struct Entry {
    alloy::test::BumpModel<MinAlign, false> m;
    std::size_t live = 0;
  };
  std::vector<Entry> list;  // front = most recently used
  std::size_t next_chunk = 0;

  void to_front(std::size_t i) { std::rotate(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(i), list.begin() + static_cast<std::ptrdiff_t>(i) + 1); }
  Block add_and(auto&& alloc) {
    REQUIRE(next_chunk < g_log.chunks.size());  // the list made an allocator
    const auto [p, size] = g_log.chunks[next_chunk++];
    list.insert(list.begin(), Entry{alloy::test::BumpModel<MinAlign, false>(p, size), 0});
    const Block b = alloc(list.front().m);
    if (b) ++list.front().live;
    else list.erase(list.begin());
    return b;
  }
  Block allocate(std::size_t n) {
    if (n == 0) return {};
    for (std::size_t i = 0; i < list.size(); ++i)
      if (Block b = list[i].m.allocate(n)) {
        ++list[i].live;
        to_front(i);
        return b;
      }
    return add_and([&](auto& m) { return m.allocate(n); });
  }
  Block aligned_allocate(std::size_t n, std::size_t a) {
    if (n == 0 || !alloy::is_power_of_two(a)) return {};
    for (std::size_t i = 0; i < list.size(); ++i)
      if (Block b = list[i].m.aligned_allocate(n, a)) {
        ++list[i].live;
        to_front(i);
        return b;
      }
    if (n > SIZE_MAX - (a - 1)) return {};
    return add_and([&](auto& m) { return m.aligned_allocate(n, a); });
  }
  std::size_t owner(Block b) {
    for (std::size_t i = 0; i < list.size(); ++i)
      if (list[i].m.owns(b) == Ternary::yes) return i;
    return SIZE_MAX;
  }
  bool deallocate(Block b) {
    if (!b) return true;
    const std::size_t i = owner(b);
    REQUIRE(i != SIZE_MAX);
    const bool r = list[i].m.deallocate(b);
    to_front(i);
    if (r && --list.front().live == 0)
      list.erase(std::remove_if(list.begin() + 1, list.end(), [](const Entry& e) { return e.live == 0; }), list.end());
    return r;
  }
  Ternary owns(Block b) {
    const std::size_t i = owner(b);
    if (i == SIZE_MAX) return Ternary::no;
    to_front(i);
    return Ternary::yes;
  }
  bool expand(Block& b, std::size_t d) {
    if (d == 0) return true;
    const std::size_t i = owner(b);
    return i != SIZE_MAX && list[i].m.expand(b, d);
  }
  bool reallocate(Block& b, std::size_t n) {
    if (b.size == n) return true;
    if (n == 0) {
      if (!deallocate(b)) return false;
      b = {};
      return true;
    }
    const std::size_t i = owner(b);
    if (n > b.size && list[i].m.expand(b, n - b.size)) return true;
    const Block nb = allocate(n);
    if (!nb) return false;
    moved_from(b);
    b = nb;
    return true;
  }
  bool aligned_reallocate(Block& b, std::size_t n, std::size_t a) {
    if (!alloy::is_power_of_two(a)) return false;
    if (b && b.size == n && alloy::is_aligned(b.ptr, a)) return true;
    if (n == 0) {
      if (!deallocate(b)) return false;
      b = {};
      return true;
    }
    if (!b) {
      const Block nb = aligned_allocate(n, a);
      if (nb) b = nb;
      return static_cast<bool>(nb);
    }
    const std::size_t i = owner(b);
    if (n > b.size && alloy::is_aligned(b.ptr, a) && list[i].m.expand(b, n - b.size)) return true;
    const Block nb = aligned_allocate(n, a);
    if (!nb) return false;
    moved_from(b);
    b = nb;
    return true;
  }
  void moved_from(Block b) {
    if (!deallocate(b)) {  // the region keeps the old block, but the list no longer counts it
      const std::size_t i = owner(b);
      REQUIRE(i != SIZE_MAX);
      to_front(i);
      if (--list.front().live == 0)
        list.erase(std::remove_if(list.begin() + 1, list.end(), [](const Entry& e) { return e.live == 0; }), list.end());
    }
  }
  bool deallocate_all() {
    list.clear();
    return true;
  }
  Ternary empty() const {
    std::size_t live = 0;
    for (const Entry& e : list) live += e.live;
    return alloy::to_ternary(live == 0);
  }
};

template <std::size_t Min, std::size_t MinAlign>
void list_differential(std::uint64_t seed, std::size_t ops, std::size_t max_size) {
  L<LoggedRegions<Min, MinAlign>> a;
  g_log.chunks.clear();
  ListModel<MinAlign> model;
  alloy::test::DiffOptions o;
  o.seed = seed;
  o.ops = ops;
  o.slots = 128;
  o.max_size = max_size;
  o.max_alignment = 1024;
  o.deallocate_all_every = 5000;
  const auto st = alloy::test::run_differential(a, model, o);
  CHECK(st.allocations > ops / 15);
  CHECK(st.deallocations > ops / 20);
  CHECK(st.refused_deallocations > ops / 20);
  CHECK(st.expansions > 100);
  CHECK(st.reallocations > 100);
  CHECK(g_log.chunks.size() > 50);  // allocators came and went
  CHECK(a.allocator_count() == model.list.size());
  MESSAGE("regions of " << Min << ": " << g_log.chunks.size() << " made, " << st.allocations << " allocations, "
                        << st.deallocations << " deallocations, " << st.refused_deallocations << " refused");
}

// A third of the operations in CI, all of them under ALLOY_TEST_LONG (support/test_length.hpp).
static std::size_t list_ops(std::size_t full) { return alloy::test::long_tests() ? full : full / 3; }

TEST_CASE("AllocatorList of Regions: randomized against an exact model") {
  list_differential<2048, 16>(101, list_ops(300'000), 300);
  list_differential<4096, 1>(102, list_ops(200'000), 700);
  list_differential<1024, 64>(103, list_ops(200'000), 2000);  // requests larger than the minimum region too
}

// Arenas that take every block back, so that the list's empty-allocator policy runs under a long random sequence.
using Arena = alloy::test::RewindingArena<true>;
struct Arenas {
  std::size_t* made;
  Arena operator()(std::size_t n) const {
    ++*made;
    return Arena{alloy::Region<alloy::Mallocator>(std::max<std::size_t>(n, 4096)), 0};
  }
};

TEST_CASE_TEMPLATE("AllocatorList of arenas: randomized, at most one empty allocator, slots reused", B,
                   alloy::Mallocator, alloy::NullAllocator) {
  std::size_t made = 0;
  L<Arenas, B> a(Arenas{&made});
  alloy::test::DiffOptions o;
  o.ops = list_ops(300'000);
  o.slots = 48;
  o.max_size = 1500;
  o.deallocate_all_every = 50'000;
  const auto st = alloy::test::run_differential(a, o);
  CHECK(st.allocations > o.ops / 5);
  CHECK(st.deallocations > o.ops / 5);
  CHECK(made > 100);
  // Invariant after the run (everything given back): one empty allocator kept at most, and the node array did not
  // grow with the number of allocators ever made.
  CHECK(a.empty() == Ternary::yes);
  std::size_t empties = 0;
  a.for_each_allocator([&](Arena& x) { empties += x.live == 0; });
  CHECK(empties <= 1 + alloy::AllocatorList<Arenas, B>::in_band);
  CHECK(a.node_capacity() <= 64);
  MESSAGE(made << " arenas made, node capacity " << a.node_capacity() << ", ops " << st.ops << ", failures " << st.failures << ", reallocations " << st.reallocations);
}

// ---------------------------------------------------------------------------------------------------------------
// Gaps found by a mutation sweep.

// An arena that cannot rule a block out: owns says yes for its own blocks and unknown for any other.
struct UnsureArena {
  alloy::Region<alloy::Mallocator> r;
  static constexpr std::size_t alignment = 16;
  alloy::Block allocate(std::size_t n) noexcept { return r.allocate(n); }
  bool deallocate(alloy::Block b) noexcept { return r.deallocate(b); }
  alloy::Ternary owns(alloy::Block b) const noexcept {
    return r.owns(b) == alloy::Ternary::yes ? alloy::Ternary::yes : alloy::Ternary::unknown;
  }
};
struct UnsureArenas {
  UnsureArena operator()(std::size_t n) const { return {alloy::Region<alloy::Mallocator>(std::max<std::size_t>(n, 4096))}; }
};
TEST_CASE("AllocatorList: owns is unknown when an allocator cannot tell and none says yes") {
  L<UnsureArenas> a;
  int foreign = 0;
  CHECK(a.owns({&foreign, sizeof foreign}) == Ternary::no);  // no allocator: nobody says otherwise
  const Block x = a.allocate(100);
  REQUIRE(x);
  CHECK(a.owns(x) == Ternary::yes);
  CHECK(a.owns(Block{}) == Ternary::no);
  CHECK(a.owns({&foreign, sizeof foreign}) == Ternary::unknown);
  CHECK(a.deallocate(x));
}

TEST_CASE("AllocatorList: reallocate of a null Block allocates, whatever its size says") {
  RegionList a;
  Block null5{nullptr, 5};
  CHECK(a.reallocate(null5, 5));
  CHECK(null5);
  CHECK(null5.size == 5);
  CHECK(a.deallocate(null5));
  CHECK(a.empty() == Ternary::yes);
}

TEST_CASE("AllocatorList: copy with no allocator alive works only for n == 0") {
  DeviceRegionList a;
  char src[4] = "abc", dst[4] = {};
  CHECK(a.copy(dst, src, 0, {}));
  CHECK_FALSE(a.copy(dst, src, 4, {}));
  const Block b = a.allocate(4);
  REQUIRE(b);
  CHECK(a.copy(b.ptr, src, 4, {}));
  CHECK(a.copy(dst, b.ptr, 4, {}));
  CHECK(std::strcmp(dst, "abc") == 0);
  CHECK(a.deallocate_all());
  CHECK_FALSE(a.copy(dst, src, 4, {}));
}

TEST_CASE("AllocatorList: move assignment gives the target's allocators back to their parent") {
  const std::size_t before = alloy::NoAccessAllocator::live_blocks();
  {
    L<FixedRegions<alloy::NoAccessAllocator, 4096>> a, b;
    CHECK(a.allocate(100));
    CHECK(a.allocate(4096));
    CHECK(b.allocate(100));
    CHECK(alloy::NoAccessAllocator::live_blocks() == before + 3);
    a = std::move(b);
    CHECK(alloy::NoAccessAllocator::live_blocks() == before + 1);  // a's two regions went back
    CHECK(a.allocator_count() == 1);
    CHECK(b.allocator_count() == 0);  // NOLINT(bugprone-use-after-move): a moved-from list is empty
  }
  CHECK(alloy::NoAccessAllocator::live_blocks() == before);
}

// In-band: when the node array moves out of a home that holds nothing else (its blocks were freed, but a block
// left behind by reallocate keeps the array from expanding in place), that home goes at once.
TEST_CASE("AllocatorList, in-band over Regions: an old home left with no block goes when the array moves") {
  L<Regions<alloy::Mallocator, 4096>, alloy::NullAllocator> a;
  Block x = a.allocate(100), y = a.allocate(100);  // the home region: the array, x, y
  REQUIRE(x);
  REQUIRE(y);
  REQUIRE(a.reallocate(x, 200));  // moves above y; the old copy stays in the region, uncounted
  CHECK(a.deallocate(x));
  CHECK(a.deallocate(y));
  CHECK(a.allocator_count() == 1);  // the home holds only the array now, and cannot expand it in place
  std::vector<Block> bs;
  for (int i = 0; i < 3; ++i) bs.push_back(a.allocate(4000));  // fills the 4 slots
  CHECK(a.allocator_count() == 4);
  CHECK(a.node_capacity() == 4);
  bs.push_back(a.allocate(4000));  // the array moves to a new region; the old home has nothing left
  REQUIRE(bs.back());
  CHECK(a.node_capacity() == 8);
  CHECK(a.allocator_count() == 4);
  for (auto it = bs.rbegin(); it != bs.rend(); ++it) CHECK(a.deallocate(*it));
  CHECK(a.empty() == Ternary::yes);
}

TEST_CASE("AllocatorList over Regions: aligned_reallocate to 0 of a block its region keeps fails, b unchanged") {
  L<Regions<alloy::Mallocator, 4096>> a;
  Block x = a.aligned_allocate(100, 64);
  const Block y = a.allocate(100);
  REQUIRE(x);
  REQUIRE(y);
  const Block kept = x;
  CHECK_FALSE(a.aligned_reallocate(x, 0, 64));  // not the region's last block: the region refuses it
  CHECK(x == kept);
  CHECK_FALSE(a.reallocate(x, 0));  // as reallocate
  CHECK(x == kept);
  CHECK(a.deallocate(y));
  CHECK(a.aligned_reallocate(x, 0, 64));  // the last block now
  CHECK(!x);
  CHECK(a.empty() == Ternary::yes);
}
