#pragma once
// Death tests: run a function in a forked child and report how the child ended and what it wrote to stderr. The
// child dies of SIGABRT, SIGSEGV and SIGBUS as the kernel delivers them (not through doctest's handlers or a
// sanitizer's report), so an assertion or a touch of PROT_NONE memory reads as that signal.
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include <sys/wait.h>
#include <unistd.h>

namespace alloy::test {

struct ChildOutcome {
  int signal = 0;           // the signal that ended the child; 0 when it exited
  int exit_code = 0;        // its exit status when it exited
  std::string stderr_text;  // everything it wrote to stderr

  /// The shell's convention: the exit status, or 128 + the signal.
  [[nodiscard]] int code() const noexcept { return signal != 0 ? 128 + signal : exit_code; }
};

/// How the child ends after f returns: `_exit(0)` (no atexit handlers, no static destructors), or `exit(0)`, which
/// runs them (the CUDA stand-in's leak report is one).
enum class ChildExit { immediate, run_atexit };

template <class F>
ChildOutcome run_in_child(F&& f, ChildExit how = ChildExit::immediate) {
  ChildOutcome out;
  int fds[2];
  if (::pipe(fds) != 0) {
    out.exit_code = -1;
    out.stderr_text = "pipe() failed";
    return out;
  }
  std::fflush(nullptr);  // nothing buffered in the parent is written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    out.exit_code = -1;
    out.stderr_text = "fork() failed";
    return out;
  }
  if (pid == 0) {
    std::signal(SIGABRT, SIG_DFL);
    std::signal(SIGSEGV, SIG_DFL);
    std::signal(SIGBUS, SIG_DFL);
    ::close(fds[0]);
    ::dup2(fds[1], 2);
    ::close(fds[1]);
    std::forward<F>(f)();
    if (how == ChildExit::run_atexit) std::exit(0);
    ::_exit(0);
  }
  ::close(fds[1]);
  char buf[512];
  for (ssize_t k; (k = ::read(fds[0], buf, sizeof buf)) > 0;) out.stderr_text.append(buf, static_cast<std::size_t>(k));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  return out;
}

}  // namespace alloy::test
