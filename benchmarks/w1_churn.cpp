// W1, single-block churn (docs/workloads.md): 1 MiB arena, 64-byte blocks; allocate 64 B and deallocate it at
// once, 10^7 pairs. ns/op = time / (2 * 10^7).
#include "common.hpp"
#include "stacks.hpp"

namespace alloy_bench {
namespace {

constexpr std::size_t w1_arena = 1 * MiB;
constexpr std::size_t w1_pairs = 10'000'000;

template <class S>
void w1_bench(benchmark::State& state) {
  for (auto _ : state) {
    auto a = S::make(w1_arena);
    escape(a);
    Stopwatch sw;
    sw.start();
    const std::size_t failures = churn_loop(a, w1_pairs);
    const double ns = sw.elapsed_ns();
    report(state, ns, 2.0 * w1_pairs);
    state.counters["failures"] = benchmark::Counter(static_cast<double>(failures));
  }
  state.SetLabel(kind_label<S>());
}

template <class S>
void w1_callgrind(std::size_t pairs) {
  auto a = S::make(w1_arena);
  escape(a);
  churn_loop(a, pairs);
}

const int registered = [] {
  for_each_stack<W1Stacks>([](auto t) {
    using S = typename decltype(t)::type;
    register_stack<S>("W1", &w1_bench<S>);
    callgrind_registry()[std::string("W1/") + S::name] = {&w1_callgrind<S>, 2.0};
  });
  return 0;
}();

}  // namespace
}  // namespace alloy_bench
