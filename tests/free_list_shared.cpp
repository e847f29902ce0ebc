#include <alloy/free_list.hpp>

#include <alloy/mallocator.hpp>
#include <alloy/region.hpp>

#include <span>
#include <vector>

#include <doctest/doctest.h>

#include "support/conformance.hpp"
#include "support/differential.hpp"
#include "support/free_list_model.hpp"
#include "support/test_allocators.hpp"

using alloy::Block;
using alloy::choose_at_runtime;
using alloy::Mallocator;
using alloy::SharedFreeList;
using alloy::Ternary;
using alloy::unbounded;
using Arena = alloy::Region<Mallocator>;

static_assert(alloy::has_deallocate<SharedFreeList<Mallocator, 64>> && alloy::has_good_alloc_size<SharedFreeList<Mallocator, 64>>);
static_assert(!alloy::has_expand<SharedFreeList<Arena, 64>> && !alloy::has_reallocate<SharedFreeList<Mallocator, 64>>);
static_assert(alloy::has_owns<SharedFreeList<Arena, 64>> && alloy::has_deallocate_all<SharedFreeList<Arena, 64>>);
static_assert(!alloy::has_owns<SharedFreeList<Mallocator, 64>> && !alloy::has_deallocate_all<SharedFreeList<Mallocator, 64>>);
static_assert(!std::is_copy_constructible_v<SharedFreeList<Mallocator, 64>> && !std::is_move_constructible_v<SharedFreeList<Mallocator, 64>>);
static_assert(std::is_constructible_v<SharedFreeList<Mallocator, choose_at_runtime, choose_at_runtime, choose_at_runtime>, int, int, int>);
#if defined(__x86_64__) && !defined(__clang__)
static_assert(SharedFreeList<Mallocator, 64>::lock_free);
#endif

TEST_CASE_TEMPLATE("SharedFreeList: conformance", A, SharedFreeList<Mallocator, 64>, SharedFreeList<Mallocator, 16, 128>,
                   SharedFreeList<Mallocator, 0, 4096, 10>, SharedFreeList<alloy::test::CheckedHeap<16>, 8, 64, 4>) {
  alloy::test::check_allocator([] { return A{}; });
}

TEST_CASE("SharedFreeList: conformance with run-time bounds, over a Region") {
  alloy::test::check_allocator([] { return SharedFreeList<Mallocator, choose_at_runtime, choose_at_runtime>(16, 256); });
  alloy::test::check_allocator([] { return SharedFreeList<Mallocator, 16, 128, choose_at_runtime>(3); });
  alloy::test::check_allocator([] { return SharedFreeList<Arena, 0, 4096>(Arena(1 << 20)); });
}

TEST_CASE("SharedFreeList: D's unittests; the cap sends blocks back to the parent") {
  SharedFreeList<Mallocator, 64, 128, 10> a;
  CHECK(a.good_alloc_size(1) == 16);
  CHECK(a.good_alloc_size(100) == 128);
  const Block b = a.allocate(100);
  CHECK(b.size == 100);
  CHECK(a.deallocate(b));
  const Block c96 = a.allocate(96);
  CHECK(c96.ptr == b.ptr);
  CHECK(c96.size == 96);  // D's SharedFreeList hands out 128 bytes here; alloy, the 96 asked
  CHECK(a.deallocate(c96));

  SharedFreeList<alloy::test::CheckedHeap<16>, 64, 64, 3> c;
  std::vector<Block> v;
  for (int i = 0; i < 10; ++i) v.push_back(c.allocate(64));
  for (Block x : v) CHECK(c.deallocate(x));
  CHECK(c.parent().live_blocks() == 3);  // 3 on the list, 7 given back (CheckedHeap checks each size)
  c.minimize();
  CHECK(c.parent().live_blocks() == 0);
}

TEST_CASE("SharedFreeList: randomized, one thread, against FreeList's model (10^6 operations)") {
  alignas(16) static std::byte buf[256 * 1024];
  SharedFreeList<alloy::Region<>, 17, 128> fl{alloy::Region<>(std::span<std::byte>(buf))};
  struct Model : alloy::test::FreeListModel<17, 128> {  // (no expand: SharedFreeList has none)
    using FreeListModel::FreeListModel;
    bool expand(Block&, std::size_t) = delete;
  } model(buf, sizeof buf);
  alloy::test::DiffOptions o;
  o.ops = 1'000'000;
  o.max_size = 140;
  o.slots = 128;
  o.deallocate_all_every = 4'000;
  const auto st = alloy::test::run_differential(fl, model, o);
  CHECK(st.allocations > 100'000);
  CHECK(st.deallocations > 50'000);
  CHECK(st.deallocate_alls > 100);
}

// The threaded cases are the suite every Shared block runs (tests/thread_safety.cpp: unbounded, capped at compile
// time and at run time, with eligible and ineligible sizes, and a reuse round that finds a node on the list twice).

TEST_CASE("SharedFreeList: the tagged head refuses a stale compare-and-swap (ABA)") {
  // The interleaving that breaks an untagged Treiber stack, replayed on the head: a pop reads head A (next B) and
  // stalls; meanwhile A and B are popped and A is pushed back, so the head's pointer is A again. The stalled
  // compare-and-swap (A -> B) must fail, or B, which its owner is using, would be back on the list.
  alignas(16) static unsigned char a[16], b[16];
  alloy::detail::TaggedHead h;
  alloy::detail::TaggedPointer cur = h.load();
  CHECK(h.compare_exchange(cur, {b, cur.tag + 1}));  // push b
  cur = h.load();
  CHECK(h.compare_exchange(cur, {a, cur.tag + 1}));  // push a: list a, b
  const alloy::detail::TaggedPointer stale = h.load();  // the stalled pop: head a, next b
  cur = stale;
  CHECK(h.compare_exchange(cur, {b, cur.tag + 1}));  // pop a
  cur = h.load();
  CHECK(h.compare_exchange(cur, {nullptr, cur.tag + 1}));  // pop b
  cur = h.load();
  CHECK(h.compare_exchange(cur, {a, cur.tag + 1}));  // push a back
  alloy::detail::TaggedPointer e = stale;
  CHECK(h.load().ptr == stale.ptr);  // same pointer as the stalled pop saw...
  CHECK_FALSE(h.compare_exchange(e, {b, stale.tag + 1}));  // ...but the tag differs: refused
  CHECK(e.ptr == a);
  CHECK(h.load().ptr == a);
}

TEST_CASE("SharedFreeList: LIFO order through the primitives") {
  SharedFreeList<Mallocator, 32> fl;
  const Block a = fl.allocate(32), b = fl.allocate(32);
  CHECK(fl.deallocate(b));
  CHECK(fl.deallocate(a));  // list: a, b
  const Block x = fl.allocate(32), y = fl.allocate(32);
  CHECK(x.ptr == a.ptr);
  CHECK(y.ptr == b.ptr);
  CHECK(fl.deallocate(x));  // list: a
  const Block z = fl.allocate(32);
  CHECK(z.ptr == a.ptr);
  const Block w = fl.allocate(32);  // fresh from malloc: b is still the caller's
  CHECK(w.ptr != b.ptr);
  for (Block q : {y, z, w}) CHECK(fl.deallocate(q));
}
