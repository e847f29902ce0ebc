// device_buffer<A> over the CUDA parents and over pooled device stacks, with kernels writing through data().
// Without a device: prints ALLOY_SKIP and exits 77 (see skip.hpp). The host-side paths (errors, failures, pooled
// stacks without kernels) are in tests/device_buffer_cuda.cpp, which also runs over the CPU stand-in.
#include "skip.hpp"

#include <alloy/allocator_list.hpp>
#include <alloy/device_buffer.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/region.hpp>

#include <cuda/stream_ref>

#include <cstring>
#include <vector>

#include <doctest/doctest.h>

#include "support/cuda_stream.hpp"

using alloy::test::Stream;

// The layout holds under nvcc too: a stateless allocator takes no bytes, a stateful one is a pointer.
static_assert(sizeof(alloy::device_buffer<alloy::CudaMallocator>) == 4 * sizeof(void*));
static_assert(sizeof(alloy::device_buffer<alloy::CudaAsyncMallocator>) == 5 * sizeof(void*));

namespace {

__global__ void iota_kernel(unsigned* p, std::size_t n, unsigned base) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{blockDim.x} * gridDim.x)
    p[i] = base + static_cast<unsigned>(i);
}
__global__ void add_kernel(unsigned* p, std::size_t n, unsigned v) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{blockDim.x} * gridDim.x)
    p[i] += v;
}

template <class A>
std::vector<unsigned> to_host(const alloy::device_buffer<A>& b, alloy::stream_view s) {
  alloy::device_buffer<alloy::Mallocator> h(b, s);  // device -> host through the device allocator's copy
  REQUIRE(cudaStreamSynchronize(s.value()) == cudaSuccess);
  std::vector<unsigned> v(b.size() / sizeof(unsigned));
  std::memcpy(v.data(), h.data(), v.size() * sizeof(unsigned));
  return v;
}
template <class A>
void launch_iota(alloy::device_buffer<A>& b, alloy::stream_view s, unsigned base) {
  iota_kernel<<<64, 256, 0, s.value()>>>(static_cast<unsigned*>(b.data()), b.size() / sizeof(unsigned), base);
  REQUIRE(cudaGetLastError() == cudaSuccess);
}
bool is_iota(const std::vector<unsigned>& v, unsigned base, std::size_t n) {
  if (v.size() < n) return false;
  for (std::size_t i = 0; i < n; ++i)
    if (v[i] != base + i) return false;
  return true;
}

struct DeviceRegions {  // AllocatorList factory: 16 MiB device regions, bookkeeping on the host
  alloy::Region<alloy::CudaMallocator> operator()(std::size_t n) const {
    return alloy::Region<alloy::CudaMallocator>(n < (16u << 20) ? (16u << 20) : n);
  }
};

}  // namespace

TEST_CASE("device_buffer<CudaMallocator>: a kernel writes through data(), resize/reserve/shrink keep the bytes") {
  Stream s;
  constexpr std::size_t n = 1 << 20;
  alloy::device_buffer<alloy::CudaMallocator> b(n * sizeof(unsigned), s);
  CHECK(alloy::is_aligned(b.data(), 256));
  launch_iota(b, s, 7);
  CHECK(is_iota(to_host(b, s), 7, n));
  b.resize(2 * n * sizeof(unsigned), s);  // reallocates, copies on s
  CHECK(b.capacity() == 2 * n * sizeof(unsigned));
  CHECK(is_iota(to_host(b, s), 7, n));
  b.resize(n * sizeof(unsigned) / 2, s);
  b.shrink_to_fit(s);
  CHECK(b.capacity() == n * sizeof(unsigned) / 2);
  CHECK(is_iota(to_host(b, s), 7, n / 2));
  b.reserve(4 * n, s);
  CHECK(is_iota(to_host(b, s), 7, n / 2));
  alloy::device_buffer<alloy::CudaMallocator> c(b, s);  // device -> device deep copy
  add_kernel<<<64, 256, 0, s.s>>>(static_cast<unsigned*>(c.data()), c.size() / sizeof(unsigned), 1);
  CHECK(is_iota(to_host(c, s), 8, n / 2));
  CHECK(is_iota(to_host(b, s), 7, n / 2));  // the original is untouched
  alloy::device_buffer<alloy::CudaMallocator> m(std::move(c));
  CHECK(c.data() == nullptr);  // NOLINT(bugprone-use-after-move): a moved-from buffer is empty
  CHECK(is_iota(to_host(m, s), 8, n / 2));
  REQUIRE(cudaStreamSynchronize(s.s) == cudaSuccess);
}

