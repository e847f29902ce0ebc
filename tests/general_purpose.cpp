// examples/general_purpose.hpp's showcase GeneralPurpose and its small side, BorrowingClasses: the conformance kit,
// borrowing across classes and freeing to the block's own capacity, the edges (0, SIZE_MAX, > 512, alignments), and
// randomized operations (allocate, aligned_allocate, deallocate, expand, reallocate) against a model that checks
// sizes, alignment, no overlap and every live block's contents (10^6 operations at full length, ALLOY_TEST_LONG=1).
#include "../examples/general_purpose.hpp"

#include <alloy/aligned_mallocator.hpp>

#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include <doctest/doctest.h>

#include "support/conformance.hpp"
#include "support/test_length.hpp"

namespace {

using GP = alloy_examples::GeneralPurpose<>;
using Small = GP::Small;

static_assert(alloy::allocator<GP> && alloy::has_deallocate<GP> && alloy::has_expand<GP> &&
              alloy::has_reallocate<GP> && alloy::has_aligned_allocate<GP> && GP::alignment == 16);
static_assert(!alloy::has_owns<GP> && !alloy::has_deallocate_all<GP>);
static_assert(std::is_nothrow_move_constructible_v<GP> && !std::is_copy_constructible_v<GP>);

/// AlignedMallocator that counts the bytes it holds (stateless: the counters are static).
struct Counting {
  static constexpr std::size_t alignment = alloy::platform_alignment;
  static inline std::size_t held = 0, calls = 0;
  alloy::Block allocate(std::size_t n) noexcept { return count(alloy::AlignedMallocator::instance.allocate(n)); }
  alloy::Block aligned_allocate(std::size_t n, std::size_t a) noexcept {
    return count(alloy::AlignedMallocator::instance.aligned_allocate(n, a));
  }
  bool deallocate(alloy::Block b) noexcept {
    held -= b.size;
    return alloy::AlignedMallocator::instance.deallocate(b);
  }
  static alloy::Block count(alloy::Block b) noexcept {
    if (b) held += b.size, ++calls;
    return b;
  }
};

unsigned char byte_of(std::uint64_t id, std::size_t i) { return static_cast<unsigned char>(id * 131 + i * 7 + 1); }
void fill(alloy::Block b, std::uint64_t id) {
  for (std::size_t i = 0; i < b.size; ++i) static_cast<unsigned char*>(b.ptr)[i] = byte_of(id, i);
}
bool intact(alloy::Block b, std::uint64_t id, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (static_cast<const unsigned char*>(b.ptr)[i] != byte_of(id, i)) return false;
  return true;
}

}  // namespace

TEST_CASE("GeneralPurpose: conformance") {
  alloy::test::check_allocator([] { return GP{}; });
  alloy::test::check_allocator([] { return alloy_examples::GeneralPurpose<alloy::AlignedMallocator, 4096>{}; });
}

TEST_CASE("GeneralPurposeFixedClasses: conformance") {
  alloy::test::check_allocator([] { return alloy_examples::GeneralPurposeFixedClasses<>{}; });
}

// The classes: 16-byte steps up to 128, 32-byte steps up to 512; every size maps to the smallest class that holds it.
static_assert(Small::classes == 20 && Small::class_size(0) == 16 && Small::class_size(7) == 128 &&
              Small::class_size(8) == 160 && Small::class_size(19) == 512);
static_assert(Small::borrow_limit(0) == 0 && Small::borrow_limit(4) == 5 && Small::borrow_limit(8) == 9 &&
              Small::borrow_limit(13) == 15 && Small::borrow_limit(19) == 19);
TEST_CASE("BorrowingClasses: class_of_size is the smallest class that holds n, for every n in 1..512") {
  for (std::size_t n = 1; n <= 512; ++n) {
    const std::size_t c = Small::class_of_size(n);
    REQUIRE(c < Small::classes);
    CHECK(Small::class_size(c) >= n);
    if (c > 0) CHECK(Small::class_size(c - 1) < n);
  }
  for (std::size_t c = 0; c < Small::classes; ++c) {
    const std::size_t lim = Small::borrow_limit(c);
    CHECK(5 * Small::class_size(lim) <= 6 * Small::class_size(c));
    if (lim + 1 < Small::classes) CHECK(5 * Small::class_size(lim + 1) > 6 * Small::class_size(c));
  }
}

