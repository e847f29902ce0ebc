// errors.hpp: the exception classes keep their message and code through every constructor, and copy without throwing.
#include <alloy/errors.hpp>

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <doctest/doctest.h>

// Copying an exception never throws (the message is reference-counted).
static_assert(std::is_nothrow_copy_constructible_v<alloy::bad_alloc>);
static_assert(std::is_nothrow_copy_constructible_v<alloy::cuda_error>);
static_assert(std::is_base_of_v<std::bad_alloc, alloy::bad_alloc>);
static_assert(std::is_base_of_v<std::logic_error, alloy::logic_error>);
static_assert(std::is_base_of_v<std::invalid_argument, alloy::invalid_argument>);
static_assert(std::is_base_of_v<std::runtime_error, alloy::cuda_error>);

TEST_CASE("errors: the std::string constructors keep the message and the code") {
  const std::string msg = "alloy::device_buffer: out of memory";
  const alloy::bad_alloc b(msg);
  CHECK(std::strcmp(b.what(), msg.c_str()) == 0);
  const alloy::bad_alloc copy = b;
  CHECK(std::strcmp(copy.what(), msg.c_str()) == 0);
  const alloy::cuda_error e(700, std::string("cudaErrorIllegalAddress: an illegal memory access"));
  CHECK(e.code() == 700);
  CHECK(std::strcmp(e.what(), "cudaErrorIllegalAddress: an illegal memory access") == 0);
  const alloy::cuda_error f(-1, "alloy: a copy failed");
  CHECK(f.code() == -1);
  CHECK(std::strcmp(f.what(), "alloy: a copy failed") == 0);
}
