#pragma once
/// \file alloy/config.hpp
/// ALLOY_ASSERT: checks a precondition (a foreign block, a double free) in debug builds.
///
/// Enabled unless NDEBUG is defined; force it either way with -DALLOY_ENABLE_ASSERTS=0/1. A failed check prints its
/// message (what the caller did wrong, in words: "Region::deallocate: the block did not come from this region") and
/// its location to stderr and aborts: primitives are noexcept, so there is nothing to throw. A message that starts
/// with "internal:" is a broken invariant of alloy itself, and the output says to report it.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#ifndef ALLOY_ENABLE_ASSERTS
#ifdef NDEBUG
#define ALLOY_ENABLE_ASSERTS 0
#else
#define ALLOY_ENABLE_ASSERTS 1
#endif
#endif

namespace alloy::detail {
// `cond` is kept for a debugger's sake (it is the failed expression's text) but not printed: the message says what
// was violated, and an expression such as `ok` or `mine` tells a user nothing.
[[noreturn]] inline void assert_failed([[maybe_unused]] const char* cond, const char* msg, const char* file,
                                       int line) noexcept {
  const bool internal = msg[0] == 'i' && std::strncmp(msg, "internal:", 9) == 0;
  std::fprintf(stderr, "%s:%d: alloy: %s%s\n", file, line,
               internal ? "bug in alloy (please report it): " : "precondition violated: ", msg);
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