TEST_CASE("GeneralPurpose: a class borrows a larger free block, which goes back to its own class") {
  GP g;
  Small& s = g.stack().small();
  alloy::Block a = g.allocate(96);  // class 5 (81..96 bytes)
  REQUIRE(a);
  CHECK(Small::capacity(a.ptr) == 96);
  CHECK(g.deallocate(a));
  CHECK(s.listed(5) == 1);
  alloy::Block b = g.allocate(70);  // class 4 (80 bytes) is empty: borrows the 96-byte block (1.2x)
  CHECK(b.ptr == a.ptr);
  CHECK(b.size == 70);
  CHECK(s.listed(5) == 0);
  CHECK(Small::capacity(b.ptr) == 96);
  CHECK(g.expand(b, 26));  // in place up to the capacity
  CHECK(b.size == 96);
  CHECK_FALSE(g.expand(b, 1));
  CHECK(g.deallocate(b));
  CHECK(s.listed(5) == 1);  // back to the class of its capacity
  CHECK(s.listed(4) == 0);
  alloy::Block c = g.allocate(81);  // class 5 again: the same block
  CHECK(c.ptr == a.ptr);
  CHECK(g.deallocate(c));

  alloy::Block d = g.allocate(60);  // class 3 (64 bytes) borrows nothing from class 5 (96 > 1.2 x 64): carves
  CHECK(d.ptr != a.ptr);
  CHECK(Small::capacity(d.ptr) == 64);
  CHECK(s.listed(5) == 1);
  CHECK(g.deallocate(d));
}

TEST_CASE("GeneralPurpose: the newest region's room is carved before a much larger block is borrowed") {
  GP g;
  Small& s = g.stack().small();
  alloy::Block big = g.allocate(512);
  REQUIRE(big);
  CHECK(g.deallocate(big));
  alloy::Block e = g.allocate(300);  // class 13 (320 B) borrows up to 384 B; the region has room: a new block
  REQUIRE(e);
  CHECK(e.ptr != big.ptr);
  CHECK(Small::capacity(e.ptr) == 320);
  CHECK(s.room() == 16384 - 1024 - 512 - 320);
  std::vector<alloy::Block> fill_region;
  while (s.room() >= 16) fill_region.push_back(g.allocate(16));
  CHECK(s.room() == 0);
  CHECK(g.pool().allocator_count() == 1);
  alloy::Block f = g.allocate(300);  // no room left: the 512-byte block, rather than a new region
  CHECK(f.ptr == big.ptr);
  CHECK(Small::capacity(f.ptr) == 512);
  CHECK(g.pool().allocator_count() == 1);
  alloy::Block h = g.allocate(300);  // nothing listed, no room: the pool adds a region
  REQUIRE(h);
  CHECK(g.pool().allocator_count() == 2);
  CHECK(s.room() == 16384 - 1024 - 320);
  for (alloy::Block x : {e, f, h}) CHECK(g.deallocate(x));
  for (alloy::Block x : fill_region) CHECK(g.deallocate(x));
  CHECK(s.listed(19) == 1);
  CHECK(s.listed(13) == 2);
  CHECK(s.listed(0) == fill_region.size());
}

