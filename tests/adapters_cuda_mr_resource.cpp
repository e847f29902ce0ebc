// CudaMrResource compiled by the host compiler against the installed CCCL (cuda::mr concepts, resource_ref), run
// over host stacks and NoAccessAllocator stacks: no GPU needed. tests/cuda/adapters_cuda_mr_resource.cu runs it over
// CUDA parents on a device.
#include <doctest/doctest.h>

#if defined(ALLOY_TEST_HAVE_CCCL) && __has_include(<cuda/memory_resource>)
#include <alloy/adapters/cuda_mr_resource.hpp>
#include <alloy/aligned_mallocator.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/null_allocator.hpp>
#include <alloy/ref.hpp>
#include <alloy/region.hpp>

#include <cstdint>
#include <cstring>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_allocators.hpp"

using alloy::CudaMrResource;
using DevMr = CudaMrResource<alloy::NoAccessAllocator>;
using HostMr = CudaMrResource<alloy::AlignedMallocator>;
using RegionMr = CudaMrResource<alloy::Region<alloy::NoAccessAllocator>>;
namespace mr = cuda::mr;

#if CCCL_VERSION >= 3001000
static_assert(mr::synchronous_resource<DevMr> && mr::resource<DevMr>);
static_assert(mr::resource_with<DevMr, mr::device_accessible>);
static_assert(!mr::resource_with<DevMr, mr::host_accessible>);
static_assert(mr::resource_with<HostMr, mr::host_accessible>);
static_assert(!mr::resource_with<HostMr, mr::device_accessible>);
#else
static_assert(mr::resource<DevMr> && mr::async_resource<DevMr>);
static_assert(mr::resource<RegionMr> && mr::async_resource<RegionMr>);
static_assert(mr::async_resource_with<DevMr, mr::device_accessible>);
static_assert(!mr::resource_with<DevMr, mr::host_accessible>);
static_assert(mr::async_resource_with<HostMr, mr::host_accessible>);
static_assert(!mr::resource_with<HostMr, mr::device_accessible>);
#endif
// host_pinned and managed memory is reachable from both sides: both properties.
using PinnedMr = CudaMrResource<alloy::test::EveryPrimitive<16, alloy::MemorySpace::host_pinned>>;
using ManagedMr = CudaMrResource<alloy::test::EveryPrimitive<16, alloy::MemorySpace::managed>>;
static_assert(cuda::has_property<PinnedMr, mr::device_accessible> && cuda::has_property<PinnedMr, mr::host_accessible>);
static_assert(cuda::has_property<ManagedMr, mr::device_accessible> && cuda::has_property<ManagedMr, mr::host_accessible>);
static_assert(std::is_empty_v<DevMr>);
static_assert(sizeof(RegionMr) == sizeof(void*));

TEST_CASE("CudaMrResource: both spellings over a device-like stack") {
  DevMr r;
  cuda::stream_ref s{reinterpret_cast<cudaStream_t>(std::uintptr_t{0x9000})};
  void* a = r.allocate(1000, 256);         // 3.0
  void* b = r.allocate_sync(1000, 8192);   // 3.1+ (over-aligned: aligned_allocate)
  void* c = r.allocate_async(10, 16, s);   // 3.0
  void* d = r.allocate(s, 10, 16);         // 3.1+
  CHECK(alloy::is_aligned(a, 256));
  CHECK(alloy::is_aligned(b, 8192));
  CHECK(alloy::NoAccessAllocator::live_blocks() == 4);
  r.deallocate(a, 1000, 256);
  r.deallocate_sync(b, 1000, 8192);
  r.deallocate_async(c, 10, 16, s);
  r.deallocate(s, d, 10, 16);
  CHECK(alloy::NoAccessAllocator::live_blocks() == 0);
  CHECK(r.allocate(0, 16) == nullptr);
  CHECK_THROWS_AS((void)r.allocate(10, 3), alloy::bad_alloc);
  CHECK(r == DevMr());
}

