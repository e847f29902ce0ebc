// device_bench: host-side nanoseconds per allocate + deallocate pair of device memory (docs/performance.md, "Device").
//   D1: random sizes 256 B .. 64 KiB (log-uniform), a live set of 1024 slots, 2 x 10^5 steps (cudaMalloc: 2 x 10^4);
//       each step frees the slot's block (if any) and allocates a new one into it.
//   D2: the same with every size 256 B.
//   D3: a 1 MiB buffer constructed and destroyed on a stream, 10^4 times.
// Rows: cudaMalloc, cudaMallocAsync (the default pool, release threshold at maximum), alloy's stacks
// (CudaAsyncMallocator, BitmappedBlock<256, 256, CudaMallocator> and its Multiblock::no form, an AllocatorList of
// 64 MiB slabs, and SharedStreamOrdered over that list on one and on four streams), and RMM's resources when built
// with RMM (ALLOY_BENCH_HAVE_RMM; tools/fetch_rmm.sh). Every row's label says whether the stack is stream-ordered and
// thread-safe: the bare alloy stacks are neither, SharedStreamOrdered and RMM's are both.
//
// Built twice: device_bench over the real CUDA runtime (without a GPU it says so and exits 77), and
// device_bench_standin over the CPU stand-in for the runtime (tests/support/cuda_standin), whose timings are the
// stand-in's host code, not a GPU's, and are labelled so; it also reports CUDA calls per pair.
#include <alloy/allocator_list.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/cuda_mallocator.hpp>
#include <alloy/device_buffer.hpp>
#include <alloy/stream_ordered.hpp>

#include <benchmark/benchmark.h>

#include "../common.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#ifdef ALLOY_CUDA_STANDIN
#include <cuda_standin.hpp>
#endif
#if ALLOY_BENCH_HAVE_RMM
#include <rmm/device_buffer.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#endif

namespace {

using alloy::Block;
constexpr std::size_t live_slots = 1024;

using alloy_bench::Xorshift64s;  // the generator of every workload (docs/workloads.md), fixed seed

// The sizes of D1 (log-uniform in [256, 65536]) or D2 (256), drawn before the clock starts.
std::vector<std::size_t> sizes(std::size_t steps, bool fixed) {
  Xorshift64s rng;
  std::vector<std::size_t> v(steps);
  for (auto& n : v) {
    if (fixed) {
      n = 256;
    } else {
      const double u = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
      n = static_cast<std::size_t>(std::exp2(8.0 + 8.0 * u));
    }
  }
  return v;
}
std::vector<std::uint32_t> slots(std::size_t steps) {
  Xorshift64s rng;
  rng.x ^= 0x5555;
  std::vector<std::uint32_t> v(steps);
  for (auto& s : v) s = static_cast<std::uint32_t>(rng.next() % live_slots);
  return v;
}

std::uint64_t cuda_calls() {
#ifdef ALLOY_CUDA_STANDIN
  return alloy::standin::call_count();
#else
  return 0;
#endif
}

void finish(benchmark::State& state, double ns, double pairs, std::uint64_t calls, std::size_t failures,
            const char* label) {
  state.SetIterationTime(ns * 1e-9);
  state.counters["ns/pair"] = benchmark::Counter(ns / pairs);
  state.counters["failures"] = benchmark::Counter(static_cast<double>(failures));
#ifdef ALLOY_CUDA_STANDIN
  state.counters["cuda_calls/pair"] = benchmark::Counter(static_cast<double>(calls) / pairs);
  state.SetLabel(std::string("CPU stand-in timing; ") + label);
#else
  (void)calls;
  state.SetLabel(label);
#endif
}

// D1 / D2 over any allocation interface: alloc(n) -> void*, dealloc(p, n).
template <class Alloc, class Dealloc>
void churn(benchmark::State& state, std::size_t steps, bool fixed, Alloc alloc, Dealloc dealloc, const char* label) {
  const auto sz = sizes(steps, fixed);
  const auto sl = slots(steps);
  std::vector<std::pair<void*, std::size_t>> live(live_slots, {nullptr, 0});
  for (auto _ : state) {
    std::size_t failures = 0;
    const std::uint64_t calls0 = cuda_calls();
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < steps; ++i) {
      auto& slot = live[sl[i]];
      if (slot.first) dealloc(slot.first, slot.second);
      slot = {alloc(sz[i]), sz[i]};
      if (!slot.first) ++failures;
    }
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    const std::uint64_t calls = cuda_calls() - calls0;
    for (auto& slot : live) {
      if (slot.first) dealloc(slot.first, slot.second);
      slot = {nullptr, 0};
    }
    finish(state, ns, static_cast<double>(steps), calls, failures, label);
  }
}