TEST_CASE("GeneralPurpose: a retired region's rest is the spare, carved before a larger block is borrowed") {
  GP g;
  Small& s = g.stack().small();
  auto region = [](const void* p) { return alloy::address_of(p) & ~std::uintptr_t{16384 - 1}; };
  std::vector<alloy::Block> live;
  live.push_back(g.allocate(512));
  const std::uintptr_t first = region(live.back().ptr);
  while (s.room() >= 512) live.push_back(g.allocate(512));
  CHECK(s.room() == 0);  // 16384 - 1024 = 30 x 512
  // A second region, filled to leave 128 bytes; then 512 bytes go to a third region, and the 128 become the spare.
  live.push_back(g.allocate(512));
  const std::uintptr_t second = region(live.back().ptr);
  CHECK(second != first);
  while (s.room() >= 512 + 128) live.push_back(g.allocate(512));
  live.push_back(g.allocate(s.room() - 128));
  CHECK(s.room() == 128);
  CHECK(g.pool().allocator_count() == 2);
  live.push_back(g.allocate(512));  // nothing listed, 128 < 512: the second region retires, a third is made
  CHECK(g.pool().allocator_count() == 3);
  CHECK(region(live.back().ptr) != second);
  while (s.room() >= 128) live.push_back(g.allocate(128));
  alloy::Block sp = g.allocate(100);  // class 112: no list, no room in the newest: carved from the spare
  REQUIRE(sp);
  CHECK(region(sp.ptr) == second);
  CHECK(Small::capacity(sp.ptr) == 112);
  CHECK(s.listed(0) == 0);
  live.push_back(sp);
  while (s.room() >= 16) live.push_back(g.allocate(16));
  live.push_back(g.allocate(512));  // a fourth region: the spare's last 16 bytes become a free block of class 0
  CHECK(g.pool().allocator_count() == 4);
  CHECK(s.listed(0) == 1);
  for (alloy::Block b : live) CHECK(g.deallocate(b));
}

TEST_CASE("GeneralPurpose: edges") {
  GP g;
  CHECK_FALSE(g.allocate(0));
  CHECK_FALSE(g.allocate(SIZE_MAX));
  CHECK_FALSE(g.allocate(SIZE_MAX - 15));
  CHECK(g.deallocate({}));
  CHECK(g.good_alloc_size(1) == 16);
  CHECK(g.good_alloc_size(17) == 32);
  CHECK(g.good_alloc_size(512) == 512);
  CHECK(g.good_alloc_size(513) >= 513);
  CHECK(g.good_alloc_size(SIZE_MAX) == 0);
  alloy::Block l = g.allocate(513);  // Parent's
  REQUIRE(l);
  CHECK(l.size == 513);
  CHECK(g.pool().allocator_count() == 0);
  fill(l, 9);
  CHECK(g.reallocate(l, 100));  // into a class: moved, bytes kept
  CHECK(intact(l, 9, 100));
  CHECK(g.pool().allocator_count() == 1);
  CHECK(g.reallocate(l, 112));  // within its capacity: in place
  CHECK(g.reallocate(l, 2000));  // out to Parent
  CHECK(intact(l, 9, 100));
  CHECK(g.reallocate(l, 0));
  CHECK_FALSE(l);
  CHECK_FALSE(g.expand(l, 1));
  CHECK(g.expand(l, 0));

  // Alignments: up to 16 is allocate; small sizes up to RegionBytes / 2 from the pool; larger sizes Parent's.
  CHECK_FALSE(g.aligned_allocate(100, 24));
  CHECK_FALSE(g.aligned_allocate(0, 64));
  for (std::size_t a : {std::size_t{1}, std::size_t{16}, std::size_t{32}, std::size_t{256}, std::size_t{4096},
                        std::size_t{8192}}) {
    alloy::Block b = g.aligned_allocate(100, a);
    REQUIRE(b);
    CHECK(b.size == 100);
    CHECK(alloy::is_aligned(b.ptr, std::max<std::size_t>(a, 16)));
    CHECK(Small::capacity(b.ptr) == 112);  // class 6 (97..112 bytes)
    fill(b, a);
    CHECK(intact(b, a, 100));
    CHECK(g.deallocate(b));
  }
  const std::size_t regions = g.pool().allocator_count();
  CHECK_FALSE(g.aligned_allocate(100, 16384));  // no room beside the region's map: fails, makes no region
  CHECK(g.pool().allocator_count() == regions);
  alloy::Block la = g.aligned_allocate(5000, 16384);
  REQUIRE(la);
  CHECK(alloy::is_aligned(la.ptr, 16384));
  CHECK(g.deallocate(la));

  GP moved(std::move(g));  // the lists and regions move along
  alloy::Block m = moved.allocate(100);
  CHECK(m);
  CHECK(moved.deallocate(m));
}

