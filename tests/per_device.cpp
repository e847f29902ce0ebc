// PerDevice<Factory>: one stack per device, made once on first use with that device current, the caller's device
// current again afterwards, destroyed with its device current. Over the CPU stand-in with two devices; over the real
// runtime (label gpu) with whatever devices there are.
// needs: cuda device
#include <alloy/per_device.hpp>

#include <alloy/bitmapped_block.hpp>
#include <alloy/cuda_mallocator.hpp>
#include <alloy/stream_ordered.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "cuda/skip.hpp"
#ifdef ALLOY_CUDA_STANDIN
#include <cuda_standin.hpp>
#endif

namespace {
std::atomic<int> made{0};
int current_device() {  // no REQUIRE: also called from other threads
  int d = -1;
  return cudaGetDevice(&d) == cudaSuccess ? d : -1;
}
// A stack that remembers which device was current when it was made, and counts destructions with another one.
struct Probe {
  static constexpr std::size_t alignment = 256;
  static constexpr alloy::MemorySpace memory_space = alloy::MemorySpace::device;
  int made_on = -1;
  int* destroyed_elsewhere = nullptr;
  explicit Probe(int* d) : made_on(current_device()), destroyed_elsewhere(d) { ++made; }
  Probe(const Probe&) = delete;
  ~Probe() {
    int d = -1;
    (void)cudaGetDevice(&d);
    if (d != made_on) ++*destroyed_elsewhere;
  }
  alloy::Block allocate(std::size_t) noexcept { return {}; }
};
static_assert(alloy::allocator<Probe>);
static_assert(alloy::memory_space_of<Probe>() == alloy::MemorySpace::device);
struct Probes {
  int* destroyed;
  Probe operator()(int) const { return Probe(destroyed); }
};
using Slab = alloy::BitmappedBlock<256, 256, alloy::CudaMallocator>;
struct Pools {
  alloy::SharedStreamOrdered<Slab> operator()(int) const { return alloy::SharedStreamOrdered<Slab>(1 << 20); }
};
}  // namespace

TEST_CASE("PerDevice: one stack per device, made on it, once, from any thread") {
#ifdef ALLOY_CUDA_STANDIN
  alloy::standin::faults f;
  f.device_count = 2;
  alloy::standin::set_faults(f);
#endif
  int devices = 0;
  REQUIRE(cudaGetDeviceCount(&devices) == cudaSuccess);
  int destroyed_elsewhere = 0;
  made = 0;
  const int before_all = current_device();
  {
    alloy::PerDevice<Probes> probes(Probes{&destroyed_elsewhere});
    CHECK(probes.device_count() == devices);
    CHECK(!probes.has(0));
    const int before = current_device();
    CHECK(probes.current().made_on == before);
    const int last = devices - 1;
    std::vector<std::thread> threads;
    std::vector<Probe*> seen(8);
    for (int t = 0; t < 8; ++t) threads.emplace_back([&, t] { seen[t] = &probes.get(last); });
    for (auto& t : threads) t.join();
    for (Probe* p : seen) CHECK(p == seen[0]);  // built once
    CHECK(seen[0]->made_on == last);             // with its device current
    CHECK(current_device() == before);           // and the caller's device back
    CHECK(made == (last == before ? 1 : 2));
    CHECK_THROWS_AS(probes.get(devices), alloy::invalid_argument);
    CHECK_THROWS_AS(probes.get(-1), alloy::invalid_argument);
  }
  CHECK(destroyed_elsewhere == 0);  // each stack destroyed with its own device current
  CHECK(current_device() == before_all);  // and the caller's device back
#ifdef ALLOY_CUDA_STANDIN
  alloy::standin::set_faults({});
#endif
}

TEST_CASE("PerDevice of stream-ordered pools: each device's pool allocates on its device") {
#ifdef ALLOY_CUDA_STANDIN
  alloy::standin::faults f;
  f.device_count = 2;
  alloy::standin::set_faults(f);
#endif
  int devices = 0;
  REQUIRE(cudaGetDeviceCount(&devices) == cudaSuccess);
  {
    alloy::PerDevice<Pools> pools;
    for (int d = 0; d < devices; ++d) {
      CHECK(pools.get(d).device() == d);
      alloy::Block b = pools.get(d).allocate(nullptr, 4096);
      REQUIRE(b);
      cudaPointerAttributes at{};
      REQUIRE(cudaPointerGetAttributes(&at, b.ptr) == cudaSuccess);
      CHECK(at.device == d);  // the slab was made with d current
      CHECK(pools.get(d).deallocate(nullptr, b));
    }
  }
#ifdef ALLOY_CUDA_STANDIN
  alloy::standin::set_faults({});
  CHECK(alloy::standin::take_violations().empty());
#endif
}
