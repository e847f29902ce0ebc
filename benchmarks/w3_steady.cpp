// W3, random steady state (docs/workloads.md): 4 MiB arena, 64-byte blocks, multiblock; 2048 slots; 10^7 steps:
// slot = next() % 2048; if empty allocate 1 + next() % 512 bytes (may fail: failures are counted), else deallocate it.
// The generator runs inside the timed loop; every step is one op. Also run at 1, 4, 64 and 256 MiB arenas.
#include "w3_loop.hpp"

#include <algorithm>

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

// The bounds (benchmarks/w3_floor.hpp, GivenFitsBound): the floor's first fits on this very sequence, recorded once
// by running the floor through the same loop (its allocations in order; no_fit for a failure).
struct FitRecorder {
  [[maybe_unused]] static constexpr std::size_t alignment = 64;  // the allocator concept's member (clang: unused)
  SummaryFirstFitFloor& f;
  std::vector<std::uint32_t>& fits;
  Block allocate(std::size_t n) noexcept {
    const Block b = f.allocate(n);
    fits.push_back(b ? static_cast<std::uint32_t>((static_cast<std::byte*>(b.ptr) - f.payload()) / 64)
                     : GivenFitsBound<Upkeep::summary>::no_fit);
    return b;
  }
  bool deallocate(Block b) noexcept { return f.deallocate(b); }
};
std::vector<std::uint32_t> record_w3_fits(std::size_t steps) {
  std::vector<std::uint32_t> v;
  v.reserve(steps);
  SummaryFirstFitFloor f(w3_arena);
  FitRecorder r{f, v};
  std::vector<Block> slots(w3_slots);
  w3_loop(r, slots, steps);
  w3_release(r, slots);
  return v;
}
const std::vector<std::uint32_t>& w3_fits() {
  static const std::vector<std::uint32_t> fits = record_w3_fits(w3_steps);
  return fits;
}

/// The bounds as stacks of the W3 table (kind "bound"): each repetition gives a fresh bound the recorded fits.
template <Upkeep U, FixedString Name, FixedString Label>
struct BoundStack {
  static constexpr const char* name = Name.s;
  static constexpr const char* label = Label.s;
  static constexpr const char* kind = "bound";
  static auto make(std::size_t arena) { return GivenFitsBound<U>(arena, w3_fits().data()); }
};

// Under callgrind: the fits of max(steps, 600 000) steps (the report's larger n), so that the recording costs the
// same in both runs and cancels in their difference.
template <Upkeep U>
void w3_bound_callgrind(std::size_t steps) {
  const std::vector<std::uint32_t> fits = record_w3_fits(std::max<std::size_t>(steps, 600'000));
  std::vector<Block> slots(w3_slots);
  GivenFitsBound<U> a(w3_arena, fits.data());
  escape(a);
  w3_loop(a, slots, steps);
  w3_release(a, slots);
}

const int registered = [] {
  for_each_stack<W3Stacks>([](auto t) {
    using S = typename decltype(t)::type;
    register_stack<S>("W3", &w3_bench<S, w3_arena>);
    callgrind_registry()[std::string("W3/") + S::name] = {&w3_callgrind<S>, 1.0};
  });
#ifndef ALLOY_BENCH_MALLOC_ONLY
  using UpkeepBound = BoundStack<Upkeep::summary, "bound: summary upkeep, first fits given", "bound (upkeep)">;
  using BitmapBound = BoundStack<Upkeep::bits, "bound: bitmap only, first fits given", "bound (bitmap)">;
  register_stack<UpkeepBound>("W3", &w3_bench<UpkeepBound, w3_arena>);
  register_stack<BitmapBound>("W3", &w3_bench<BitmapBound, w3_arena>);
  callgrind_registry()[std::string("W3/") + UpkeepBound::name] = {&w3_bound_callgrind<Upkeep::summary>, 1.0};
  callgrind_registry()[std::string("W3/") + BitmapBound::name] = {&w3_bound_callgrind<Upkeep::bits>, 1.0};
#endif
  for_each_stack<W3ArenaStacks>([](auto t) {
    using S = typename decltype(t)::type;
    register_stack<S>("W3@1MiB", &w3_bench<S, 1 * MiB>);
    register_stack<S>("W3@4MiB", &w3_bench<S, 4 * MiB>);
    register_stack<S>("W3@64MiB", &w3_bench<S, 64 * MiB>);
    register_stack<S>("W3@256MiB", &w3_bench<S, 256 * MiB>);
  });
  return 0;
}();

}  // namespace
}  // namespace alloy_bench