TEST_CASE("GeneralPurpose: everything it holds comes from Parent and goes back") {
  Counting::held = 0;
  {
    alloy_examples::GeneralPurpose<Counting> g;
    std::vector<alloy::Block> v;
    for (std::size_t i = 0; i < 2000; ++i) v.push_back(g.allocate(1 + i % 700));
    for (alloy::Block b : v) CHECK(g.deallocate(b));
    CHECK(Counting::held > 0);
  }
  CHECK(Counting::held == 0);
}

// Randomized operations against a model: every live block's exact size, alignment, no overlap with any other live
// block, and its bytes, checked when it is freed, moved or resized.
TEST_CASE("GeneralPurpose: randomized against a model") {
  const std::size_t ops = alloy::test::test_length(1'000'000);
  GP g;
  struct Live {
    alloy::Block b;
    std::uint64_t id;
    std::size_t align;
  };
  std::vector<Live> slots(1024);
  std::map<std::uintptr_t, std::size_t> spans;  // live blocks: start -> size (size 0 blocks do not exist)
  auto no_overlap = [&](alloy::Block b) {
    const std::uintptr_t p = alloy::address_of(b.ptr);
    auto it = spans.lower_bound(p);
    if (it != spans.end() && it->first < p + b.size) return false;
    if (it != spans.begin() && std::prev(it)->first + std::prev(it)->second > p) return false;
    return true;
  };
  std::uint64_t x = 0x9E3779B97F4A7C15ull, id = 0;
  auto next = [&x] {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    return x * 0x2545F4914F6CDD1Dull;
  };
  auto size = [&next] {  // mostly small (the classes), some above 512 (Parent), a few the edges
    const std::uint64_t r = next();
    switch (r % 16) {
      case 0: return std::size_t{513} + r / 16 % 3000;
      case 1: return std::size_t{1} + r / 16 % 16;
      default: return std::size_t{1} + r / 16 % 512;
    }
  };
  std::size_t failures = 0;
  for (std::size_t i = 0; i < ops && failures == 0; ++i) {
    Live& s = slots[next() % slots.size()];
    const std::uint64_t op = next() % 8;
    if (!s.b) {
      const std::size_t n = size();
      std::size_t a = 16;
      if (op == 0) a = std::size_t{1} << (next() % 14);  // up to 8 KiB
      s.b = a == 16 ? g.allocate(n) : g.aligned_allocate(n, a);
      s.align = std::max<std::size_t>(a, 16);
      s.id = ++id;
      if (!s.b || s.b.size != n || !alloy::is_aligned(s.b.ptr, s.align) || !no_overlap(s.b)) {
        ++failures;
        break;
      }
      spans[alloy::address_of(s.b.ptr)] = n;
      fill(s.b, s.id);
      continue;
    }
    if (!intact(s.b, s.id, s.b.size)) {
      ++failures;
      break;
    }
    spans.erase(alloy::address_of(s.b.ptr));
    if (op == 1) {  // expand by a little: in place or not at all
      const std::size_t delta = next() % 40;
      const alloy::Block before = s.b;
      if (g.expand(s.b, delta)) {
        if (s.b.ptr != before.ptr || s.b.size != before.size + delta) ++failures;
      } else if (s.b != before) {
        ++failures;
      }
    } else if (op == 2) {  // reallocate to any size: the common prefix kept
      const std::size_t n = size(), keep = std::min(n, s.b.size);
      const alloy::Block before = s.b;
      if (!g.reallocate(s.b, n) || s.b.size != n || !alloy::is_aligned(s.b.ptr, 16) || !intact(s.b, s.id, keep)) {
        ++failures;
        s.b = before;
        break;
      }
      s.align = 16;
    } else {
      CHECK(g.deallocate(s.b));
      s.b = {};
      continue;
    }
    if (!no_overlap(s.b)) ++failures;
    spans[alloy::address_of(s.b.ptr)] = s.b.size;
    fill(s.b, s.id);  // the new bytes too
  }
  CHECK(failures == 0);
  for (Live& s : slots)
    if (s.b) {
      CHECK(intact(s.b, s.id, s.b.size));
      CHECK(g.deallocate(s.b));
    }
  MESSAGE(ops << " operations; " << g.pool().allocator_count() << " regions of 16 KiB");
}
