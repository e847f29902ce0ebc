// alloy_bench: Google Benchmark's main, plus
//   alloy_bench --callgrind <workload>/<stack> <n>   one untimed pass for `valgrind --tool=callgrind` (W1, W3, W4)
//   alloy_bench --list-callgrind                     the names accepted by --callgrind, one per line
//   alloy_bench --list-stacks                        every registered stack's descriptor as JSON (see list_stacks)
//   alloy_bench --w6-malloc-peak                     W6's malloc stats pass in this fresh process (used by W6)
// Without --benchmark_repetitions the suite runs 5 repetitions and reports the aggregates only (median, mean, ...).
#include "common.hpp"
#include "stacks.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifdef ALLOY_BENCH_MIMALLOC
#include <mimalloc.h>
#endif
#ifdef ALLOY_BENCH_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif
#ifdef ALLOY_BENCH_TCMALLOC
#include <gperftools/malloc_extension_c.h>
#endif

namespace alloy_bench {
int w6_malloc_peak_main();  // w6_list_steady.cpp

/// `--list-stacks`: the descriptors (stacks.hpp) of every registered benchmark, for tools/bench_report.py, which
/// stores them with the results and takes labels, kinds and goals from them:
///   {"binary": ..., "malloc_names": [...], "not_built": [{"name", "label"}...],
///    "rows": [{"workload", "name", "label", "kind", "malloc"}...],                  one per benchmark, in run order
///    "targets": [{"stack", "workload", "check", "goal", "of": [...], "factor": [...], "noise",
///                 "with_instructions"}...]}                                        in registration order
/// malloc_names are the names the malloc row takes in the malloc binaries; not_built the descriptors that targets
/// may name but this build left out (foonathan::memory absent).
int list_stacks(const char* argv0) {
  const char* base = std::strrchr(argv0, '/');
  std::printf("{\"binary\": %s,\n \"malloc_names\": [", json_string(base ? base + 1 : argv0).c_str());
  for (std::size_t i = 0; i < malloc_names.size(); ++i)
    std::printf("%s%s", i ? ", " : "", json_string(malloc_names[i]).c_str());
  std::printf("],\n \"not_built\": [");
  if constexpr (!ALLOY_BENCH_HAVE_FOONATHAN) {
    bool first = true;
    for_each_stack<FoonathanInfos>([&](auto t) {
      using S = typename decltype(t)::type;
      std::printf("%s{\"name\": %s, \"label\": %s}", first ? "" : ", ", json_string(S::name).c_str(),
                  json_string(S::label).c_str());
      first = false;
    });
  }
  std::printf("],\n \"rows\": [");
  const auto& rows = stack_rows();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const StackRow& r = rows[i];
    std::printf("%s\n  {\"workload\": %s, \"name\": %s, \"label\": %s, \"kind\": %s, \"malloc\": %s}",
                i ? "," : "", json_string(r.workload.c_str()).c_str(), json_string(r.name.c_str()).c_str(),
                json_string(r.label.c_str()).c_str(), json_string(r.kind.c_str()).c_str(),
                r.malloc ? "true" : "false");
  }
  std::printf("],\n \"targets\": [");
  const auto& targets = stack_targets();
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const auto& [stack, t] = targets[i];
    std::string of, factor;
    for (std::size_t k = 0; k < t.of.size() && t.of[k]; ++k) {
      of += (k ? ", " : "") + json_string(t.of[k]);
      factor += (k ? ", " : "") + std::to_string(t.factor[k]);
    }
    if (!t.of[0]) factor = std::to_string(t.factor[0]);  // a target with no reference (arena_sweep) keeps its bound
    std::printf("%s\n  {\"stack\": %s, \"workload\": %s, \"check\": %s, \"goal\": %s, \"of\": [%s], "
                "\"factor\": [%s], \"noise\": %g, \"with_instructions\": %s}",
                i ? "," : "", json_string(stack.c_str()).c_str(), json_string(t.workload).c_str(),
                json_string(t.check).c_str(), json_string(t.goal).c_str(), of.c_str(), factor.c_str(), t.noise,
                t.with_instructions ? "true" : "false");
  }
  std::printf("]}\n");
  return 0;
}
}  // namespace alloy_bench

