// W3, random steady state (../shared/WORKLOADS.md): 4 MiB arena, 64-byte blocks, multiblock; 2048 slots; 10^7 steps:
// slot = next() % 2048; if empty allocate 1 + next() % 512 bytes (may fail: failures are counted), else deallocate it.
// The generator runs inside the timed loop; every step is one op. Also run at 1, 4, 64 and 256 MiB arenas.
#include "w3_loop.hpp"

namespace alloy_bench {
namespace {

constexpr std::size_t w3_arena = 4 * MiB;

template <class S, std::size_t Arena>
void w3_bench(benchmark::State& state) {
  for (auto _ : state) {
    std::vector<Block> slots(w3_slots);
    auto a = S::make(Arena);
    escape(a);
    Stopwatch sw;
    sw.start();
    const W3Result r = w3_loop(a, slots, w3_steps);
    const double ns = sw.elapsed_ns();
    w3_release(a, slots);
    report(state, ns, static_cast<double>(w3_steps));
    state.counters["failures"] = benchmark::Counter(static_cast<double>(r.failures));
  }
  state.SetLabel(kind_label<S>());
}

template <class S>
void w3_callgrind(std::size_t steps) {
  std::vector<Block> slots(w3_slots);
  auto a = S::make(w3_arena);
  escape(a);
  w3_loop(a, slots, steps);
  w3_release(a, slots);
}

const int registered = [] {
  for_each_stack<W3Stacks>([](auto t) {
    using S = typename decltype(t)::type;
    register_run(std::string("W3/") + S::name, &w3_bench<S, w3_arena>);
    callgrind_registry()[std::string("W3/") + S::name] = {&w3_callgrind<S>, 1.0};
  });
  for_each_stack<W3ArenaStacks>([](auto t) {
    using S = typename decltype(t)::type;
    register_run(std::string("W3@1MiB/") + S::name, &w3_bench<S, 1 * MiB>);
    register_run(std::string("W3@4MiB/") + S::name, &w3_bench<S, 4 * MiB>);
    register_run(std::string("W3@64MiB/") + S::name, &w3_bench<S, 64 * MiB>);
    register_run(std::string("W3@256MiB/") + S::name, &w3_bench<S, 256 * MiB>);
  });
  return 0;
}();

}  // namespace
}  // namespace alloy_bench
