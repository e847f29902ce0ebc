#pragma once
/// \file alloy/config.hpp
/// ALLOY_ASSERT: checks a precondition (a foreign block, a double free) in debug builds.
///
/// Enabled unless NDEBUG is defined; force it either way with -DALLOY_ENABLE_ASSERTS=0/1. A failed check prints the
/// condition and its location to stderr and aborts: primitives are noexcept, so there is nothing to throw.
#include <cstdio>
#include <cstdlib>

#ifndef ALLOY_ENABLE_ASSERTS
#ifdef NDEBUG
#define ALLOY_ENABLE_ASSERTS 0
#else
#define ALLOY_ENABLE_ASSERTS 1
#endif
#endif

namespace alloy::detail {
[[noreturn]] inline void assert_failed(const char* cond, const char* msg, const char* file, int line) noexcept {
  std::fprintf(stderr, "%s:%d: alloy assertion failed: %s (%s)\n", file, line, msg, cond);
  std::fflush(stderr);
  std::abort();
}
}  // namespace alloy::detail

#if ALLOY_ENABLE_ASSERTS
#define ALLOY_ASSERT(cond, msg) \
  ((cond) ? static_cast<void>(0) : ::alloy::detail::assert_failed(#cond, msg, __FILE__, __LINE__))
#else
#define ALLOY_ASSERT(cond, msg) static_cast<void>(sizeof(!(cond)))  // unevaluated: names stay "used"
#endif
