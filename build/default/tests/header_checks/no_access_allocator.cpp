// Generated from no_access_allocator.hpp by cmake/alloy_testing.cmake. Do not edit.
#include <alloy/no_access_allocator.hpp>  // first: the header is self-contained
#include <cstddef>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>
#include <doctest/doctest.h>

TEST_CASE("example <alloy/no_access_allocator.hpp> #1") {
  alloy::NoAccessAllocator dev;
  alloy::Block b = dev.allocate(100);
  const char msg[] = "hello";
  CHECK(dev.copy(b.ptr, msg, sizeof msg, {}));       // host -> "device"
  char back[sizeof msg] = {};
  CHECK(dev.copy(back, b.ptr, sizeof msg, {}));      // "device" -> host
  CHECK(std::strcmp(back, "hello") == 0);
  CHECK(dev.owns(b) == alloy::Ternary::yes);
  CHECK(dev.deallocate(b));
}

