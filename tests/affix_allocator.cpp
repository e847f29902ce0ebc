// ctest-labels: heavy
#include <alloy/affix_allocator.hpp>

#include <alloy/aligned_mallocator.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/mmap_allocator.hpp>
#include <alloy/region.hpp>

#include <cstdint>
#include <span>
#include <vector>

#include <doctest/doctest.h>

#include "support/bump_model.hpp"
#include "support/conformance.hpp"
#include "support/differential.hpp"
#include "support/rng.hpp"
#include "support/test_allocators.hpp"

using alloy::AffixAllocator;
using alloy::Block;
using alloy::Mallocator;
using alloy::Ternary;
using Arena = alloy::Region<Mallocator>;
using Heap = alloy::test::CheckedHeap<16>;
using BBI = alloy::BitmappedBlockWithInternalPointers<64, 16, Mallocator>;

template <class A, class P, class S>
inline constexpr bool alloy::test::deallocates_last_only<AffixAllocator<A, P, S>> = alloy::test::deallocates_last_only<A>;

// Capabilities, with their iff rules.
using M8 = AffixAllocator<Mallocator, std::uint64_t>;
using M8S = AffixAllocator<Mallocator, std::uint64_t, std::uint32_t>;
static_assert(alloy::has_deallocate<M8> && alloy::has_reallocate<M8> && !alloy::has_owns<M8> && !alloy::has_expand<M8>);
static_assert(alloy::has_reallocate<M8S>);  // a trivially copyable suffix moves with the block
struct Counted {  // not trivially destructible or copyable
  int n = 0;
  ~Counted() { n = -1; }
  Counted() = default;
  Counted(const Counted& o) : n(o.n) {}
};
static_assert(!alloy::has_reallocate<AffixAllocator<Mallocator, std::uint64_t, Counted>>);
static_assert(alloy::has_expand<AffixAllocator<Arena, std::uint64_t>> && !alloy::has_expand<AffixAllocator<Arena, std::uint64_t, std::uint64_t>>);
static_assert(alloy::has_allocate_all<AffixAllocator<Arena, std::uint64_t>> &&
              !alloy::has_allocate_all<AffixAllocator<Arena, std::uint64_t, std::uint64_t>>);
static_assert(alloy::has_deallocate_all<AffixAllocator<Arena, std::uint64_t>> &&
              !alloy::has_deallocate_all<AffixAllocator<Arena, Counted>>);
static_assert(alloy::has_owns<AffixAllocator<Arena, std::uint64_t>> && alloy::has_empty<AffixAllocator<Arena, std::uint64_t>>);
static_assert(alloy::has_resolve_internal_pointer<AffixAllocator<BBI, std::uint64_t, std::uint64_t>>);
// Alignment: D's rule.
static_assert(M8::alignment == 8 && AffixAllocator<Mallocator, void, std::uint64_t>::alignment == 16);
static_assert(AffixAllocator<Mallocator, char[3]>::alignment == 1 && AffixAllocator<Mallocator, char[32]>::alignment == 16);
static_assert(AffixAllocator<alloy::MmapAllocator, char[48]>::alignment == 16);
static_assert(sizeof(M8) == 1 && std::is_empty_v<M8>);  // a stateless parent costs nothing

template <class T>
concept has_prefix = requires(Block b) { T::prefix(b); };
template <class T>
concept has_suffix = requires(Block b) { T::suffix(b); };
static_assert(has_prefix<M8> && !has_suffix<M8> && has_suffix<AffixAllocator<Mallocator, void, int>> &&
              !has_prefix<AffixAllocator<Mallocator, void, int>>);

TEST_CASE_TEMPLATE("AffixAllocator: conformance", A, M8, M8S, AffixAllocator<Mallocator, void, std::uint64_t>,
                   AffixAllocator<Mallocator, char[3], char>, AffixAllocator<Mallocator, Counted, Counted>,
                   AffixAllocator<Heap, std::uint64_t, std::uint64_t>, AffixAllocator<alloy::AlignedMallocator, std::uint32_t>,
                   AffixAllocator<alloy::MmapAllocator, std::uint64_t>) {
  alloy::test::check_allocator([] { return A{}; });
}

