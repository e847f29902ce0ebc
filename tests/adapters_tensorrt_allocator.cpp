// ctest-labels: tsan
// TensorRTAllocator against the real NvInferRuntime.h when it is on the include path, else against the
// declaration-only stand-in in tests/support/tensorrt_decl (TensorRT 10's documented interface).
#if __has_include(<NvInferRuntime.h>)
#include <NvInferRuntime.h>
#else
#include "support/tensorrt_decl/NvInferRuntime.h"
#endif
#include <alloy/adapters/tensorrt_allocator.hpp>
#include <alloy/aligned_mallocator.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/ref.hpp>
#include <alloy/region.hpp>

#include <cstdint>
#include <cstring>
#include <thread>
#include <type_traits>
#include <vector>

#include <doctest/doctest.h>

#include "support/test_allocators.hpp"

using alloy::TensorRTAllocator;
static_assert(std::is_base_of_v<nvinfer1::IGpuAsyncAllocator, TensorRTAllocator<alloy::Mallocator>>);
static_assert(std::is_base_of_v<nvinfer1::IGpuAllocator, TensorRTAllocator<alloy::NoAccessAllocator>>);
static_assert(!std::is_abstract_v<TensorRTAllocator<alloy::NoAccessAllocator>>);

namespace {
// What TensorRT does with an allocator: through the interface only.
void exercise(nvinfer1::IGpuAsyncAllocator& a, bool host) {
  auto* stream = reinterpret_cast<cudaStream_t>(std::uintptr_t{0x7000});
  CHECK(a.allocateAsync(0, 0, 0, stream) == nullptr);        // size 0: nullptr
  CHECK(a.allocateAsync(64, 48, 0, stream) == nullptr);      // not a power of two
  CHECK(a.allocateAsync(UINT64_MAX / 2, 0, 0, stream) == nullptr);
  std::vector<std::pair<void*, std::size_t>> live;
  for (std::uint64_t align : {0u, 1u, 16u, 256u}) {
    for (std::uint64_t n : {1u, 100u, 4096u, 70000u}) {
      void* p = a.allocateAsync(n, align, 0, stream);
      REQUIRE(p != nullptr);
      if (align) CHECK(alloy::is_aligned(p, align));
      if (host) std::memset(p, 0xAB, n);
      live.emplace_back(p, n);
    }
  }
  for (auto [p, n] : live) CHECK(a.deallocateAsync(p, stream));
  CHECK(a.deallocateAsync(nullptr, stream));
  // The deprecated synchronous pair of IGpuAsyncAllocator forwards to the async one on the default stream.
  void* p = a.allocateAsync(10, 0, 0, nullptr);
  CHECK(a.deallocateAsync(p, nullptr));
  CHECK(std::strcmp(a.getInterfaceInfo().kind, "IGpuAllocator") == 0);
}
}  // namespace

TEST_CASE("TensorRTAllocator: host stacks and a device-like stack through IGpuAsyncAllocator") {
  TensorRTAllocator<alloy::AlignedMallocator> h;
  exercise(h, true);
  CHECK(h.live_blocks() == 0);
  TensorRTAllocator<alloy::NoAccessAllocator> d;
  exercise(d, false);
  CHECK(d.live_blocks() == 0);
  CHECK(alloy::NoAccessAllocator::live_blocks() == 0);
  // A device-like pool: 256-byte blocks over NoAccessAllocator, bitmap on the host (TensorRT's usual request mix).
  TensorRTAllocator<alloy::BitmappedBlock<256, 256, alloy::NoAccessAllocator>> pool(std::size_t{1} << 22);
  exercise(pool, false);
  CHECK(pool.live_blocks() == 0);
  CHECK(pool.stack().empty() == alloy::Ternary::yes);
  TensorRTAllocator<alloy::Mallocator> m;  // no aligned_allocate: only alignments up to 16
  void* p = m.allocateAsync(10, 16, 0, nullptr);
  CHECK(p != nullptr);
  CHECK(m.allocateAsync(10, 256, 0, nullptr) == nullptr);
  CHECK(m.deallocateAsync(p, nullptr));
}

