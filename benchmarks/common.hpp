#pragma once
/// \file benchmarks/common.hpp
/// What every workload of docs/workloads.md shares: the xorshift64* generator and its fixed seed, the sink that
/// keeps the compiler honest, the timer, and the registration helpers (Google Benchmark, and the callgrind registry
/// behind `alloy_bench --callgrind <workload>/<stack> <n>`).
///
/// Timing protocol: one benchmark iteration is one whole workload run (Iterations(1)); the allocator is constructed
/// and the run's state prepared before the clock starts, and torn down after it stops. The time of the timed region
/// goes to Google Benchmark as manual time, and `ns/op` = that time / ops, where an allocate (failed or not) and a
/// deallocate each count as one op. Repetitions (>= 5) give the median the report uses.
/// (STYLE.md §7 sketches `Counter(ops, kIsRate | kInvert)`; that divides by the CPU time of the whole iteration,
/// which here would include the allocator's construction and, for W5, only the main thread's CPU time. So the
/// counter is computed from the timed region's wall time instead.)
#include <benchmark/benchmark.h>

#include <alloy/block.hpp>

#include <boost/mp11.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>

namespace alloy_bench {

using alloy::Block;

/// docs/workloads.md's generator: xorshift64*, seed 0x9E3779B97F4A7C15, reseeded at the start of every repetition.
struct Xorshift64s {
  static constexpr std::uint64_t seed = 0x9E3779B97F4A7C15ull;
  std::uint64_t x = seed;
  std::uint64_t next() noexcept {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    return x * 0x2545F4914F6CDD1Dull;
  }
};

inline constexpr std::size_t KiB = 1024, MiB = 1024 * 1024;

/// Writes one byte into a block and folds its address into a running value the optimizer cannot drop
/// (the final value goes through benchmark::DoNotOptimize).
struct Sink {
  std::uintptr_t v = 0;
  void touch(Block b, std::uint64_t salt) noexcept {
    static_cast<volatile unsigned char*>(b.ptr)[0] = static_cast<unsigned char>(salt);
    v ^= reinterpret_cast<std::uintptr_t>(b.ptr);
  }
  ~Sink() { benchmark::DoNotOptimize(v); }
};

/// Every stack's object escapes once before the timed loop, so its state lives in memory that the byte written
/// into each block may alias: no stack (the hand-written floors included) gets its state hoisted into registers.
template <class A>
inline void escape(A& a) noexcept {
  void* p = &a;
  benchmark::DoNotOptimize(p);
  benchmark::ClobberMemory();
}

/// W1's and W5's loop: allocate 64 B, write a byte into it, deallocate it at once, `pairs` times. Returns the
/// failed allocations. Out of line, so callgrind and the reader see one loop per stack.
template <class A>
[[gnu::noinline]] std::size_t churn_loop(A& a, std::size_t pairs) {
  Sink sink;
  std::size_t failures = 0;
  for (std::size_t i = 0; i < pairs; ++i) {
    Block b = a.allocate(64);
    if (!b) [[unlikely]] {
      ++failures;
      continue;
    }
    sink.touch(b, i);
    a.deallocate(b);
  }
  return failures;
}

struct Stopwatch {
  std::chrono::steady_clock::time_point t0;
  void start() noexcept { t0 = std::chrono::steady_clock::now(); }
  [[nodiscard]] double elapsed_ns() const noexcept {
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  }
};

/// Reports one repetition: manual time, `ns/op`, `ops`, and optional extra counters.
inline void report(benchmark::State& state, double ns, double ops) {
  state.SetIterationTime(ns * 1e-9);
  state.counters["ns/op"] = benchmark::Counter(ns / ops);
  state.counters["ops"] = benchmark::Counter(ops);
}

/// `alloy_bench --callgrind <id> <n>` runs one pass of n operations (pairs for W1, allocations for W4) with no
/// timing and no Google Benchmark around it, so that callgrind counts only that pass plus a fixed setup; the report
/// runs it with two values of n and divides the difference in instructions by the difference in ops.
using CallgrindPass = void (*)(std::size_t n);
struct CallgrindEntry {
  CallgrindPass pass;
  double ops_per_n;  // ops per unit of n: 2 for W1 (a pair), 1 for W4 (one allocation)
};
inline std::map<std::string, CallgrindEntry>& callgrind_registry() {
  static std::map<std::string, CallgrindEntry> r;
  return r;
}

/// Whether a stack descriptor is an anchor (a competitor or a floor), one of alloy's stacks, or its own `kind`
/// (W3's bounds). The label goes into the JSON ("label") for the report.
template <class S>
constexpr const char* kind_label() {
  if constexpr (requires { S::kind; }) return S::kind;  // another kind of row (W3's bounds)
  else if constexpr (requires { S::anchor; }) return S::anchor ? "anchor" : "alloy";
  else return "alloy";
}

/// Registers `fn(state)` as benchmark `name`: one iteration per repetition, manual time.
template <class F>
benchmark::internal::Benchmark* register_run(const std::string& name, F&& fn) {
  return benchmark::RegisterBenchmark(name.c_str(), std::forward<F>(fn))
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

/// Calls f(std::type_identity<S>{}) for every S of the Mp11 list L, constructing nothing.
template <class L, class F>
void for_each_stack(F&& f) {
  boost::mp11::mp_for_each<boost::mp11::mp_transform<std::type_identity, L>>(std::forward<F>(f));
}

}  // namespace alloy_bench
