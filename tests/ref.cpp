#include <alloy/ref.hpp>

#include <alloy/aligned_mallocator.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/mmap_allocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/null_allocator.hpp>

#include <doctest/doctest.h>

#include "support/conformance.hpp"
#include "support/differential.hpp"
#include "support/test_allocators.hpp"

using alloy::Block;
using alloy::Ref;
using alloy::stream_view;
using alloy::Ternary;
using std::size_t;
namespace caps = alloy::test::caps;

// Ref<A> has exactly A's primitives: each capability, both ways.
template <class A>
constexpr bool same_capabilities() {
  using R = Ref<A>;
  return alloy::allocator<R> && R::alignment == A::alignment &&
         alloy::memory_space_of<R>() == alloy::memory_space_of<A>() &&
         alloy::has_aligned_allocate<R> == alloy::has_aligned_allocate<A> &&
         alloy::has_allocate_all<R> == alloy::has_allocate_all<A> &&
         alloy::has_allocate_fresh<R> == alloy::has_allocate_fresh<A> && alloy::has_expand<R> == alloy::has_expand<A> &&
         alloy::has_reallocate<R> == alloy::has_reallocate<A> &&
         alloy::has_aligned_reallocate<R> == alloy::has_aligned_reallocate<A> &&
         alloy::has_owns<R> == alloy::has_owns<A> &&
         alloy::has_resolve_internal_pointer<R> == alloy::has_resolve_internal_pointer<A> &&
         alloy::has_deallocate<R> == alloy::has_deallocate<A> &&
         alloy::has_deallocate_all<R> == alloy::has_deallocate_all<A> && alloy::has_empty<R> == alloy::has_empty<A> &&
         alloy::has_good_alloc_size<R> == alloy::has_good_alloc_size<A> &&
         alloy::has_stream_ordered<R> == alloy::has_stream_ordered<A> && alloy::has_copy<R> == alloy::has_copy<A> &&
         !alloy::has_instance<R> && sizeof(R) == sizeof(void*);
}

struct Minimal {
  static constexpr size_t alignment = 8;
  Block allocate(size_t) noexcept { return {}; }
};
using Full = alloy::test::EveryPrimitive<32, alloy::MemorySpace::host_pinned>;  // every primitive
static_assert(same_capabilities<Minimal>());
static_assert(same_capabilities<Full>());
static_assert(alloy::has_stream_ordered<Ref<Full>> && alloy::has_copy<Ref<Full>> &&
              alloy::has_allocate_fresh<Ref<Full>>);
static_assert(alloy::memory_space_of<Ref<Full>>() == alloy::MemorySpace::host_pinned);
static_assert(same_capabilities<alloy::Mallocator>());
static_assert(same_capabilities<alloy::AlignedMallocator>());
static_assert(same_capabilities<alloy::MmapAllocator>());
static_assert(same_capabilities<alloy::NullAllocator>());
static_assert(same_capabilities<alloy::NoAccessAllocator>());
static_assert(same_capabilities<alloy::test::CheckedHeap<16, caps::expand | caps::aligned>>());
static_assert(same_capabilities<Ref<alloy::Mallocator>>());  // a Ref of a Ref
static_assert(alloy::memory_space_of<Ref<alloy::NoAccessAllocator>>() == alloy::MemorySpace::device);
static_assert(std::is_trivially_copyable_v<Ref<Full>>);
static_assert(std::is_convertible_v<alloy::Mallocator&, Ref<alloy::Mallocator>>);   // from A&: implicit
static_assert(!std::is_convertible_v<alloy::Mallocator*, Ref<alloy::Mallocator>>);  // from A*: explicit
static_assert(std::is_constructible_v<Ref<alloy::Mallocator>, alloy::Mallocator*>);

using Heap = alloy::test::CheckedHeap<16, caps::expand | caps::aligned>;

TEST_CASE("Ref: every call reaches the shared allocator") {
  Heap h;
  Ref<Heap> r(h), s(&h);
  CHECK(r == s);
  CHECK(&r.get() == &h);
  Block b = r.allocate(10);
  CHECK(h.is_live(b));
  CHECK(s.expand(b, 20));  // another Ref, the same heap
  CHECK(h.is_live(b));
  CHECK(b.size == 30);
  const Ref<Heap> c = r;  // a const Ref still allocates
  Block d = c.aligned_allocate(5, 256);
  CHECK(alloy::is_aligned(d.ptr, 256));
  CHECK(h.live_blocks() == 2);
  CHECK(c.deallocate(d));
  CHECK(r.deallocate(b));
  CHECK(h.live_blocks() == 0);
  Heap other;
  CHECK_FALSE(Ref<Heap>(other) == r);
}

