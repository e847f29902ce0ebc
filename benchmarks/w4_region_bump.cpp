// W4, region bump (docs/workloads.md): 256 MiB region; 10^6 allocations of 16 + next() % 241 bytes, 16-byte
// aligned, then deallocate_all (one op); 20 rounds. ns/op = time / (20 * (10^6 + 1)).
// Stacks over a caller's span share one 256 MiB arena touched before any timing (stacks.hpp, w4_arena).
#include "common.hpp"
#include "stacks.hpp"

namespace alloy_bench {
namespace {

constexpr std::size_t w4_arena_size = 256 * MiB;
constexpr std::size_t w4_allocs = 1'000'000;
constexpr std::size_t w4_rounds = 20;

template <class A>
[[gnu::noinline]] std::size_t w4_loop(A& a, std::size_t allocs, std::size_t rounds) {
  Sink sink;
  Xorshift64s rng;  // reseeded every repetition
  std::size_t failures = 0;
  for (std::size_t r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < allocs; ++i) {
      Block b = a.allocate(16 + rng.next() % 241);
      if (!b) [[unlikely]] {
        ++failures;
        continue;
      }
      sink.touch(b, i);
    }
    a.deallocate_all();
  }
  return failures;
}

template <class S>
void w4_bench(benchmark::State& state) {
  for (auto _ : state) {
    auto a = S::make(w4_arena_size);
    escape(a);
    Stopwatch sw;
    sw.start();
    const std::size_t failures = w4_loop(a, w4_allocs, w4_rounds);
    const double ns = sw.elapsed_ns();
    report(state, ns, static_cast<double>(w4_rounds * (w4_allocs + 1)));
    state.counters["failures"] = benchmark::Counter(static_cast<double>(failures));
  }
  state.SetLabel(kind_label<S>());
}

/// One round of n allocations and the deallocate_all; the report divides the difference between two values of n
/// by the difference in n, so an op here is one allocation (and, for malloc, the free that deallocate_all does for it).
template <class S>
void w4_callgrind(std::size_t n) {
  auto a = S::make(w4_arena_size);
  escape(a);
  w4_loop(a, n, 1);
}

const int registered = [] {
  for_each_stack<W4Stacks>([](auto t) {
    using S = typename decltype(t)::type;
    register_stack<S>("W4", &w4_bench<S>);
    callgrind_registry()[std::string("W4/") + S::name] = {&w4_callgrind<S>, 1.0};
  });
  return 0;
}();

}  // namespace
}  // namespace alloy_bench
