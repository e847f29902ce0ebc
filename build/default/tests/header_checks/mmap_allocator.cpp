// Generated from mmap_allocator.hpp by cmake/alloy_testing.cmake. Do not edit.
#include <alloy/mmap_allocator.hpp>  // first: the header is self-contained
#include <cstddef>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>
#include <doctest/doctest.h>

TEST_CASE("example <alloy/mmap_allocator.hpp> #1") {
  alloy::MmapAllocator m;
  alloy::Block b = m.allocate(10000);
  CHECK(b.size == 10000);
  CHECK(m.good_alloc_size(10000) == 12288);
  CHECK(static_cast<unsigned char*>(b.ptr)[9999] == 0);  // fresh pages are zero
  CHECK(m.deallocate(b));
}

