// Generated from ref.hpp by cmake/alloy_testing.cmake. Do not edit.
#include <alloy/ref.hpp>  // first: the header is self-contained
#include <alloy/mallocator.hpp>
#include <cstddef>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>
#include <doctest/doctest.h>

TEST_CASE("example <alloy/ref.hpp> #1") {
  alloy::Mallocator m;
  alloy::Ref<alloy::Mallocator> r(m);
  alloy::Block b = r.allocate(32);
  CHECK(b.size == 32);
  CHECK(r.deallocate(b));
  static_assert(!alloy::has_owns<alloy::Ref<alloy::Mallocator>>);
}