template <class A>
void churn_alloy(benchmark::State& state, A& a, std::size_t steps, bool fixed, const char* label) {
  churn(
      state, steps, fixed, [&a](std::size_t n) { return a.allocate(n).ptr; },
      [&a](void* p, std::size_t n) { a.deallocate(Block{p, n}); }, label);
}

// D1 / D2 over a stream-ordered stack on k streams: each new block goes to one of them (slot i's stream is i mod k),
// and is freed on the stream it was allocated on.
template <class A>
void churn_streams(benchmark::State& state, A& a, std::size_t steps, bool fixed, const std::vector<cudaStream_t>& ss,
                   const char* label) {
  const auto sz = sizes(steps, fixed);
  const auto sl = slots(steps);
  std::vector<Block> live(live_slots);
  for (auto _ : state) {
    std::size_t failures = 0;
    const std::uint64_t calls0 = cuda_calls();
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < steps; ++i) {
      Block& slot = live[sl[i]];
      cudaStream_t s = ss[sl[i] % ss.size()];
      if (slot) a.deallocate(s, slot);
      slot = a.allocate(s, sz[i]);
      if (!slot) ++failures;
    }
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    const std::uint64_t calls = cuda_calls() - calls0;
    for (std::size_t j = 0; j < live.size(); ++j) {
      if (live[j]) a.deallocate(ss[j % ss.size()], live[j]);
      live[j] = {};
    }
    finish(state, ns, static_cast<double>(steps), calls, failures, label);
  }
}

constexpr const char* not_ordered = "not stream-ordered, not thread-safe";
constexpr const char* ordered_safe = "stream-ordered, thread-safe";

using Slab = alloy::BitmappedBlock<256, 256, alloy::CudaMallocator>;
using SingleSlab = alloy::BitmappedBlock<256, 256, alloy::CudaMallocator, alloy::Multiblock::no>;
struct Slabs {
  Slab operator()(std::size_t n) const { return Slab(std::max<std::size_t>(n, std::size_t{64} << 20)); }
};
using SlabList = alloy::AllocatorList<Slabs>;

const std::vector<cudaStream_t>& bench_streams() {  // four non-blocking streams, for the life of the process
  static const std::vector<cudaStream_t> v = [] {
    std::vector<cudaStream_t> x(4, nullptr);
    for (auto& s : x) (void)cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    return x;
  }();
  return v;
}
cudaStream_t bench_stream() { return bench_streams()[0]; }
using Pool = alloy::SharedStreamOrdered<SlabList>;

