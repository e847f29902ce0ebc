// Generated from aligned_mallocator.hpp by cmake/alloy_testing.cmake. Do not edit.
#include <alloy/aligned_mallocator.hpp>  // first: the header is self-contained
#include <cstddef>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>
#include <doctest/doctest.h>

TEST_CASE("example <alloy/aligned_mallocator.hpp> #1") {
  alloy::AlignedMallocator a;
  alloy::Block b = a.aligned_allocate(100, 4096);
  CHECK(alloy::is_aligned(b.ptr, 4096));
  CHECK(a.aligned_reallocate(b, 9000, 4096));
  CHECK(alloy::is_aligned(b.ptr, 4096));
  CHECK(a.deallocate(b));
}

