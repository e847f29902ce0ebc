#include <alloy/config.hpp>

#include <csignal>
#include <string>

#include <doctest/doctest.h>

#include "support/child_process.hpp"

#if ALLOY_ENABLE_ASSERTS  // the presets build tests with assertions on (Debug, no NDEBUG)
TEST_CASE("ALLOY_ASSERT: a true condition is evaluated once and does nothing") {
  int evaluated = 0;
  ALLOY_ASSERT(++evaluated == 1, "never fires");
  CHECK(evaluated == 1);
  static_assert(noexcept(ALLOY_ASSERT(true, "")));
}

TEST_CASE("ALLOY_ASSERT: a false condition prints the message and place, not the expression, then aborts") {
  const auto child = alloy::test::run_in_child([] {
    const int answer = 41;
    ALLOY_ASSERT(answer == 42, "the answer is wrong");
  });
  CHECK(child.signal == SIGABRT);
  const std::string& err = child.stderr_text;
  CHECK(err.find("alloy: precondition violated: the answer is wrong\n") != std::string::npos);
  CHECK(err.find("answer == 42") == std::string::npos);
  CHECK(err.find("config.cpp:") != std::string::npos);
}
#else
TEST_CASE("ALLOY_ASSERT: off, the condition is not evaluated") {
  int evaluated = 0;
  ALLOY_ASSERT(++evaluated == 5, "never evaluated");
  CHECK(evaluated == 0);
}
#endif
