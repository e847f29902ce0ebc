// W6, W3 through a growing list (issue 4; protocol in docs/performance.md): W3's random steady state (2048 slots,
// 10^7 steps of allocate 1 + next() % 512 bytes / deallocate) through an AllocatorList of 1 MiB BitmappedBlock<64>s
// created on demand, against glibc malloc. Reports ns/op (timed pass) and, from a second untimed pass of the same
// sequence, the peak bytes held from the parent and the peak bytes live (requested by the workload).
#include "w3_loop.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include <unistd.h>


namespace alloy_bench {
namespace {

/// glibc malloc: the bytes the heap holds from the system (sbrk arena + mmapped chunks, from mallinfo2), sampled every
/// 1024 steps. (Not measured for mimalloc, jemalloc and tcmalloc, whose statistics are not glibc's: those rows have
/// ns/op only.) A heap keeps what earlier benchmarks freed, so
/// the stats pass runs in a fresh process (`alloy_bench --w6-malloc-peak`, the binary found through /proc/self/exe);
/// the peak held is the heap's system bytes less the bytes in use when the pass starts (not less the system bytes
/// then: the heap a process starts with is mostly free, and W6 fills it without growing it).
struct MallocW6 {
  static constexpr const char* name = ALLOY_BENCH_MALLOC_NAME;
  static constexpr const char* label = ALLOY_BENCH_MALLOC_NAME;
  static constexpr bool anchor = true;
  static constexpr bool malloc = true;
  static auto make(std::size_t) { return MallocAdapter{}; }
  static std::size_t system_bytes() {
#if defined(__GLIBC__) && !defined(ALLOY_BENCH_NOT_GLIBC)
    const auto mi = mallinfo2();
    return mi.arena + mi.hblkhd;
#else
    return 0;
#endif
  }
  static std::size_t in_use_bytes() {
#if defined(__GLIBC__) && !defined(ALLOY_BENCH_NOT_GLIBC)
    const auto mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
#else
    return 0;
#endif
  }
  static void begin_stats() { base = in_use_bytes(); peak = 0; }
  static void sample(MallocAdapter&) {
    const std::size_t now = system_bytes();
    peak = std::max(peak, now > base ? now - base : 0);
  }
  static std::size_t peak_held() { return peak; }
  static inline std::size_t base = 0, peak = 0;
  static constexpr std::size_t sample_every = 1024;
  static constexpr bool fresh_process = true;
};

#if ALLOY_BENCH_HAVE_ALLOCATOR_LIST
/// Mallocator that counts the bytes it holds (stateless: the counters are static).
struct CountingMallocator {
  static constexpr std::size_t alignment = alloy::platform_alignment;
  static const CountingMallocator instance;
  static inline std::size_t held = 0, peak = 0;
  alloy::Block allocate(std::size_t n) noexcept {
    alloy::Block b = alloy::Mallocator::instance.allocate(n);
    if (b) {
      held += b.size;
      peak = std::max(peak, held);
    }
    return b;
  }
  alloy::Block aligned_allocate(std::size_t n, std::size_t a) noexcept {
    alloy::Block b = alloy::AlignedMallocator::instance.aligned_allocate(n, a);
    if (b) {
      held += b.size;
      peak = std::max(peak, held);
    }
    return b;
  }
  bool deallocate(alloy::Block b) noexcept {
    held -= b.size;
    return alloy::Mallocator::instance.deallocate(b);
  }
};
[[maybe_unused]] inline const CountingMallocator CountingMallocator::instance{};

struct W6Factory {
  auto operator()(std::size_t n) const noexcept {
    return alloy::BitmappedBlock<64, alloy::platform_alignment, CountingMallocator>(std::max(n, std::size_t{1} << 20));
  }
};

struct ListOfBitmapped {
  static constexpr const char* name = "AllocatorList<1 MiB BitmappedBlock<64>>";
  static constexpr const char* label = "alloy AllocatorList";
  static constexpr bool anchor = false;
  static auto make(std::size_t) { return alloy::AllocatorList<W6Factory, alloy::Mallocator>{}; }
  template <class A>
  static void sample(A&) {}
  static void begin_stats() { CountingMallocator::peak = CountingMallocator::held; }
  static std::size_t peak_held() { return CountingMallocator::peak; }  // exact: counted at every parent call
  static constexpr std::size_t sample_every = 1u << 30;
};
/// The showcase (examples/general_purpose.hpp) over the same counting parent: its regions (aligned_allocate), the
/// list's nodes and the blocks above 512 bytes all come from CountingMallocator, so its peak held is exact.
struct GeneralPurposeW6 {  // its targets are GeneralPurposeStack's (stacks.hpp), W6's among them
  static constexpr const char* name = GeneralPurposeName;
  static constexpr const char* label = GeneralPurposeStack::label;
  static constexpr bool anchor = false;
  static auto make(std::size_t) { return alloy_examples::GeneralPurpose<CountingMallocator>{}; }
  template <class A>
  static void sample(A&) {}
  static void begin_stats() { CountingMallocator::peak = CountingMallocator::held; }
  static std::size_t peak_held() { return CountingMallocator::peak; }
  static constexpr std::size_t sample_every = 1u << 30;
};
/// The variants whose freed blocks go back to bitmapped chunks (GeneralPurposeBitmapped), same counting parent.
template <std::size_t K, const char* Name>
struct GeneralPurposeBitmappedW6 : GeneralPurposeW6 {
  static constexpr const char* name = Name;
  static constexpr const char* label = gpb_label<K>;
  static auto make(std::size_t) { return alloy_examples::GeneralPurposeBitmapped<CountingMallocator, K>{}; }
};
/// The first showcase without borrowing (GeneralPurposeFixedClasses), same counting parent.
struct GeneralPurposeFixedW6 : GeneralPurposeW6 {
  static constexpr const char* name = GeneralPurposeFixedName;
  static constexpr const char* label = GeneralPurposeFixedStack::label;
  static auto make(std::size_t) { return alloy_examples::GeneralPurposeFixedClasses<CountingMallocator>{}; }
};
using W6Stacks = mp_append<mp_list<MallocW6, ListOfBitmapped, GeneralPurposeW6, GeneralPurposeFixedW6>,
                           GeneralPurposeBitmappedVariants<GeneralPurposeBitmappedW6>>;
#else
using W6Stacks = mp_list<MallocW6>;
#endif

/// The W3 sequence again, untimed, measuring the peak bytes held from the parent and the peak bytes live.
template <class S, class A>
std::pair<std::size_t, std::size_t> w6_stats(A& a, std::vector<Block>& slots) {
  Xorshift64s rng;
  std::size_t live = 0, peak_live = 0;
  S::begin_stats();
  for (std::size_t i = 0; i < w3_steps; ++i) {
    Block& slot = slots[rng.next() % w3_slots];
    if (!slot) {
      Block b = a.allocate(1 + rng.next() % 512);
      if (!b) continue;
      static_cast<volatile unsigned char*>(b.ptr)[0] = 1;
      slot = b;
      live += b.size;
      peak_live = std::max(peak_live, live);
    } else {
      live -= slot.size;
      a.deallocate(slot);
      slot = {};
    }
    if (i % S::sample_every == 0) S::sample(a);
  }
  S::sample(a);
  return {S::peak_held(), peak_live};
}

/// Runs `alloy_bench --w6-malloc-peak` and reads "<peak held> <peak live>" from it. (Not used by the binaries
/// of the other mallocs, which report ns/op only.)
[[maybe_unused]] std::pair<std::size_t, std::size_t> w6_peaks_in_fresh_process() {
  std::pair<std::size_t, std::size_t> r{0, 0};
  char exe[4096] = {};
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);  // not in the shell: /proc/self is sh there
  if (len <= 0) return r;
  const std::string cmd = "'" + std::string(exe, static_cast<std::size_t>(len)) + "' --w6-malloc-peak";
  if (FILE* f = popen(cmd.c_str(), "r")) {
    unsigned long long held = 0, live = 0;
    if (std::fscanf(f, "%llu %llu", &held, &live) == 2) r = {held, live};
    pclose(f);
  }
  return r;
}

template <class S>
void w6_bench(benchmark::State& state) {
  for (auto _ : state) {
    std::vector<Block> slots(w3_slots);
    double ns = 0;
    W3Result r;
    {
      auto a = S::make(0);
      escape(a);
      Stopwatch sw;
      sw.start();
      r = w3_loop(a, slots, w3_steps);
      ns = sw.elapsed_ns();
      w3_release(a, slots);
    }
    report(state, ns, static_cast<double>(w3_steps));
    state.counters["failures"] = benchmark::Counter(static_cast<double>(r.failures));
#ifndef ALLOY_BENCH_NOT_GLIBC  // the mimalloc, jemalloc and tcmalloc rows have ns/op only (see MallocW6)
    std::pair<std::size_t, std::size_t> peaks{0, 0};
    if constexpr (requires { S::fresh_process; }) {
      peaks = w6_peaks_in_fresh_process();
    } else {
      auto a = S::make(0);
      peaks = w6_stats<S>(a, slots);
      w3_release(a, slots);
    }
    state.counters["peak_held_bytes"] = benchmark::Counter(static_cast<double>(peaks.first));
    state.counters["peak_live_bytes"] = benchmark::Counter(static_cast<double>(peaks.second));
#endif
  }
  state.SetLabel(kind_label<S>());
}

const int registered = [] {
  for_each_stack<W6Stacks>([](auto t) {
    using S = typename decltype(t)::type;
    register_stack<S>("W6", &w6_bench<S>);
  });
  return 0;
}();

}  // namespace

int w6_malloc_peak_main() {
  std::vector<Block> slots(w3_slots);
  MallocAdapter a;
  const auto [held, live] = w6_stats<MallocW6>(a, slots);
  w3_release(a, slots);
  std::printf("%zu %zu\n", held, live);
  return 0;
}

}  // namespace alloy_bench
