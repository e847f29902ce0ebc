// ContiguousFreeList with ALLOY_ASSERT compiled out, as in a release build: what it refuses where a debug build
// stops at an assertion (docs/primitives.md, "Misuse"). Its own executable: every test preset builds with
// assertions on, so this file turns them off itself.
#define ALLOY_ENABLE_ASSERTS 0
#include <alloy/free_list.hpp>
#include <alloy/null_allocator.hpp>

#include <cstddef>
#include <span>

#include <doctest/doctest.h>

static_assert(!ALLOY_ENABLE_ASSERTS);

using alloy::Block;
using alloy::Ternary;

TEST_CASE("ContiguousFreeList, assertions off: a size no item has, a pointer off an item, a free of nothing out") {
  alignas(64) static std::byte buf[64 * 8];
  alloy::ContiguousFreeList<alloy::NullAllocator, 33, 64> fl{std::span<std::byte>(buf)};
  const Block a = fl.allocate(40), b = fl.allocate(64);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(!fl.deallocate(Block{a.ptr, 8}));                                  // below MinSize
  CHECK(!fl.deallocate(Block{a.ptr, 65}));                                 // above MaxSize
  CHECK(!fl.deallocate(Block{static_cast<std::byte*>(a.ptr) + 8, 40}));    // inside an item
  CHECK(fl.deallocate(a));
  CHECK(fl.deallocate(b));
  CHECK(fl.empty() == Ternary::yes);
  CHECK(!fl.deallocate(b));  // nothing is out: a double free
  // Nothing changed: the 8 items are all there, each handed out once.
  Block items[8];
  for (auto& x : items) REQUIRE((x = fl.allocate(64)));
  CHECK(!fl.allocate(64));
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < i; ++j) CHECK(items[i].ptr != items[j].ptr);
  for (auto& x : items) CHECK(fl.deallocate(x));
  CHECK(fl.empty() == Ternary::yes);
}