TEST_CASE("device_buffer: from host memory, to pinned and managed, and back") {
  Stream s;
  std::vector<unsigned> src(10000);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned>(3 * i);
  alloy::device_buffer<alloy::CudaMallocator> dev(src.data(), src.size() * sizeof(unsigned), s);
  alloy::device_buffer<alloy::CudaHostMallocator> pinned(dev, s);
  alloy::device_buffer<alloy::CudaManagedMallocator> managed(pinned, s);
  add_kernel<<<16, 256, 0, s.s>>>(static_cast<unsigned*>(managed.data()), src.size(), 1);  // kernel on managed
  REQUIRE(cudaStreamSynchronize(s.s) == cudaSuccess);
  CHECK(std::memcmp(pinned.data(), src.data(), src.size() * sizeof(unsigned)) == 0);
  const unsigned* mp = static_cast<const unsigned*>(managed.data());
  CHECK(mp[0] == 1);
  CHECK(mp[9999] == 3 * 9999 + 1);
}

TEST_CASE("device_buffer: external device memory is never freed") {
  Stream s;
  void* raw = nullptr;
  REQUIRE(cudaMalloc(&raw, 4096) == cudaSuccess);
  {
    alloy::device_buffer<alloy::CudaMallocator> b(alloy::external_memory, raw, 4096, s);
    CHECK(b.is_external());
    launch_iota(b, s, 100);
    CHECK(is_iota(to_host(b, s), 100, 1024));
  }
  REQUIRE(cudaStreamSynchronize(s.s) == cudaSuccess);
  CHECK(cudaMemset(raw, 0, 4096) == cudaSuccess);  // still ours
  CHECK(cudaFree(raw) == cudaSuccess);
}

TEST_CASE("device_buffer over pooled device stacks: Region, AllocatorList of Regions") {
  Stream s;
  alloy::Region<alloy::CudaMallocator> region(64u << 20);
  {
    alloy::device_buffer<alloy::Region<alloy::CudaMallocator>> a(1 << 20, s, region), b(1 << 20, s, region);
    CHECK(static_cast<char*>(b.data()) - static_cast<char*>(a.data()) == (1 << 20));  // bump allocation
    launch_iota(a, s, 1);
    CHECK(is_iota(to_host(a, s), 1, (1 << 20) / 4));
  }
  alloy::AllocatorList<DeviceRegions> list;
  std::vector<alloy::device_buffer<alloy::AllocatorList<DeviceRegions>>> bufs;
  for (unsigned i = 0; i < 40; ++i) {
    bufs.emplace_back(std::size_t{1} << 20, s, list);
    launch_iota(bufs.back(), s, i * 1000);
  }
  CHECK(list.allocator_count() >= 3);  // 40 MiB over 16 MiB regions
  for (unsigned i = 0; i < 40; i += 7) CHECK(is_iota(to_host(bufs[i], s), i * 1000, (1 << 20) / 4));
  bufs.clear();
  REQUIRE(cudaStreamSynchronize(s.s) == cudaSuccess);
}

TEST_CASE("stream_view converts to and from cuda::stream_ref under nvcc") {
  Stream s;
  alloy::stream_view v = s;
  cuda::stream_ref r = v;
  CHECK(r.get() == s.s);
  alloy::stream_view back = r;
  CHECK(back == v);
  alloy::device_buffer<alloy::CudaMallocator> b(64, cuda::stream_ref(s.s));
  CHECK(b.stream().value() == s.s);
}
