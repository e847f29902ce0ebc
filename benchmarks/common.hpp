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

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

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

/// A goal tools/bench_report.py checks on a stack ("Goals checked on this run" in docs/performance.md). It sits on
/// the stack's descriptor (`static constexpr std::array targets`), so it follows the stack through any rename; the
/// stacks it compares with are named through their descriptors (`FloorBumpPointer::name`, `malloc_named("mimalloc")`).
/// `check` says what the report computes (the table of checks is `CHECKS` in tools/bench_report.py), `goal` is the
/// goal as the report prints it (`{label}` stands for the stack's label, `{trace}` for a replay trace's file name).
struct Target {
  const char* workload = "";                 // where it is measured: "W1" ... "W6", or "replay" (every shipped trace)
  const char* check = "";                    // instructions_at_most, faster_than, arena_sweep, net_ns_at_most, ...
  const char* goal = "";
  std::array<const char*, 3> of{};           // the stacks it compares with (their names); unused slots nullptr
  std::array<double, 3> factor{1, 1, 1};     // per reference: stack <= factor x reference (faster_than: <)
  double noise = 0;                          // faster_than: "within noise" when every ratio is below factor x noise
  bool with_instructions = false;            // faster_than: the instruction counts shown beside the times
};

/// One row of `alloy_bench --list-stacks`: a stack as registered in one workload.
struct StackRow {
  std::string workload, name, label, kind;
  bool malloc;
};
inline std::vector<StackRow>& stack_rows() {
  static std::vector<StackRow> r;
  return r;
}
/// Each descriptor's targets once (the first workload that registers the descriptor exports them).
inline std::vector<std::pair<std::string, Target>>& stack_targets() {
  static std::vector<std::pair<std::string, Target>> r;
  return r;
}

/// The kind a table shows: alloy, anchor (another library), floor, bound or loop (hand-written reference loops).
template <class S>
constexpr const char* table_kind() {
  if constexpr (requires { S::kind; }) return S::kind;
  else if constexpr (requires { S::floor; }) return S::floor ? "floor" : kind_label<S>();
  else return kind_label<S>();
}

/// Registers `fn(state)` as benchmark `name`: one iteration per repetition, manual time.
template <class F>
benchmark::internal::Benchmark* register_run(const std::string& name, F&& fn) {
  return benchmark::RegisterBenchmark(name.c_str(), std::forward<F>(fn))
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

template <class S>
inline bool targets_listed = false;  // per descriptor type: its targets are exported once

/// Registers stack S in `workload` ("W1", "W3@1MiB", ...): the benchmark `<workload>/<S::name>` running `fn`, and the
/// descriptor's row (name, label, kind; its targets the first time) for `alloy_bench --list-stacks`.
template <class S, class F>
void register_stack(const std::string& workload, F&& fn) {
  static_assert(requires { S::label; }, "a stack descriptor needs `static constexpr const char* label`: the short "
                                        "name tools/bench_report.py shows in column headers, goals and the chart");
  register_run(workload + "/" + S::name, std::forward<F>(fn));
  bool malloc = false;
  if constexpr (requires { S::malloc; }) malloc = S::malloc;
  stack_rows().push_back({workload, S::name, S::label, table_kind<S>(), malloc});
  if constexpr (requires { S::targets; }) {
    if (!targets_listed<S>)
      for (const Target& t : S::targets) stack_targets().emplace_back(S::name, t);
  }
  targets_listed<S> = true;
}

/// `s` as a JSON string literal.
inline std::string json_string(const char* s) {
  std::string o = "\"";
  for (; *s; ++s) {
    const auto c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\') {
      o += '\\';
      o += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else {
      o += static_cast<char>(c);
    }
  }
  return o + "\"";
}

/// Calls f(std::type_identity<S>{}) for every S of the Mp11 list L, constructing nothing.
template <class L, class F>
void for_each_stack(F&& f) {
  boost::mp11::mp_for_each<boost::mp11::mp_transform<std::type_identity, L>>(std::forward<F>(f));
}

}  // namespace alloy_bench