TEST_CASE("Ref: forwards the answers of the full set") {
  alloy::NullAllocator n;
  Ref<alloy::NullAllocator> r(n);
  Block b{};
  CHECK(r.expand(b, 0));
  CHECK(!r.allocate_all());
  CHECK(r.owns({}) == Ternary::no);
  CHECK(r.resolve_internal_pointer(&n, b) == Ternary::no);
  CHECK(r.empty() == Ternary::yes);
  CHECK(r.deallocate_all());
  alloy::NoAccessAllocator dev;
  Ref<alloy::NoAccessAllocator> rd(dev);
  Block x = rd.allocate(100);
  CHECK(rd.good_alloc_size(100) == 4096);
  CHECK(rd.copy(x.ptr, "abc", 4, {}));
  char back[4] = {};
  CHECK(rd.copy(back, x.ptr, 4, {}));
  CHECK(back[2] == 'c');
  CHECK(rd.owns(x) == Ternary::yes);
  CHECK(rd.deallocate(x));
}

TEST_CASE("Ref: conformance over a shared heap") {
  Heap h;
  alloy::test::check_allocator([&] { return Ref<Heap>(h); });
  CHECK(h.live_blocks() == 0);
  alloy::test::check_allocator([] { return Ref<const alloy::Mallocator>(alloy::Mallocator::instance); });
  static alloy::NoAccessAllocator dev;
  alloy::test::check_allocator([] { return Ref<alloy::NoAccessAllocator>(dev); });
}

TEST_CASE("Ref: randomized, several Refs interleaved over one heap") {
  Heap h;
  Ref<Heap> r(h);
  alloy::test::DiffOptions o;
  o.ops = 100'000;
  o.max_size = 1024;
  const auto st = alloy::test::run_differential(r, o);
  CHECK(st.expansions > 100);
  CHECK(st.deallocations > 1000);
  CHECK(h.live_blocks() == 0);
  alloy::AlignedMallocator am;
  Ref<alloy::AlignedMallocator> ra(am);
  o.seed = 7;
  const auto st2 = alloy::test::run_differential(ra, o);
  CHECK(st2.reallocations > 1000);
}

// Each primitive answers with its own mark, so a Ref that forwards a call to another primitive of A is seen.
struct Marks {
  static constexpr size_t alignment = 16;
  alignas(16) std::byte mem[64];
  int plain = 0, fresh = 0, stream_allocs = 0, frees = 0, stream_frees = 0, frees_all = 0;
  Block allocate(size_t n) noexcept {
    ++plain;
    return {mem, n};
  }
  Block allocate_fresh(size_t n) noexcept {
    ++fresh;
    return {mem + 16, n};
  }
  Block allocate(stream_view, size_t n) noexcept {
    ++stream_allocs;
    return {mem + 32, n};
  }
  bool deallocate(Block) noexcept {
    ++frees;
    return true;
  }
  bool deallocate(stream_view, Block) noexcept {
    ++stream_frees;
    return true;
  }
  bool deallocate_all() noexcept {
    ++frees_all;
    return false;
  }
  Ternary empty() noexcept { return Ternary::no; }
};
static_assert(same_capabilities<Marks>());

TEST_CASE("Ref: each call reaches the same primitive of A") {
  Marks m;
  const Ref<Marks> r(m);
  CHECK(r.allocate_fresh(8).ptr == m.mem + 16);
  CHECK(r.allocate(stream_view{}, 8).ptr == m.mem + 32);
  CHECK(r.deallocate(stream_view{}, Block{m.mem + 32, 8}));
  CHECK_FALSE(r.deallocate_all());
  CHECK(r.empty() == Ternary::no);
  CHECK(m.plain == 0);
  CHECK(m.fresh == 1);
  CHECK(m.stream_allocs == 1);
  CHECK(m.frees == 0);
  CHECK(m.stream_frees == 1);
  CHECK(m.frees_all == 1);
}
