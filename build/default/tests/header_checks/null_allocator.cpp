// Generated from null_allocator.hpp by cmake/alloy_testing.cmake. Do not edit.
#include <alloy/null_allocator.hpp>  // first: the header is self-contained
#include <cstddef>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>
#include <doctest/doctest.h>

TEST_CASE("example <alloy/null_allocator.hpp> #1") {
  alloy::NullAllocator n;
  CHECK(!n.allocate(16));
  CHECK(n.owns({}) == alloy::Ternary::no);
  static_assert(std::is_empty_v<alloy::NullAllocator>);
}