int main(int argc, char** argv) {
  using namespace alloy_bench;
  if (argc >= 2 && std::strcmp(argv[1], "--w6-malloc-peak") == 0) return w6_malloc_peak_main();
  if (argc >= 2 && std::strcmp(argv[1], "--list-stacks") == 0) return list_stacks(argv[0]);
  if (argc >= 2 && std::strcmp(argv[1], "--list-callgrind") == 0) {
    for (const auto& [name, e] : callgrind_registry()) std::printf("%s\t%g\n", name.c_str(), e.ops_per_n);
    return 0;
  }
  if (argc >= 2 && std::strcmp(argv[1], "--callgrind") == 0) {
    if (argc < 4) {
      std::fprintf(stderr, "usage: %s --callgrind <workload>/<stack> <n>\n", argv[0]);
      return 2;
    }
    const auto it = callgrind_registry().find(argv[2]);
    if (it == callgrind_registry().end()) {
      std::fprintf(stderr, "unknown callgrind pass '%s' (see --list-callgrind)\n", argv[2]);
      return 2;
    }
    it->second.pass(std::strtoull(argv[3], nullptr, 10));
    return 0;
  }
#ifdef ALLOY_BENCH_MIMALLOC
  {  // the malloc rows must really run on mimalloc (the link overrides malloc): check it once
    void* p = std::calloc(1, 64);  // calloc: GCC warns when malloc's uninitialized bytes reach a const void* parameter
    if (!mi_is_in_heap_region(p)) {
      std::fprintf(stderr, "alloy_bench_mimalloc: malloc is not mimalloc's; refusing to report it as mimalloc\n");
      return 1;
    }
    std::free(p);
  }
#endif
#ifdef ALLOY_BENCH_JEMALLOC
  {  // the same check for jemalloc: its arena lookup knows only pointers from its own heap
    void* p = std::calloc(1, 64);
    unsigned arena = 0;
    std::size_t sz = sizeof arena;
    if (mallctl("arenas.lookup", &arena, &sz, &p, sizeof p) != 0) {
      std::fprintf(stderr, "alloy_bench_jemalloc: malloc is not jemalloc's; refusing to report it as jemalloc\n");
      return 1;
    }
    std::free(p);
  }
#endif
#ifdef ALLOY_BENCH_TCMALLOC
  {  // and for tcmalloc: it owns only what its own malloc handed out
    void* p = std::calloc(1, 64);
    if (MallocExtension_GetOwnership(p) != MallocExtension_kOwned) {
      std::fprintf(stderr, "alloy_bench_tcmalloc: malloc is not tcmalloc's; refusing to report it as tcmalloc\n");
      return 1;
    }
    std::free(p);
  }
#endif

  std::vector<char*> args(argv, argv + argc);
  bool has_reps = false, has_aggr = false;
  for (char* a : args) {
    has_reps |= std::strncmp(a, "--benchmark_repetitions", 23) == 0;
    has_aggr |= std::strncmp(a, "--benchmark_report_aggregates_only", 34) == 0;
  }
  std::string reps = "--benchmark_repetitions=5", aggr = "--benchmark_report_aggregates_only=true";
  if (!has_reps) args.push_back(reps.data());
  if (!has_aggr) args.push_back(aggr.data());
  int n = static_cast<int>(args.size());
  args.push_back(nullptr);

  benchmark::AddCustomContext("alloy.foonathan_memory", ALLOY_BENCH_HAVE_FOONATHAN ? "yes" : "absent");
  benchmark::AddCustomContext("alloy.bitmapped_block", ALLOY_BENCH_HAVE_BITMAPPED ? "yes" : "absent");
  benchmark::AddCustomContext("alloy.region", ALLOY_BENCH_HAVE_REGION ? "yes" : "absent");
  benchmark::AddCustomContext("alloy.allocator_list", ALLOY_BENCH_HAVE_ALLOCATOR_LIST ? "yes" : "absent");
  benchmark::AddCustomContext("alloy.compiler", __VERSION__);
  benchmark::AddCustomContext("alloy.malloc", ALLOY_BENCH_MALLOC_NAME);

  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
