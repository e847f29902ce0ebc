#pragma once
/// \file alloy/errors.hpp
/// The exceptions thrown at alloy's edges (device_buffer, the std/pmr adapters). Primitives never throw: they report
/// by value (DESIGN.md §9). The names and bases follow RMM's: `alloy::bad_alloc` is a `std::bad_alloc`,
/// `alloy::logic_error` a `std::logic_error`, `alloy::invalid_argument` a `std::invalid_argument`, and
/// `alloy::cuda_error` a `std::runtime_error` that carries the CUDA error code.
///
/// Every class keeps its message in a reference-counted `std::runtime_error` (or its own std base), so copying an
/// exception never throws.
///
/// Example:
/// ```cpp
/// #include <new>
/// #include <stdexcept>
/// try {
///   throw alloy::bad_alloc("alloy::device_buffer: out of memory");
/// } catch (const std::bad_alloc& e) {
///   CHECK(std::strcmp(e.what(), "alloy::device_buffer: out of memory") == 0);
/// }
/// alloy::cuda_error e(2, "cudaErrorMemoryAllocation: out of memory");
/// CHECK(e.code() == 2);
/// CHECK(std::is_base_of_v<std::logic_error, alloy::invalid_argument>);
/// ```
#include <new>
#include <stdexcept>
#include <string>

namespace alloy {

/// An allocation failed (the allocator returned an empty Block), or cannot be satisfied (an alignment the allocator
/// cannot give, a size too large to record). Derives `std::bad_alloc`, so `catch (std::bad_alloc&)` sees it.
class bad_alloc : public std::bad_alloc {
 public:
  // NOLINTNEXTLINE(bugprone-throw-keyword-missing): a member holds the text
  explicit bad_alloc(const char* what) : what_(what) {}
  explicit bad_alloc(const std::string& what) : what_(what) {}  // NOLINT(bugprone-throw-keyword-missing): as above
  [[nodiscard]] const char* what() const noexcept override { return what_.what(); }

 private:
  std::runtime_error what_;  // reference-counted message: copying never throws
};

/// A broken precondition detected at an edge that throws (a null source with a nonzero size).
class logic_error : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// An argument outside its domain (an alignment that is not a power of two).
class invalid_argument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// A CUDA runtime call failed. `code()` is the `cudaError_t` value (as an int, so this header needs no CUDA header),
/// or -1 when the failing call did not say which.
class cuda_error : public std::runtime_error {
 public:
  cuda_error(int code, const char* what) : std::runtime_error(what), code_(code) {}
  cuda_error(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  [[nodiscard]] int code() const noexcept { return code_; }

 private:
  int code_;
};

namespace detail {
/// A tag naming an allocator type, so an unqualified call `f(detail::space_tag<A>{}, ...)` in a template finds, by
/// argument-dependent lookup at instantiation, the overloads that `<alloy/cuda_mallocator.hpp>` adds
/// (`device_default_copy`, `throw_copy_error`). device_buffer.hpp uses it to reach the CUDA runtime without naming it:
/// its own text is then the same in every translation unit, with or without CUDA.
template <class A>
struct space_tag {};
}  // namespace detail

}  // namespace alloy