TEST_CASE("TensorRTAllocator: the size table gives the stack back exactly its blocks") {
  using Heap = alloy::test::CheckedHeap<16, alloy::test::caps::aligned | alloy::test::caps::expand>;
  Heap heap;
  {
    TensorRTAllocator<alloy::Ref<Heap>> t(heap);
    std::vector<void*> ps;
    for (std::uint64_t i = 1; i < 200; ++i) ps.push_back(t.allocateAsync(i * 37, i % 2 ? 0 : 64, 0, nullptr));
    for (std::size_t i = 0; i < ps.size(); i += 2) CHECK(t.deallocateAsync(ps[i], nullptr));
    CHECK(heap.live_blocks() == 99);
  }  // the rest are given back by the destructor
  CHECK(heap.live_blocks() == 0);
  heap.fail_after(1);
  TensorRTAllocator<alloy::Ref<Heap>> t(heap);
  void* p = t.allocateAsync(8, 0, 0, nullptr);
  CHECK(p != nullptr);
  CHECK(t.allocateAsync(8, 0, 0, nullptr) == nullptr);  // the stack is out of memory: nullptr, no throw
  CHECK(t.deallocateAsync(p, nullptr));
}

namespace {
// A stream-ordered stack that can also align: an over-aligned request goes through aligned_allocate (no stream) and
// deallocateAsync gives it back through deallocate(stream, b), which takes every block (docs/primitives.md).
struct OrderedAligningHeap {
  using Heap = alloy::test::CheckedHeap<16, alloy::test::caps::aligned>;
  static constexpr std::size_t alignment = 16;
  Heap* heap;
  std::vector<cudaStream_t> alloc_streams, free_streams;
  int aligned = 0;
  alloy::Block allocate(std::size_t n) noexcept { return heap->allocate(n); }
  bool deallocate(alloy::Block b) noexcept { return heap->deallocate(b); }
  alloy::Block allocate(alloy::stream_view s, std::size_t n) noexcept {
    alloc_streams.push_back(s);
    return heap->allocate(n);
  }
  bool deallocate(alloy::stream_view s, alloy::Block b) noexcept {
    free_streams.push_back(s);
    return heap->deallocate(b);
  }
  alloy::Block aligned_allocate(std::size_t n, std::size_t a) noexcept {
    ++aligned;
    return heap->aligned_allocate(n, a);
  }
};
static_assert(alloy::has_stream_ordered<OrderedAligningHeap> && alloy::has_aligned_allocate<OrderedAligningHeap>);
}  // namespace

TEST_CASE("TensorRTAllocator: a stream-ordered stack gets the stream; its over-aligned blocks go back on it") {
  OrderedAligningHeap::Heap heap;
  {
    TensorRTAllocator<OrderedAligningHeap> t(OrderedAligningHeap{&heap, {}, {}, 0});
    auto* s1 = reinterpret_cast<cudaStream_t>(std::uintptr_t{0x71});
    auto* s2 = reinterpret_cast<cudaStream_t>(std::uintptr_t{0x72});
    void* p = t.allocateAsync(100, 16, 0, s1);  // within the stack's alignment: the stream-ordered allocate
    void* q = t.allocateAsync(100, 4096, 0, s1);  // above it: aligned_allocate
    REQUIRE(p != nullptr);
    REQUIRE(q != nullptr);
    CHECK(alloy::is_aligned(q, 4096));
    CHECK(heap.live_blocks() == 2);
    CHECK(t.deallocateAsync(q, s2));
    CHECK(t.deallocateAsync(p, s1));
    CHECK(heap.live_blocks() == 0);
    CHECK(t.stack().alloc_streams == std::vector<cudaStream_t>{s1});
    CHECK(t.stack().aligned == 1);
    CHECK(t.stack().free_streams == std::vector<cudaStream_t>{s2, s1});
  }
  CHECK(heap.live_blocks() == 0);
}

TEST_CASE("TensorRTAllocator: reallocate (kRESIZABLE)") {
  using Heap = alloy::test::CheckedHeap<16, alloy::test::caps::aligned | alloy::test::caps::expand>;
  Heap heap;
  TensorRTAllocator<alloy::Ref<Heap>> t(heap);
  auto* p = static_cast<unsigned char*>(
      t.allocateAsync(100, 0, 1u << static_cast<int>(nvinfer1::AllocatorFlag::kRESIZABLE), nullptr));
  for (int i = 0; i < 100; ++i) p[i] = static_cast<unsigned char>(i);
  CHECK(t.reallocate(p, 0, 50) == p);     // shrink: in place
  CHECK(t.reallocate(p, 0, 200) == p);    // CheckedHeap expands in place within its granule
  auto* q = static_cast<unsigned char*>(t.reallocate(p, 0, 5000));  // must move
  REQUIRE(q != nullptr);
  for (int i = 0; i < 100; ++i) CHECK(q[i] == i);
  CHECK(t.reallocate(q, 3, 10) == nullptr);   // bad alignment
  CHECK(t.deallocateAsync(q, nullptr));
  CHECK(heap.live_blocks() == 0);

  TensorRTAllocator<alloy::NoAccessAllocator> d;  // device-like: moved through the stack's copy
  void* a = d.allocateAsync(10, 0, 0, nullptr);
  CHECK(alloy::NoAccessAllocator::instance.copy(a, "0123456789", 10, {}));
  void* b = d.reallocate(a, 0, 100000);
  REQUIRE(b != nullptr);
  char back[11] = {};
  CHECK(alloy::NoAccessAllocator::instance.copy(back, b, 10, {}));
  CHECK(std::strcmp(back, "0123456789") == 0);
  CHECK(d.deallocateAsync(b, nullptr));
  CHECK(d.live_blocks() == 0);
}

