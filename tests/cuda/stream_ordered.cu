// CudaAsyncMallocator with kernels: stream-ordered reuse without synchronization while a kernel uses the memory, and
// device_buffer over it (the buffer's stream is the one the pool sees). Without a device: ALLOY_SKIP, exit 77. The
// host-side checks (release thresholds, trim) are in tests/cuda_mallocator.cpp, which also runs over the stand-in.
#include "skip.hpp"

#include <alloy/device_buffer.hpp>
#include <alloy/mallocator.hpp>

#include <cstring>
#include <vector>

#include <doctest/doctest.h>

#include "support/cuda_stream.hpp"

using alloy::test::Stream;

namespace {
__global__ void fill_kernel(unsigned* p, std::size_t n, unsigned v) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{blockDim.x} * gridDim.x)
    p[i] = v;
}
}  // namespace

TEST_CASE("CudaAsyncMallocator: a block freed on a stream is reused by the next allocation on it, no sync") {
  Stream s;
  alloy::CudaAsyncMallocator pool;
  REQUIRE(pool.has_pool());
  CHECK(pool.release_threshold() == alloy::unbounded);
  alloy::Block a = pool.allocate(s.s, 1 << 20);
  REQUIRE(a);
  CHECK(alloy::is_aligned(a.ptr, 256));
  fill_kernel<<<32, 256, 0, s.s>>>(static_cast<unsigned*>(a.ptr), (1 << 20) / 4, 5);
  CHECK(pool.deallocate(s.s, a));
  alloy::Block b = pool.allocate(s.s, 1 << 20);  // ordered after the free on the same stream
  CHECK(b.ptr == a.ptr);
  CHECK(pool.deallocate(s.s, b));
  REQUIRE(cudaStreamSynchronize(s.s) == cudaSuccess);
  CHECK(pool.reserved_bytes() >= (1u << 20));  // unbounded threshold: kept across the sync
  CHECK(pool.trim_to(0));
  CHECK(pool.reserved_bytes() == 0);
}

TEST_CASE("device_buffer<CudaAsyncMallocator>: allocates and frees on the buffer's stream") {
  Stream s1, s2;
  alloy::CudaAsyncMallocator pool;
  void* first = nullptr;
  {
    alloy::device_buffer<alloy::CudaAsyncMallocator> b(1 << 20, s1.s, pool);
    first = b.data();
    fill_kernel<<<32, 256, 0, s1.s>>>(static_cast<unsigned*>(b.data()), (1 << 20) / 4, 9);
    alloy::device_buffer<alloy::Mallocator> h(b, s1.s);
    REQUIRE(cudaStreamSynchronize(s1.s) == cudaSuccess);
    CHECK(static_cast<const unsigned*>(h.data())[12345] == 9);
  }  // freed on s1
  {
    alloy::device_buffer<alloy::CudaAsyncMallocator> c(1 << 20, s1.s, pool);
    CHECK(c.data() == first);  // stream-ordered reuse on s1, no synchronization
    REQUIRE(cudaStreamSynchronize(s1.s) == cudaSuccess);  // the caller orders s2 after s1 (nothing synchronizes)
    c.resize(2 << 20, s2.s);   // now on s2: allocated, copied and the old block freed on s2
    CHECK(c.stream() == alloy::stream_view(s2.s));
  }
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(cudaGetLastError() == cudaSuccess);
}

// StreamOrdered<A> on a real device: a kernel on stream a still reads a block when the host frees it; stream b gets
// the same memory and a kernel there overwrites it. a's result must be intact: b waits for a's free (the crossing's
// event), or the pool synchronized a before giving the memory back to the slab (the merge path).
#include <alloy/bitmapped_block.hpp>
#include <alloy/stream_ordered.hpp>

namespace {
__global__ void slow_sum(const unsigned* p, std::size_t n, unsigned long long* out, long long spin) {
  const long long t0 = clock64();
  while (clock64() - t0 < spin) {
  }
  unsigned long long s = 0;
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) s += p[i];
  atomicAdd(out, s);
}
}  // namespace

TEST_CASE("StreamOrdered: a block a kernel still reads is not overwritten by another stream's kernel") {
  using Slab = alloy::BitmappedBlock<256, 256, alloy::CudaMallocator>;
  constexpr std::size_t n = (1 << 20) / sizeof(unsigned);
  std::vector<unsigned> host(n);
  unsigned long long expected = 0;
  for (std::size_t i = 0; i < n; ++i) expected += host[i] = static_cast<unsigned>(i);
  for (const bool merge : {false, true}) {
    CAPTURE(merge);
    Stream a, b;
    alloy::StreamOrdered<Slab> pool(std::size_t{1} << 20);  // room for one such block
    unsigned long long* out = nullptr;
    REQUIRE(cudaMalloc(reinterpret_cast<void**>(&out), sizeof *out) == cudaSuccess);
    REQUIRE(cudaMemsetAsync(out, 0, sizeof *out, a.s) == cudaSuccess);
    alloy::Block x = pool.allocate(a.s, n * sizeof(unsigned));
    REQUIRE(x);
    REQUIRE(cudaMemcpyAsync(x.ptr, host.data(), x.size, cudaMemcpyDefault, a.s) == cudaSuccess);
    slow_sum<<<1, 256, 0, a.s>>>(static_cast<const unsigned*>(x.ptr), n, out, 200'000'000);  // ~0.1 s
    CHECK(pool.deallocate(a.s, x));  // the kernel is still running
    // The same class crosses behind an event; half the size is another class: the pool synchronizes a first.
    alloy::Block y = pool.allocate(b.s, merge ? x.size / 2 : x.size);
    REQUIRE(y);
    CHECK(y.ptr == x.ptr);
    fill_kernel<<<64, 256, 0, b.s>>>(static_cast<unsigned*>(y.ptr), y.size / sizeof(unsigned), 0xFFFFFFFFu);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    unsigned long long got = 0;
    REQUIRE(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(got == expected);
    CHECK(pool.deallocate(b.s, y));
    CHECK(cudaFree(out) == cudaSuccess);
  }
}
