// W5, shared churn, 2 threads (docs/workloads.md): one thread-safe allocator over a 1 MiB arena of 64-byte
// blocks; 2 threads released together (they block on a latch, no spinning start), each loops allocate 64 B /
// deallocate 5 x 10^6 times. ns/op = total wall time / (2 * 2 * 5 x 10^6); thread creation is outside the time.
#include "common.hpp"
#include "stacks.hpp"

#include <latch>
#include <thread>

namespace alloy_bench {
namespace {

constexpr std::size_t w5_arena = 1 * MiB;
constexpr std::size_t w5_pairs = 5'000'000;
constexpr int w5_threads = 2;

template <class S>
void w5_bench(benchmark::State& state) {
  for (auto _ : state) {
    auto a = S::make(w5_arena);
    escape(a);
    std::latch ready(w5_threads), go(1);
    std::size_t failures[w5_threads] = {};
    std::thread threads[w5_threads];
    for (int t = 0; t < w5_threads; ++t)
      threads[t] = std::thread([&, t] {
        ready.count_down();
        go.wait();
        failures[t] = churn_loop(a, w5_pairs);
      });
    ready.wait();
    Stopwatch sw;
    sw.start();
    go.count_down();
    for (auto& th : threads) th.join();
    const double ns = sw.elapsed_ns();
    report(state, ns, 2.0 * w5_threads * w5_pairs);
    state.counters["failures"] = benchmark::Counter(static_cast<double>(failures[0] + failures[1]));
  }
  state.SetLabel(kind_label<S>());
}

const int registered = [] {
  for_each_stack<W5Stacks>([](auto t) {
    using S = typename decltype(t)::type;
    register_stack<S>("W5", &w5_bench<S>);
  });
  return 0;
}();

}  // namespace
}  // namespace alloy_bench