TEST_CASE("TensorRTAllocator: thread-safe (8 threads, one allocator)") {
  TensorRTAllocator<alloy::Region<alloy::Mallocator>> t(std::size_t{1} << 24);  // a Region is not thread-safe itself
  TensorRTAllocator<alloy::Mallocator> m;
  std::vector<std::thread> ts;
  std::vector<int> failures(8, 0);
  for (int k = 0; k < 8; ++k) {
    ts.emplace_back([&, k] {
      nvinfer1::IGpuAsyncAllocator& a = (k % 2) ? static_cast<nvinfer1::IGpuAsyncAllocator&>(t) : m;
      std::uint64_t x = 0x9E3779B97F4A7C15ull * (k + 1);
      std::vector<void*> mine;
      for (int i = 0; i < 5000; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (mine.size() < 32 && x % 2) {
          void* p = a.allocateAsync(1 + x % 300, 16, 0, nullptr);
          if (!p) { ++failures[k]; continue; }
          std::memset(p, k, 1);
          mine.push_back(p);
        } else if (!mine.empty()) {
          void* p = mine.back();
          mine.pop_back();
          if (*static_cast<unsigned char*>(p) != k) ++failures[k];
          a.deallocateAsync(p, nullptr);
        }
      }
      for (void* p : mine) a.deallocateAsync(p, nullptr);
    });
  }
  for (auto& th : ts) th.join();
  for (int f : failures) CHECK(f == 0);
  CHECK(t.live_blocks() == 0);
  CHECK(m.live_blocks() == 0);
}

TEST_CASE("TensorRTAllocator: reallocate to the same size stays in place") {
  using Heap = alloy::test::CheckedHeap<16, alloy::test::caps::aligned | alloy::test::caps::expand>;
  Heap heap;
  TensorRTAllocator<alloy::Ref<Heap>> t(heap);
  void* p = t.allocateAsync(100, 0, 0, nullptr);
  REQUIRE(p != nullptr);
  REQUIRE(t.reallocate(p, 0, 100) == p);
  CHECK(heap.allocations() == 1);
  CHECK(t.deallocateAsync(p, nullptr));
}

TEST_CASE("TensorRTAllocator: reallocate gives the requested alignment when shrinking too") {
  using Heap = alloy::test::CheckedHeap<16, alloy::test::caps::aligned | alloy::test::caps::expand>;
  Heap heap;
  TensorRTAllocator<alloy::Ref<Heap>> t(heap);
  void* p = nullptr;  // a block the heap did not happen to align to 4096
  for (int i = 0; i < 64 && p == nullptr; ++i) {
    void* x = t.allocateAsync(100, 0, 0, nullptr);
    if (!alloy::is_aligned(x, 4096)) p = x;
  }
  REQUIRE(p != nullptr);
  void* q = t.reallocate(p, 4096, 50);
  REQUIRE(q != nullptr);
  CHECK(alloy::is_aligned(q, 4096));
  CHECK(t.deallocateAsync(q, nullptr));
}  // the rest are given back by the destructor

TEST_CASE("TensorRTAllocator: reallocate of null allocates; of a pointer it never gave, nullptr") {
  TensorRTAllocator<alloy::AlignedMallocator> t;
  void* p = t.reallocate(nullptr, 64, 100);
  REQUIRE(p != nullptr);
  CHECK(alloy::is_aligned(p, 64));
  CHECK(t.live_blocks() == 1);
  int foreign = 0;
  CHECK(t.reallocate(&foreign, 0, 1) == nullptr);
  CHECK(t.deallocateAsync(p, nullptr));
}
