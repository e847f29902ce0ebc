// Generated from mallocator.hpp by cmake/alloy_testing.cmake. Do not edit.
#include <alloy/mallocator.hpp>  // first: the header is self-contained
#include <cstddef>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>
#include <doctest/doctest.h>

TEST_CASE("example <alloy/mallocator.hpp> #1") {
  alloy::Block b = alloy::Mallocator::instance.allocate(100);
  CHECK(b.size == 100);
  alloy::Mallocator m;
  CHECK(m.reallocate(b, 200));
  CHECK(m.deallocate(b));
}

