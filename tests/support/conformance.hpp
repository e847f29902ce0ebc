#pragma once
// check_allocator(make): D's testAllocator for alloy. `make()` returns a fresh allocator (a prvalue, so allocators that
// cannot move work too). One check per capability the allocator declares; each check runs on a fresh allocator.
// An allocator that cannot serve a 1-byte request (NullAllocator, an exhausted arena) is checked to fail everywhere.
#include <alloy/common.hpp>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <doctest/doctest.h>

#include "support/patterns.hpp"

namespace alloy::test {

template <class A>
void check_block_shape(Block b, std::size_t n, std::size_t align = A::alignment) {
  REQUIRE(b);
  CHECK(b.size == n);
  CHECK(is_aligned(b.ptr, align));
}

template <class A>
void check_owns_live(A& a, Block b) {
  if constexpr (has_owns<A>) {
    CHECK(a.owns(b) == Ternary::yes);
    CHECK(a.owns(Block{}) == Ternary::no);
  } else {
    (void)a, (void)b;
  }
}

inline bool overlap(Block x, Block y) noexcept {
  const auto a = address_of(x.ptr), b = address_of(y.ptr);
  return a < b + y.size && b < a + x.size;
}

// Specialize to true for an allocator that takes back only its most recent block (Region and its kin): the
// conformance check then gives blocks back newest first and rewinds with deallocate_all where padding is left.
template <class A>
inline constexpr bool deallocates_last_only = false;

}  // namespace alloy::test

namespace alloy {  // declared here, so that every test file gets the regions' answer without including them
template <class Parent, std::size_t MinAlign, GrowDownwards Downwards>
class Region;
template <class Parent, std::size_t MinAlign, GrowDownwards Downwards>
class SharedRegion;
template <std::size_t Size, std::size_t MinAlign>
class InSituRegion;
}  // namespace alloy

