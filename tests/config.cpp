#include <alloy/config.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include <doctest/doctest.h>

#if ALLOY_ENABLE_ASSERTS  // the presets build tests with assertions on (Debug, no NDEBUG)
TEST_CASE("ALLOY_ASSERT: a true condition is evaluated once and does nothing") {
  int evaluated = 0;
  ALLOY_ASSERT(++evaluated == 1, "never fires");
  CHECK(evaluated == 1);
  static_assert(noexcept(ALLOY_ASSERT(true, "")));
}

TEST_CASE("ALLOY_ASSERT: a false condition prints the message and place, not the expression, then aborts") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::signal(SIGABRT, SIG_DFL);
    ::dup2(fds[1], 2);  // stderr into the pipe
    const int answer = 41;
    ALLOY_ASSERT(answer == 42, "the answer is wrong");
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string err;
  char buf[256];
  for (ssize_t k; (k = ::read(fds[0], buf, sizeof buf)) > 0;) err.append(buf, static_cast<std::size_t>(k));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
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