TEST_CASE("AffixAllocator: conformance over a Region and a BitmappedBlock") {
  alloy::test::check_allocator([] { return AffixAllocator<Arena, std::uint64_t>(Arena(1 << 16)); });
  alloy::test::check_allocator([] { return AffixAllocator<Arena, std::uint64_t, std::uint32_t>(Arena(1 << 16)); });
  alloy::test::check_allocator([] { return AffixAllocator<BBI, std::uint64_t, std::uint64_t>(BBI(1 << 16)); });
}

TEST_CASE("AffixAllocator: D's unittest; layout; the affixes survive reallocate") {
  using A = AffixAllocator<Mallocator, std::size_t, std::size_t>;
  A a;
  Block b = a.allocate(11);
  A::prefix(b) = 0xCAFEBABE;
  A::suffix(b) = 0xDEADBEEF;
  CHECK(A::prefix(b) == 0xCAFEBABE);
  CHECK(A::suffix(b) == 0xDEADBEEF);
  // 8 + 11 = 19, rounded to 24, + 8: the suffix sits at 24 - 8 = 16 bytes past the payload's start
  CHECK(reinterpret_cast<std::byte*>(&A::suffix(b)) - static_cast<std::byte*>(b.ptr) == 16);
  std::memset(b.ptr, 0x5A, 11);
  CHECK(a.reallocate(b, 5000));
  CHECK(A::prefix(b) == 0xCAFEBABE);
  CHECK(A::suffix(b) == 0xDEADBEEF);
  CHECK(static_cast<unsigned char*>(b.ptr)[10] == 0x5A);
  CHECK(a.reallocate(b, 3));
  CHECK(A::suffix(b) == 0xDEADBEEF);
  CHECK(a.deallocate(b));
  CHECK(!AffixAllocator<alloy::NullAllocator, std::size_t>().allocate(100));
  CHECK(!a.allocate(SIZE_MAX - 4));  // the affixes overflow the size
}

TEST_CASE("AffixAllocator: the parent sees the whole block; good_alloc_size") {
  AffixAllocator<Heap, std::uint64_t, std::uint32_t> a;
  const Block b = a.allocate(10);
  CHECK(a.parent().is_live(Block{static_cast<std::byte*>(b.ptr) - 8, 24}));  // 8 + 10 -> 20 + 4
  CHECK(a.deallocate(b));
  CHECK(a.parent().live_blocks() == 0);
  AffixAllocator<Arena, std::uint64_t> r(Arena(4096));
  CHECK(r.good_alloc_size(1) == 8);     // 9 bytes take 16 in the region: 8 of them the payload's
  CHECK(r.good_alloc_size(9) == 24);
  CHECK(r.good_alloc_size(SIZE_MAX) == 0);
  const Block all = r.allocate_all();
  CHECK(all.size == 4096 - 8);
  CHECK(r.empty() == Ternary::no);
  CHECK(r.deallocate(all));
  CHECK(r.empty() == Ternary::yes);
}

TEST_CASE("AffixAllocator: resolve_internal_pointer strips the affixes") {
  AffixAllocator<BBI, std::uint64_t, std::uint64_t> a(BBI(1 << 14));
  const Block b = a.allocate(100);
  Block r{};
  CHECK(a.resolve_internal_pointer(static_cast<std::byte*>(b.ptr) + 50, r) == Ternary::yes);
  CHECK(r.ptr == b.ptr);
  CHECK(r.size >= b.size);
  CHECK(a.resolve_internal_pointer(static_cast<std::byte*>(b.ptr) - 4, r) == Ternary::no);  // in the prefix
  CHECK(a.deallocate(b));
}

struct Tracked {
  static inline int live = 0;
  Tracked() noexcept { ++live; }
  ~Tracked() { --live; }
};