namespace alloy::test {

template <class P, std::size_t M, GrowDownwards D>
inline constexpr bool deallocates_last_only<Region<P, M, D>> = true;
template <class P, std::size_t M, GrowDownwards D>
inline constexpr bool deallocates_last_only<SharedRegion<P, M, D>> = true;
template <std::size_t S, std::size_t M>
inline constexpr bool deallocates_last_only<InSituRegion<S, M>> = true;

// Allocates 1-byte blocks until one fails (at most `cap`); the count, and the blocks in `out`.
template <class A>
std::size_t fill(A& a, std::vector<Block>& out, std::size_t cap = 1 << 14) {
  out.clear();
  while (out.size() < cap)
    if (Block b = a.allocate(1)) out.push_back(b); else break;
  return out.size();
}

template <class Make>
void check_allocator(Make make) {
  using A = std::remove_cvref_t<decltype(make())>;
  static_assert(allocator<A>, "check_allocator: not an alloy::allocator");
  static_assert(is_power_of_two(A::alignment));
  constexpr std::size_t huge[] = {SIZE_MAX, SIZE_MAX - 1, SIZE_MAX - A::alignment + 1, SIZE_MAX / 2 + 1};

  bool serves = false;
  {
    auto a = make();
    if constexpr (has_empty<A>) CHECK(a.empty() != Ternary::no);
    CHECK(!a.allocate(0));
    for (std::size_t n : huge) CHECK(!a.allocate(n));  // rounding must not wrap around
    Block b = a.allocate(1);
    serves = static_cast<bool>(b);
    if (serves) {
      check_block_shape<A>(b, 1);
      write_pattern(a, b, 1);
      CHECK(check_pattern(a, b, 1, 1));
      check_owns_live(a, b);
      if constexpr (has_empty<A>) CHECK(a.empty() == Ternary::no);
      if constexpr (has_deallocate<A>) {
        CHECK(a.deallocate(b));
        if constexpr (has_empty<A>) CHECK(a.empty() != Ternary::no);
      }
    }
    if constexpr (has_deallocate<A>) CHECK(a.deallocate(Block{}));
    if constexpr (has_owns<A>) CHECK(a.owns(Block{}) == Ternary::no);
  }

  // Many live blocks of assorted sizes: exact sizes, alignment, no overlap, contents intact.
  if (serves) {
    auto a = make();
    std::vector<Block> live;
    const std::size_t sizes[] = {1, 7, 8, 16, 31, 64, 100, 128, 255, 256, 1000, 4096};
    for (std::size_t i = 0; i < 48; ++i) {
      const std::size_t n = sizes[i % std::size(sizes)];
      Block b = a.allocate(n);
      if (!b) break;
      check_block_shape<A>(b, n);
      for (Block o : live) CHECK_FALSE(overlap(b, o));
      write_pattern(a, b, live.size() + 100);
      live.push_back(b);
    }
    CHECK(!live.empty());
    for (std::size_t i = 0; i < live.size(); ++i) {
      CHECK(check_pattern(a, live[i], i + 100, live[i].size));
      check_owns_live(a, live[i]);
    }
    if constexpr (has_owns<A>) {
      alignas(64) static unsigned char foreign[64];
      CHECK(a.owns(Block{foreign, sizeof foreign}) != Ternary::yes);
    }
    if constexpr (has_resolve_internal_pointer<A>) {
      for (Block b : live) {
        Block r{};
        const auto* mid = static_cast<const unsigned char*>(b.ptr) + b.size / 2;
        CHECK(a.resolve_internal_pointer(mid, r) == Ternary::yes);
        CHECK(address_of(r.ptr) <= address_of(b.ptr));
        CHECK(r.end_address() >= b.end_address());
      }
    }
    if constexpr (has_resolve_internal_pointer<A>) {  // the block found is the live block's, no other's
      for (std::size_t i = 0; i < live.size(); ++i) {
        Block r{};
        if (a.resolve_internal_pointer(live[i].ptr, r) != Ternary::yes) continue;
        for (std::size_t j = 0; j < live.size(); ++j)
          if (j != i) CHECK_FALSE(overlap(r, live[j]));
      }
    }
    if constexpr (has_owns<A>) CHECK(a.owns(Block{live[0].ptr, SIZE_MAX / 2}) != Ternary::yes);
    if constexpr (has_deallocate<A>) {
      if constexpr (has_empty<A> && !deallocates_last_only<A>) {  // not empty while any block is live
        for (std::size_t i = 0; i + 1 < live.size(); ++i) {
          CHECK(a.deallocate(live[i]));
          CHECK(a.empty() == Ternary::no);
        }
        CHECK(a.deallocate(live.back()));
      } else {
        for (auto it = live.rbegin(); it != live.rend(); ++it) CHECK(a.deallocate(*it));
      }
      if constexpr (has_empty<A>) CHECK(a.empty() != Ternary::no);
      std::vector<Block> f;  // deallocate gave the memory back: a full allocator fills as far again
      const std::size_t k1 = fill(a, f);
      for (auto it = f.rbegin(); it != f.rend(); ++it) CHECK(a.deallocate(*it));
      const std::size_t k2 = fill(a, f);
      CHECK(k2 == k1);
      for (auto it = f.rbegin(); it != f.rend(); ++it) CHECK(a.deallocate(*it));
    } else if constexpr (has_deallocate_all<A>) {
      CHECK(a.deallocate_all());
    }
    if constexpr (has_resolve_internal_pointer<A> && (has_deallocate<A> || has_deallocate_all<A>)) {
      for (Block b : live) {  // nothing is live now: no pointer resolves (D also "resolves" freed blocks)
        Block r{};
        CHECK(a.resolve_internal_pointer(b.ptr, r) != Ternary::yes);
      }
    }
  }

  if constexpr (has_aligned_allocate<A>) {
    auto a = make();
    for (std::size_t n : huge) CHECK(!a.aligned_allocate(n, 64));
    CHECK(!a.aligned_allocate(0, 64));
    std::vector<Block> live;
    for (std::size_t al = 1; al <= 4096; al *= 2) {
      for (std::size_t n : {std::size_t{1}, std::size_t{24}, std::size_t{200}}) {
        Block b = a.aligned_allocate(n, al);
        if (!b) continue;
        check_block_shape<A>(b, n, al);
        for (Block o : live) CHECK_FALSE(overlap(b, o));
        check_owns_live(a, b);
        live.push_back(b);
      }
    }
    if (serves) CHECK(!live.empty());
    if constexpr (has_deallocate<A> && deallocates_last_only<A>) {  // padding before an aligned block stays
      if (!live.empty()) CHECK(a.deallocate(live.back()));
      if constexpr (has_deallocate_all<A>) CHECK(a.deallocate_all());
    } else if constexpr (has_deallocate<A>) {
      for (Block b : live) CHECK(a.deallocate(b));
      if constexpr (has_empty<A>) CHECK(a.empty() != Ternary::no);
    }
  }

  if constexpr (has_expand<A>) {
    auto a = make();
    Block z{};
    CHECK(a.expand(z, 0));
    CHECK(!z);
    CHECK_FALSE(a.expand(z, 16));  // the null block cannot grow in place (D's contract)
    CHECK(!z);
    Block b = a.allocate(24);
    // A neighbour that expanding b must not run into; not where only the last block can grow (Region), whose
    // in-place expand would then never be tried.
    const Block fence = b && !deallocates_last_only<A> ? a.allocate(8) : Block{};
    if (b) {
      write_pattern(a, b, 7);
      const Block before = b;
      CHECK(a.expand(b, 0));
      CHECK(b == before);
      CHECK_FALSE(a.expand(b, SIZE_MAX));
      CHECK(b == before);
      CHECK_FALSE(a.expand(b, SIZE_MAX - b.size));
      CHECK(b == before);
      if (a.expand(b, 40)) {
        CHECK(b.ptr == before.ptr);
        CHECK(b.size == 64);
        if (fence) CHECK_FALSE(overlap(b, fence));
        check_owns_live(a, b);
      } else {
        CHECK(b == before);
      }
      CHECK(check_pattern(a, b, 7, 24));
      if constexpr (has_deallocate<A>) {
        CHECK(a.deallocate(b));
        if (fence) CHECK(a.deallocate(fence));
      }
    }
  }

  if constexpr (has_reallocate<A>) {
    auto a = make();
    Block b = a.allocate(40);
    const Block fence = b ? a.allocate(8) : Block{};  // growing b cannot stay in place: the move path runs
    if (b) {
      write_pattern(a, b, 9);
      const Block before = b;
      CHECK(a.reallocate(b, 40));
      CHECK(b == before);
      CHECK_FALSE(a.reallocate(b, SIZE_MAX));
      CHECK(b == before);
      if (a.reallocate(b, 300)) {
        check_block_shape<A>(b, 300);
        CHECK(check_pattern(a, b, 9, 40));
        if (fence) CHECK_FALSE(overlap(b, fence));
        check_owns_live(a, b);
      } else {
        CHECK(b == before);
      }
      if (a.reallocate(b, 20)) {
        check_block_shape<A>(b, 20);
        CHECK(check_pattern(a, b, 9, 40));
      }
      const Block last = b;
      if (a.reallocate(b, 0)) CHECK(!b);  // resize to nothing: b is given back and empty
      else CHECK(b == last);
      if constexpr (has_deallocate<A>) CHECK(a.deallocate(b));
      alloy::deallocate(a, fence);  // (may be refused where only the last block goes back)
    }
  }

  if constexpr (has_aligned_reallocate<A>) {
    auto a = make();
    Block b = has_aligned_allocate<A> ? a.aligned_allocate(50, 64) : a.allocate(50);
    const Block fence = b ? a.allocate(8) : Block{};
    if (b) {
      write_pattern(a, b, 11);
      const Block before = b;
      CHECK_FALSE(a.aligned_reallocate(b, SIZE_MAX, 64));
      CHECK(b == before);
      if (a.aligned_reallocate(b, 500, 256)) {
        check_block_shape<A>(b, 500, 256);
        CHECK(check_pattern(a, b, 11, 50));
        if (fence) CHECK_FALSE(overlap(b, fence));
      } else {
        CHECK(b == before);
      }
      if constexpr (has_deallocate<A>) CHECK(a.deallocate(b));
      alloy::deallocate(a, fence);  // (may be refused where only the last block goes back)
    }
  }

  if constexpr (has_allocate_all<A>) {
    auto a = make();  // with a block live: all of the rest, or nothing; never the live block's memory
    if (Block b = a.allocate(1)) {
      if (Block all = a.allocate_all()) CHECK_FALSE(overlap(all, b));
    }
  }

  if constexpr (has_allocate_all<A>) {
    auto a = make();
    Block all = a.allocate_all();
    if (serves) {
      REQUIRE(all);
      CHECK(is_aligned(all.ptr, A::alignment));
      CHECK(!a.allocate(1));  // nothing is left
      check_owns_live(a, all);
      if constexpr (has_empty<A>) CHECK(a.empty() == Ternary::no);
      if constexpr (has_deallocate<A>) CHECK(a.deallocate(all));
      else if constexpr (has_deallocate_all<A>) CHECK(a.deallocate_all());
      if constexpr (has_empty<A>) CHECK(a.empty() != Ternary::no);
      CHECK(a.allocate(1));  // (leaked into a's own memory, released with a)
    }
  }

  if constexpr (has_deallocate_all<A>) {
    auto a = make();
    std::vector<Block> live;
    for (int i = 0; i < 8; ++i)
      if (Block b = a.allocate(32 + i)) live.push_back(b);
    CHECK(a.deallocate_all());
    if constexpr (has_empty<A>) CHECK(a.empty() == Ternary::yes);
    if (serves) {
      Block b = a.allocate(32);
      CHECK(b);
      CHECK(a.deallocate_all());
      std::vector<Block> f;  // deallocate_all gave everything back: a full allocator fills as far again
      const std::size_t k1 = fill(a, f);
      CHECK(a.deallocate_all());
      CHECK(fill(a, f) == k1);
      CHECK(a.deallocate_all());
    }
  }

  if constexpr (has_allocate_fresh<A>) {
    auto a = make();
    CHECK(!a.allocate_fresh(0));
    Block b = a.allocate_fresh(10);
    if (serves) {
      check_block_shape<A>(b, 10);
      if constexpr (has_deallocate<A>) CHECK(a.deallocate(b));
      Block c = a.allocate_fresh(10);  // never-used memory: not b's
      if (c) CHECK(c.ptr != b.ptr);
      if constexpr (has_deallocate<A>) CHECK(a.deallocate(c));
    }
  }

  {
    // The size hint (docs/primitives.md): at least n rounded up to the alignment, whether or not a request of n can
    // succeed now (past a block's capacity, on an allocator that serves nothing, above PTRDIFF_MAX where no object
    // fits); 0 only when that rounding overflows.
    auto a = make();
    constexpr std::size_t al = A::alignment;
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{17}, std::size_t{1000},
                          std::size_t{1} << 20, std::size_t{1} << 40, std::size_t{PTRDIFF_MAX} - al + 1,
                          std::size_t{PTRDIFF_MAX} + 1,
                          SIZE_MAX - al + 1, SIZE_MAX - al + 2, SIZE_MAX}) {
      CAPTURE(n);
      const std::size_t g = alloy::good_alloc_size(a, n);
      std::size_t r = 0;
      if (!round_up_checked(n, al, r)) {
        CHECK(g == 0);
        continue;
      }
      CHECK(g >= r);
      if (n == 0 || n > 1000) continue;
      if (serves) {
        Block b = a.allocate(g);  // a request of exactly good_alloc_size bytes is as good as one of n
        if (b) CHECK(b.size == g);
        alloy::deallocate(a, b);
      }
    }
  }

  if constexpr (has_instance<A>) {  // D's `instance`: the one object of a stateless allocator serves every primitive
    static_assert(stateless_allocator<A>, "check_allocator: an allocator with `instance` must hold no state");
    static_assert(allocator<const A>, "check_allocator: `instance` is const: make the primitives const members");
    const A& one = A::instance;
    Block b = one.allocate(8);
    if (serves) {
      check_block_shape<A>(b, 8);
      if constexpr (has_owns<const A>) CHECK(one.owns(b) == Ternary::yes);
      if constexpr (has_deallocate<const A>) CHECK(one.deallocate(b));
    }
  }

  if constexpr (has_stream_ordered<A>) {
    auto a = make();
    Block b = a.allocate(stream_view{}, 64);
    if (serves) {
      check_block_shape<A>(b, 64);
      CHECK(a.deallocate(stream_view{}, b));
    }
  }
}

}  // namespace alloy::test
