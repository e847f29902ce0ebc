// ctest-labels: heavy
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
using alloy::ContiguousFreeList;
using alloy::Mallocator;
using alloy::NullAllocator;
using alloy::Ternary;
using alloy::unbounded;
using Arena = alloy::Region<Mallocator>;

using CN = ContiguousFreeList<NullAllocator, 0, 64>;
using CM = ContiguousFreeList<Mallocator, 16, 64>;
static_assert(alloy::has_owns<CN> && alloy::has_empty<CN> && alloy::has_deallocate_all<CN> && alloy::has_good_alloc_size<CN>);
static_assert(!alloy::has_owns<CM> && alloy::has_empty<CM> && !alloy::has_deallocate_all<CM> && alloy::has_deallocate<CM>);
static_assert(alloy::has_owns<ContiguousFreeList<Arena, 16, 64>> && !alloy::has_deallocate_all<ContiguousFreeList<Arena, 16, 64>>);
static_assert(!alloy::has_expand<ContiguousFreeList<Arena, 16, 64>> && !alloy::has_reallocate<CM>);
// Alignment: the parent's, capped by the item stride's largest power-of-two divisor.
static_assert(CN::alignment == 64 && CM::alignment == 16 && ContiguousFreeList<Mallocator, 24>::alignment == 8);
static_assert(ContiguousFreeList<Mallocator, 20>::alignment == 8);  // stride 24
static_assert(ContiguousFreeList<Mallocator, 0, unbounded>::alignment == 8);
static_assert(std::is_constructible_v<ContiguousFreeList<Mallocator, 0, unbounded>, std::size_t, std::size_t>);
static_assert(!std::is_constructible_v<ContiguousFreeList<NullAllocator, 0, 64>, std::size_t>);  // nothing to own from

alignas(64) static std::byte g_buf[1 << 16];

TEST_CASE_TEMPLATE("ContiguousFreeList: conformance, owning", A, CM, ContiguousFreeList<Mallocator, 1, 4096>,
                   ContiguousFreeList<Mallocator, 20>, ContiguousFreeList<alloy::test::CheckedHeap<16>, 8, 64>) {
  alloy::test::check_allocator([] { return A(1 << 14); });
}

TEST_CASE("ContiguousFreeList: conformance over a span, with run-time sizes, too small") {
  alloy::test::check_allocator([] { return CN(std::span<std::byte>(g_buf)); });
  alloy::test::check_allocator([] { return ContiguousFreeList<NullAllocator, 0, 4096>(std::span<std::byte>(g_buf)); });
  alloy::test::check_allocator([] { return ContiguousFreeList<Mallocator, 0, unbounded>(4096, 8); });
  alloy::test::check_allocator([] { return ContiguousFreeList<Mallocator, choose_at_runtime, choose_at_runtime>(4096, 8, 100); });
  alloy::test::check_allocator([] { return CN(std::span<std::byte>(g_buf, 40)); });  // no item fits
  alloy::test::check_allocator([] { return CN(std::span<std::byte>()); });
}

TEST_CASE("ContiguousFreeList: D's unittests") {
  SUBCASE("(0, unbounded) with the item size at run time") {
    ContiguousFreeList<Mallocator, 0, unbounded> a(4096, 8);
    Block b = a.allocate(100);  // D serves this from an 8-byte item; alloy asks the parent
    CHECK(b.size == 100);
    CHECK(a.deallocate(b));
    b = a.allocate(8);
    CHECK(a.empty() == Ternary::no);
    CHECK(a.capacity() == 512);
    CHECK(a.deallocate(b));
    CHECK(a.empty() == Ternary::yes);
  }
  SUBCASE("NullAllocator parent over a buffer") {
    alignas(64) static std::byte buf[1024];
    CN a{std::span<std::byte>(buf)};
    CHECK(a.empty() == Ternary::yes);
    CHECK(a.good_alloc_size(15) == 64);
    CHECK(a.good_alloc_size(65) == alloy::good_alloc_size(NullAllocator::instance, 65));
    Block b = a.allocate(100);
    CHECK(!b);
    CHECK(a.empty() == Ternary::yes);
    b = a.allocate(64);
    CHECK(a.empty() == Ternary::no);
    CHECK(b.size == 64);
    CHECK(a.owns(b) == Ternary::yes);
    CHECK(a.owns(Block{}) == Ternary::no);
    CHECK(a.deallocate(b));
    CHECK(a.capacity() == 16);
  }
  SUBCASE("Region parent") {
    ContiguousFreeList<Arena, 0, 64> a(Arena(1024 * 4), 1024);
    CHECK(a.empty() == Ternary::yes);
    CHECK(a.good_alloc_size(15) == 64);
    CHECK(a.good_alloc_size(65) == a.parent().good_alloc_size(65));
    Block b = a.allocate(100);  // from the region
    CHECK(a.empty() == Ternary::no);
    CHECK(b.size == 100);
    CHECK(a.owns(b) == Ternary::yes);
    CHECK(a.deallocate(b));
    CHECK(a.empty() == Ternary::yes);
    b = a.allocate(64);
    CHECK(a.owns(b) == Ternary::yes);
    CHECK(a.deallocate(b));
  }
  SUBCASE("a full list falls back to the parent") {
    ContiguousFreeList<alloy::test::CheckedHeap<16>, 64> a(128);
    const Block x = a.allocate(64), y = a.allocate(64), z = a.allocate(64);
    CHECK(a.parent().live_blocks() == 2);  // the chunk and z
    CHECK(a.parent().is_live(z));
    for (Block q : {x, y, z}) CHECK(a.deallocate(q));
    CHECK(a.parent().live_blocks() == 1);
  }
}

TEST_CASE("ContiguousFreeList: randomized against a stack of items (10^6 operations)") {
  CN a{std::span<std::byte>(g_buf, 64 * 200)};
  alloy::test::ContiguousModel model(g_buf, 200, 64, 1, 64);
  alloy::test::DiffOptions o;
  o.ops = 1'000'000;
  o.max_size = 80;  // 20% too large: refused by the NullAllocator parent
  o.slots = 256;    // more than the 200 items: the list runs dry
  o.deallocate_all_every = 20'000;
  const auto st = alloy::test::run_differential(a, model, o);
  CHECK(st.allocations > 200'000);
  CHECK(st.failures > 50'000);
  CHECK(st.deallocations > 200'000);
  CHECK(st.deallocate_alls > 20);
  MESSAGE(st.allocations << " allocations, " << st.failures << " failures");
}

TEST_CASE("ContiguousFreeList: randomized over malloc") {
  ContiguousFreeList<Mallocator, 16, 128> a(128 * 100);
  alloy::test::DiffOptions o;
  o.ops = 200'000;
  o.max_size = 200;
  const auto st = alloy::test::run_differential(a, o);
  CHECK(st.allocations > 50'000);
  CHECK(a.empty() == Ternary::yes);
}