TEST_CASE("AffixAllocator: prefix and suffix are constructed and destroyed") {
  AffixAllocator<Mallocator, void, Tracked> a;
  static_assert(decltype(a)::alignment == 16);
  const Block b = a.allocate(7), c = a.allocate(70);
  CHECK(Tracked::live == 2);
  CHECK(a.deallocate(b));
  CHECK(a.deallocate(c));
  CHECK(Tracked::live == 0);
}

// Model: the same region, asked for the whole block; the payload is 8 bytes in.
struct AffixModel {
  alloy::test::BumpModel<16, false> bump;
  AffixModel(const void* p, std::size_t n) : bump(p, n) {}
  static std::size_t whole(std::size_t n) { return n + 8; }
  Block allocate(std::size_t n) {
    const Block r = n ? bump.allocate(whole(n)) : Block{};
    return r ? Block{static_cast<std::byte*>(r.ptr) + 8, n} : Block{};
  }
  bool deallocate(Block b) { return !b || bump.deallocate(Block{static_cast<std::byte*>(b.ptr) - 8, whole(b.size)}); }
  bool expand(Block& b, std::size_t d) {
    if (d == 0) return true;
    if (!b) return false;
    Block r{static_cast<std::byte*>(b.ptr) - 8, whole(b.size)};
    if (!bump.expand(r, d)) return false;
    b.size += d;
    return true;
  }
  bool deallocate_all() { return bump.deallocate_all(); }
  Ternary empty() { return bump.empty(); }
};

TEST_CASE("AffixAllocator: randomized against a bump pointer over the same addresses (10^6 operations)") {
  alignas(16) static std::byte buf[12 * 1024];
  AffixAllocator<alloy::Region<>, std::uint64_t> a{alloy::Region<>(std::span<std::byte>(buf))};
  AffixModel model(buf, sizeof buf);
  alloy::test::DiffOptions o;
  o.ops = 1'000'000;
  o.max_size = 300;
  o.slots = 64;
  o.deallocate_all_every = 500;
  const auto st = alloy::test::run_differential(a, model, o);
  CHECK(st.allocations > 100'000);
  CHECK(st.deallocations > 5'000);
  CHECK(st.expansions > 1'000);
  CHECK(st.failures > 0);
}

TEST_CASE("AffixAllocator: randomized, every affix checked on every visit (10^6 operations)") {
  using A = AffixAllocator<Mallocator, std::uint64_t, std::uint32_t>;
  A a;
  alloy::test::Rng rng{42};
  std::vector<Block> slots(256);
  auto tag = [](Block b) { return alloy::address_of(b.ptr) * 0x9E3779B97F4A7C15ull ^ b.size; };
  std::size_t bad = 0, reallocs = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    Block& b = slots[rng.below(slots.size())];
    if (!b) {
      b = a.allocate(1 + rng.below(200));
      REQUIRE(b);
      A::prefix(b) = tag(b);
      A::suffix(b) = static_cast<std::uint32_t>(~tag(b));
      std::memset(b.ptr, static_cast<int>(tag(b) & 0xFF), b.size);
      continue;
    }
    const auto t = tag(b);
    bad += A::prefix(b) != t || A::suffix(b) != static_cast<std::uint32_t>(~t) ||
           static_cast<unsigned char*>(b.ptr)[b.size - 1] != (t & 0xFF);
    if (rng.below(4) == 0) {
      const std::size_t n = 1 + rng.below(400);
      const std::size_t keep = std::min(n, b.size);
      const auto first = static_cast<unsigned char*>(b.ptr)[0];
      REQUIRE(a.reallocate(b, n));
      ++reallocs;
      bad += A::prefix(b) != t || A::suffix(b) != static_cast<std::uint32_t>(~t) ||
             static_cast<unsigned char*>(b.ptr)[keep - 1] != first;
      A::prefix(b) = tag(b);
      A::suffix(b) = static_cast<std::uint32_t>(~tag(b));
      std::memset(b.ptr, static_cast<int>(tag(b) & 0xFF), b.size);
    } else {
      CHECK(a.deallocate(b));
      b = {};
    }
  }
  for (Block b : slots) CHECK(a.deallocate(b));
  CHECK(bad == 0);
  CHECK(reallocs > 100'000);
}