TEST_CASE("CudaMrResource: through cuda::mr::resource_ref") {
  DevMr dev;
#if CCCL_VERSION >= 3001000
  mr::resource_ref<mr::device_accessible> ref{dev};
  void* p = ref.allocate_sync(4096, 256);
  ref.deallocate_sync(p, 4096, 256);
#else
  mr::async_resource_ref<mr::device_accessible> ref{dev};
  void* p = ref.allocate(4096, 256);
  CHECK(alloy::NoAccessAllocator::instance.owns({p, 4096}) == alloy::Ternary::yes);
  ref.deallocate(p, 4096, 256);
  void* q = ref.allocate_async(100, 16, cuda::stream_ref{});
  ref.deallocate_async(q, 100, 16, cuda::stream_ref{});
  HostMr host;
  mr::resource_ref<mr::host_accessible> href{host};
  auto* h = static_cast<char*>(href.allocate(6, 64));
  std::memcpy(h, "hello", 6);
  CHECK(std::strcmp(h, "hello") == 0);
  href.deallocate(h, 6, 64);
#endif
  CHECK(alloy::NoAccessAllocator::live_blocks() == 0);
}

TEST_CASE("CudaMrResource: a device-like BitmappedBlock pool behind cuda::mr") {
  using Pool = alloy::BitmappedBlock<256, 256, alloy::NoAccessAllocator>;  // bitmap on the host
  Pool pool(std::size_t{1} << 20);
  CudaMrResource<Pool> r(pool);
  static_assert(cuda::has_property<CudaMrResource<Pool>, mr::device_accessible>);
  void* ps[16];
  for (int i = 0; i < 16; ++i) ps[i] = r.allocate_sync(1000 * (i + 1), 256);
  CHECK(pool.empty() == alloy::Ternary::no);
  for (int i = 0; i < 16; ++i) r.deallocate_sync(ps[i], 1000 * (i + 1), 256);
  CHECK(pool.empty() == alloy::Ternary::yes);
}

TEST_CASE("CudaMrResource: a stateful stack is shared by pointer; failures throw") {
  alloy::Region<alloy::NoAccessAllocator> region(std::size_t{1} << 16);
  RegionMr a(region), b(region);
  CHECK(a == b);
  alloy::Region<alloy::NoAccessAllocator> other(std::size_t{1} << 12);
  CHECK(a != RegionMr(other));
  void* p = a.allocate(100, 16);
  CHECK(region.owns({p, 100}) == alloy::Ternary::yes);
  CHECK_THROWS_AS((void)a.allocate(std::size_t{1} << 20, 16), std::bad_alloc);  // the region is finite
  b.deallocate(p, 100, 16);                                                      // the same stack
  CudaMrResource<alloy::Mallocator> plain;
  CHECK_THROWS_AS((void)plain.allocate(10, 4096), alloy::bad_alloc);  // no aligned_allocate
  void* m = plain.allocate(10, alloy::Mallocator::alignment);         // the stack's own alignment: plain allocate
  CHECK(m != nullptr);
  plain.deallocate(m, 10, alloy::Mallocator::alignment);
  CudaMrResource<alloy::NullAllocator> none;
  CHECK_THROWS_AS((void)none.allocate(1, 1), std::bad_alloc);
  using Heap = alloy::test::CheckedHeap<16, alloy::test::caps::aligned>;
  Heap heap;
  CudaMrResource<Heap> h(heap);
  void* x = h.allocate(77, 64);
  h.deallocate(x, 77, 64);  // CheckedHeap verifies the exact block
  CHECK(heap.live_blocks() == 0);
}

// A stateful stream-ordered stack that logs which primitive served each call, and on which stream. Its alignment is
// 16 and its plain allocate gives addresses 16 past a page: an over-aligned request that reaches it shows.
struct StreamLog {
  static constexpr std::size_t alignment = 16;
  static constexpr alloy::MemorySpace memory_space = alloy::MemorySpace::device;
  alloy::NoAccessAllocator parent;
  std::vector<std::string> calls;