void register_all() {
  using benchmark::RegisterBenchmark;
  auto reg = [](const std::string& name, auto fn) {
    RegisterBenchmark(name.c_str(), fn)->Iterations(1)->Repetitions(3)->UseManualTime()->Unit(benchmark::kMillisecond);
  };
  for (const bool fixed : {false, true}) {
    const std::string w = fixed ? "D2/" : "D1/";
    const std::size_t steps = 200000;
    reg(w + "cudaMalloc", [=](benchmark::State& st) {
      churn(
          st, steps / 10, fixed,
          [](std::size_t n) {
            void* p = nullptr;
            const cudaError_t e = cudaMalloc(&p, n);
            return e == cudaSuccess ? p : nullptr;
          },
          [](void* p, std::size_t) { (void)cudaFree(p); }, "synchronizes the device, thread-safe");
    });
    reg(w + "cudaMallocAsync (default pool)", [=](benchmark::State& st) {
      cudaMemPool_t pool = nullptr;
      int dev = 0;
      (void)cudaGetDevice(&dev);
      (void)cudaDeviceGetDefaultMemPool(&pool, dev);
      std::uint64_t threshold = UINT64_MAX;
      (void)cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
      cudaStream_t s = bench_stream();
      churn(
          st, steps, fixed,
          [s](std::size_t n) {
            void* p = nullptr;
            const cudaError_t e = cudaMallocAsync(&p, n, s);
            return e == cudaSuccess ? p : nullptr;
          },
          [s](void* p, std::size_t) { (void)cudaFreeAsync(p, s); }, ordered_safe);
      (void)cudaStreamSynchronize(s);
    });
    reg(w + "alloy CudaAsyncMallocator", [=](benchmark::State& st) {
      alloy::CudaAsyncMallocator a;
      cudaStream_t s = bench_stream();
      churn(
          st, steps, fixed, [&a, s](std::size_t n) { return a.allocate(s, n).ptr; },
          [&a, s](void* p, std::size_t n) { a.deallocate(s, Block{p, n}); }, ordered_safe);
      (void)cudaStreamSynchronize(s);
    });
    reg(w + "alloy BitmappedBlock<256,256,CudaMallocator>", [=](benchmark::State& st) {
      Slab a(std::size_t{256} << 20);
      churn_alloy(st, a, steps, fixed, not_ordered);
    });
    if (fixed) {
      reg(w + "alloy BitmappedBlock<256,256,CudaMallocator,Multiblock::no>", [=](benchmark::State& st) {
        SingleSlab a(std::size_t{256} << 20);
        churn_alloy(st, a, steps, fixed, not_ordered);
      });
    }
    reg(w + "alloy AllocatorList of 64 MiB BitmappedBlock slabs", [=](benchmark::State& st) {
      SlabList a;
      churn_alloy(st, a, steps, fixed, not_ordered);
    });
    for (const std::size_t k : {std::size_t{1}, std::size_t{4}}) {
      reg(w + "alloy SharedStreamOrdered<AllocatorList of slabs>, " + std::to_string(k) + " stream(s)",
          [=](benchmark::State& st) {
            Pool pool;
            const std::vector<cudaStream_t> ss(bench_streams().begin(), bench_streams().begin() + k);
            churn_streams(st, pool, steps, fixed, ss, ordered_safe);
            (void)pool.release();
          });
    }
#if ALLOY_BENCH_HAVE_RMM
    // RMM 26 (cuda::mr spelling): allocate(stream, bytes, alignment), deallocate(stream, p, bytes, alignment).
    auto rmm_churn = [](benchmark::State& st, auto& mr, std::size_t n_steps, bool fx) {
      const cuda::stream_ref s{bench_stream()};
      churn(
          st, n_steps, fx, [&](std::size_t n) { return mr.allocate(s, n, 256); },
          [&](void* p, std::size_t n) { mr.deallocate(s, p, n, 256); }, ordered_safe);
      (void)cudaStreamSynchronize(bench_stream());
    };
    reg(w + "RMM pool_memory_resource", [=](benchmark::State& st) {
      rmm::mr::pool_memory_resource pool(rmm::mr::cuda_memory_resource{}, std::size_t{256} << 20);
      rmm_churn(st, pool, steps, fixed);
    });
    reg(w + "RMM arena_memory_resource", [=](benchmark::State& st) {
      rmm::mr::arena_memory_resource arena(rmm::mr::cuda_memory_resource{}, std::size_t{256} << 20);
      rmm_churn(st, arena, steps, fixed);
    });
    reg(w + "RMM cuda_async_memory_resource", [=](benchmark::State& st) {
      rmm::mr::cuda_async_memory_resource async;
      rmm_churn(st, async, steps, fixed);
    });
    if (fixed) {
      reg(w + "RMM fixed_size_memory_resource", [=](benchmark::State& st) {
        rmm::mr::fixed_size_memory_resource fixed_mr(rmm::mr::cuda_memory_resource{}, 256);
        rmm_churn(st, fixed_mr, steps, true);
      });
    }
#endif
  }

  // D3: a 1 MiB buffer constructed and destroyed on a stream.
  constexpr std::size_t d3_rounds = 10000, mib = std::size_t{1} << 20;
  auto d3 = [](benchmark::State& st, auto make, const char* label) {
    for (auto _ : st) {
      const std::uint64_t calls0 = cuda_calls();
      const auto t0 = std::chrono::steady_clock::now();
      for (std::size_t i = 0; i < d3_rounds; ++i) {
        auto b = make();
        benchmark::DoNotOptimize(b.data());
      }
      const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
      finish(st, ns, static_cast<double>(d3_rounds), cuda_calls() - calls0, 0, label);
    }
  };
  reg("D3/alloy device_buffer<AllocatorList of slabs>", [=](benchmark::State& st) {
    SlabList list;
    cudaStream_t s = bench_stream();
    st.counters["sizeof"] = static_cast<double>(sizeof(alloy::device_buffer<SlabList>));
    d3(st, [&] { return alloy::device_buffer<SlabList>(mib, s, list); }, not_ordered);
  });
  for (const std::size_t k : {std::size_t{1}, std::size_t{4}}) {
    reg("D3/alloy device_buffer<SharedStreamOrdered<AllocatorList of slabs>>, " + std::to_string(k) + " stream(s)",
        [=](benchmark::State& st) {
          Pool pool;
          std::size_t i = 0;
          st.counters["sizeof"] = static_cast<double>(sizeof(alloy::device_buffer<Pool>));
          d3(st, [&] { return alloy::device_buffer<Pool>(mib, bench_streams()[i++ % k], pool); }, ordered_safe);
          (void)pool.release();
        });
  }
  reg("D3/alloy device_buffer<CudaAsyncMallocator>", [=](benchmark::State& st) {
    alloy::CudaAsyncMallocator a;
    cudaStream_t s = bench_stream();
    st.counters["sizeof"] = static_cast<double>(sizeof(alloy::device_buffer<alloy::CudaAsyncMallocator>));
    d3(st, [&] { return alloy::device_buffer<alloy::CudaAsyncMallocator>(mib, s, a); }, ordered_safe);
    (void)cudaStreamSynchronize(s);
  });
#if ALLOY_BENCH_HAVE_RMM
  reg("D3/rmm::device_buffer over pool_memory_resource", [=](benchmark::State& st) {
    rmm::mr::pool_memory_resource pool(rmm::mr::cuda_memory_resource{}, std::size_t{256} << 20);
    const cuda::stream_ref s{bench_stream()};
    st.counters["sizeof"] = static_cast<double>(sizeof(rmm::device_buffer));
    d3(st, [&] { return rmm::device_buffer(mib, s, pool); }, ordered_safe);
    (void)cudaStreamSynchronize(bench_stream());
  });
#endif
}

}  // namespace

int main(int argc, char** argv) {
  if (!alloy::cuda_available()) {
    const alloy::cuda_device_query q = alloy::query_cuda_devices();
    std::printf("device_bench: no CUDA device (cudaGetDeviceCount: error %d); nothing to measure\n", q.error);
    return 77;
  }
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (cudaStream_t s : bench_streams()) (void)cudaStreamDestroy(s);
  return 0;
}