  // "allocate 10" for a synchronous call, "allocate@9000 10" for one ordered on stream 0x9000 ("@0": the default).
  void log(const char* op, bool ordered, const CUstream_st* s, std::size_t n) {
    std::ostringstream o;
    o << op;
    if (ordered) o << "@" << std::hex << reinterpret_cast<std::uintptr_t>(s) << std::dec;
    o << " " << n;
    calls.push_back(o.str());
  }
  alloy::Block plain(std::size_t n) noexcept {
    alloy::Block b = parent.allocate(n + 16);
    return b ? alloy::Block{static_cast<char*>(b.ptr) + 16, n} : alloy::Block{};
  }
  bool give_back(alloy::Block b) noexcept {
    if (alloy::is_aligned(b.ptr, alloy::NoAccessAllocator::alignment)) return parent.deallocate(b);  // aligned_allocate's
    return parent.deallocate({static_cast<char*>(b.ptr) - 16, b.size + 16});
  }
  alloy::Block allocate(std::size_t n) noexcept {
    log("allocate", false, nullptr, n);
    return plain(n);
  }
  alloy::Block aligned_allocate(std::size_t n, std::size_t a) noexcept {
    log("aligned_allocate", false, nullptr, n);
    return parent.aligned_allocate(n, a);
  }
  alloy::Block allocate(alloy::stream_view s, std::size_t n) noexcept {
    log("allocate", true, s.value(), n);
    return plain(n);
  }
  bool deallocate(alloy::Block b) noexcept {
    log("deallocate", false, nullptr, b.size);
    return give_back(b);
  }
  bool deallocate(alloy::stream_view s, alloy::Block b) noexcept {
    log("deallocate", true, s.value(), b.size);
    return give_back(b);
  }
};
static_assert(alloy::has_stream_ordered<StreamLog> && alloy::has_aligned_allocate<StreamLog>);

TEST_CASE("CudaMrResource: the stream reaches a stream-ordered stack on the ordered paths only") {
  StreamLog log;
  CudaMrResource<StreamLog> r(log);
  const cuda::stream_ref s{reinterpret_cast<cudaStream_t>(std::uintptr_t{0x9000})};
  void* a = r.allocate_async(10, 16, s);  // 3.0, ordered
  void* b = r.allocate(s, 20, 16);        // 3.1+, ordered
  void* c = r.allocate(30, 16);           // 3.0, synchronous
  void* d = r.allocate_sync(40, 8);       // 3.1+, synchronous
  r.deallocate_async(a, 10, 16, s);
  r.deallocate(s, b, 20, 16);
  r.deallocate(c, 30, 16);
  r.deallocate_sync(d, 40, 8);
  CHECK(log.calls == std::vector<std::string>{"allocate@9000 10", "allocate@9000 20", "allocate 30", "allocate 40",
                                              "deallocate@9000 10", "deallocate@9000 20", "deallocate 30",
                                              "deallocate 40"});
  CHECK(alloy::NoAccessAllocator::live_blocks() == 0);
}

TEST_CASE("CudaMrResource: alignment above the stack's goes to aligned_allocate; null and 0 bytes reach nothing") {
  StreamLog log;
  CudaMrResource<StreamLog> r(log);
  void* e = r.allocate_sync(50, 4096);
  CHECK(alloy::is_aligned(e, 4096));
  void* f = r.allocate_sync(60, StreamLog::alignment);  // exactly the stack's alignment: plain allocate
  CHECK(alloy::is_aligned(f, StreamLog::alignment));
  r.deallocate_sync(e, 50, 4096);
  r.deallocate_sync(f, 60, StreamLog::alignment);
  CHECK(r.allocate_sync(0, 16) == nullptr);
  r.deallocate_sync(nullptr, 0, 16);  // what allocate gave for 0 bytes
  r.deallocate(cuda::stream_ref{}, nullptr, 0, 16);
  CHECK(log.calls ==
        std::vector<std::string>{"aligned_allocate 50", "allocate 60", "deallocate 50", "deallocate 60"});
  CHECK(alloy::NoAccessAllocator::live_blocks() == 0);
}
#else
#include <cstdlib>
TEST_CASE("CudaMrResource: CCCL not found") {
  MESSAGE("ALLOY_SKIP: <cuda/memory_resource> not on the include path");
  std::exit(77);
}
#endif
