// device_buffer over the CUDA parents and over pooled device stacks, every host-side path: allocation on the buffer's
// stream, copies between all spaces, resize / reserve / shrink, deep copies, external memory, and the failure paths
// (out of memory, a failing copy) with nothing leaked. The kernels of tests/cuda/device_buffer.cu stay there; here
// the bytes are written and read through copies. Built over the real runtime (label gpu: it needs a device) and
// over the CPU stand-in (device_buffer_cuda_standin), where device memory is PROT_NONE to the host and the failure
// paths are injected.
// needs: cuda device
#include <alloy/allocator_list.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/cuda_mallocator.hpp>
#include <alloy/device_buffer.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/region.hpp>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include <doctest/doctest.h>

#include "support/cuda_stream.hpp"

using alloy::test::Stream;

#include "cuda/skip.hpp"
#ifdef ALLOY_CUDA_STANDIN
#include <cuda_standin.hpp>
#endif

namespace {

std::vector<unsigned> iota(std::size_t n, unsigned base) {
  std::vector<unsigned> v(n);
  std::iota(v.begin(), v.end(), base);
  return v;
}

// The buffer's first n words, downloaded through the allocator's copy and waited for.
template <class A>
std::vector<unsigned> to_host(const alloy::device_buffer<A>& b, alloy::stream_view s) {
  alloy::device_buffer<alloy::Mallocator> h(b, s);
  REQUIRE(cudaStreamSynchronize(s.value()) == cudaSuccess);
  std::vector<unsigned> v(b.size() / sizeof(unsigned));
  if (!v.empty()) std::memcpy(v.data(), h.data(), v.size() * sizeof(unsigned));
  return v;
}
bool starts_with(const std::vector<unsigned>& v, const std::vector<unsigned>& prefix) {
  return v.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), v.begin());
}

struct DeviceRegions {  // AllocatorList factory: 16 MiB device regions, bookkeeping on the host
  alloy::Region<alloy::CudaMallocator> operator()(std::size_t n) const {
    return alloy::Region<alloy::CudaMallocator>(std::max<std::size_t>(n, std::size_t{16} << 20));
  }
};
using Slab = alloy::BitmappedBlock<256, 256, alloy::CudaMallocator>;
struct Slabs {
  Slab operator()(std::size_t n) const { return Slab(std::max<std::size_t>(n, std::size_t{4} << 20)); }
};

#ifdef ALLOY_CUDA_STANDIN
namespace sd = alloy::standin;
std::size_t device_live() {
  const sd::usage u = sd::live_bytes();
  return u.device + u.pinned + u.managed + u.pool;
}
void expect_no_violation() {
  const auto v = sd::take_violations();
  for (const auto& x : v) MESSAGE(sd::rule_name(x.what) << ": " << x.text);
  CHECK(v.empty());
}
#endif

}  // namespace

TEST_CASE("device_buffer<CudaMallocator>: upload, resize / reserve / shrink keep the bytes, deep copy, move") {
  Stream s;
  constexpr std::size_t n = 1 << 16;
  const auto src = iota(n, 7);
  alloy::device_buffer<alloy::CudaMallocator> b(src.data(), n * sizeof(unsigned), s);
  CHECK(alloy::is_aligned(b.data(), 256));
  CHECK(to_host(b, s) == src);
  b.resize(2 * n * sizeof(unsigned), s);
  CHECK(b.capacity() == 2 * n * sizeof(unsigned));
  CHECK(starts_with(to_host(b, s), src));
  b.resize(n * sizeof(unsigned) / 2, s);
  b.shrink_to_fit(s);
  CHECK(b.capacity() == n * sizeof(unsigned) / 2);
  CHECK(starts_with(src, to_host(b, s)));
  b.reserve(4 * n, s);
  CHECK(b.size() == n * sizeof(unsigned) / 2);
  CHECK(starts_with(src, to_host(b, s)));
  alloy::device_buffer<alloy::CudaMallocator> c(b, s);  // device -> device
  CHECK(c.data() != b.data());
  CHECK(to_host(c, s) == to_host(b, s));
  alloy::device_buffer<alloy::CudaMallocator> m(std::move(c));
  CHECK(c.data() == nullptr);  // NOLINT(bugprone-use-after-move): a moved-from buffer is empty
  CHECK(to_host(m, s) == to_host(b, s));
  REQUIRE(cudaStreamSynchronize(s.s) == cudaSuccess);
}

TEST_CASE("device_buffer: host -> device -> pinned -> managed -> pool -> host") {
  Stream s;
  const auto src = iota(10000, 3);
  const std::size_t bytes = src.size() * sizeof(unsigned);
  alloy::device_buffer<alloy::CudaMallocator> dev(src.data(), bytes, s);
  alloy::device_buffer<alloy::CudaHostMallocator> pinned(dev, s);
  alloy::device_buffer<alloy::CudaManagedMallocator> managed(pinned, s);
  alloy::CudaAsyncMallocator async;
  alloy::device_buffer<alloy::CudaAsyncMallocator> pooled(managed, s, async);
  alloy::device_buffer<alloy::Mallocator> out(pooled, s);
  REQUIRE(cudaStreamSynchronize(s.s) == cudaSuccess);
  CHECK(std::memcmp(pinned.data(), src.data(), bytes) == 0);   // pinned: the host reads it
  CHECK(std::memcmp(managed.data(), src.data(), bytes) == 0);  // managed: so does it
  CHECK(std::memcmp(out.data(), src.data(), bytes) == 0);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("device_buffer<CudaMallocator>: the errors it throws leave no runtime error behind") {
  Stream s;
  CHECK_THROWS_AS(alloy::device_buffer<alloy::CudaMallocator>(nullptr, 4, s), alloy::logic_error);
  CHECK_THROWS_AS(alloy::device_buffer<alloy::CudaMallocator>(64, 512, s), alloy::bad_alloc);  // no aligned_allocate
  CHECK_THROWS_AS(alloy::device_buffer<alloy::CudaMallocator>(64, 100, s), alloy::invalid_argument);
  CHECK_THROWS_AS(alloy::device_buffer<alloy::CudaMallocator>(std::size_t{1} << 50, s), alloy::bad_alloc);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("device_buffer: external device memory is used and never freed") {
  Stream s;
  void* raw = nullptr;
  REQUIRE(cudaMalloc(&raw, 4096) == cudaSuccess);
  const auto src = iota(1024, 100);
  REQUIRE(cudaMemcpy(raw, src.data(), 4096, cudaMemcpyDefault) == cudaSuccess);
  {
    alloy::device_buffer<alloy::CudaMallocator> b(alloy::external_memory, raw, 4096, s);
    CHECK(b.is_external());
    CHECK(to_host(b, s) == src);
    b.resize(8192, s);  // grows into memory of its own; raw stays the caller's
    CHECK(!b.is_external());
    CHECK(starts_with(to_host(b, s), src));
  }
  REQUIRE(cudaStreamSynchronize(s.s) == cudaSuccess);
  CHECK(cudaMemset(raw, 0, 4096) == cudaSuccess);  // still ours
  CHECK(cudaFree(raw) == cudaSuccess);
}

TEST_CASE("device_buffer over pooled device stacks: Region, AllocatorList of Regions, of BitmappedBlock slabs") {
  Stream s;
  alloy::Region<alloy::CudaMallocator> region(std::size_t{8} << 20);
  {
    alloy::device_buffer<alloy::Region<alloy::CudaMallocator>> a(1 << 20, s, region), b(1 << 20, s, region);
    CHECK(static_cast<char*>(b.data()) - static_cast<char*>(a.data()) == (1 << 20));  // bump allocation
  }
  alloy::AllocatorList<DeviceRegions> regions;
  alloy::AllocatorList<Slabs> slabs;
  std::vector<alloy::device_buffer<alloy::AllocatorList<DeviceRegions>>> rb;
  std::vector<alloy::device_buffer<alloy::AllocatorList<Slabs>>> sb;
  for (unsigned i = 0; i < 40; ++i) {
    const auto v = iota(1 << 16, i * 1000);  // 256 KiB
    rb.emplace_back(v.data(), v.size() * sizeof(unsigned), s, regions);
    sb.emplace_back(v.data(), v.size() * sizeof(unsigned), s, slabs);
  }
  CHECK(regions.allocator_count() == 1);  // 10 MiB in one 16 MiB region
  CHECK(slabs.allocator_count() >= 3);    // 10 MiB over 4 MiB slabs
  for (unsigned i = 0; i < 40; i += 7) {
    CHECK(to_host(rb[i], s) == iota(1 << 16, i * 1000));
    CHECK(to_host(sb[i], s) == iota(1 << 16, i * 1000));
  }
  rb.clear();
  sb.clear();
  REQUIRE(cudaStreamSynchronize(s.s) == cudaSuccess);
}

TEST_CASE("device_buffer<CudaAsyncMallocator>: allocates and frees on the buffer's stream") {
  Stream s1, s2;
  alloy::CudaAsyncMallocator pool;
  void* first = nullptr;
  {
    alloy::device_buffer<alloy::CudaAsyncMallocator> b(1 << 20, s1, pool);
    first = b.data();
  }  // freed on s1
  {
    alloy::device_buffer<alloy::CudaAsyncMallocator> c(1 << 20, s1, pool);
    CHECK(c.data() == first);  // stream-ordered reuse on s1, no synchronization
    REQUIRE(cudaStreamSynchronize(s1.s) == cudaSuccess);  // the caller orders s2 after s1
    c.resize(2 << 20, s2);  // now on s2: allocated, copied and the old block freed on s2
    CHECK(c.stream() == alloy::stream_view(s2.s));
  }
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(cudaGetLastError() == cudaSuccess);
}

#ifdef ALLOY_CUDA_STANDIN
TEST_CASE("device_buffer over the stand-in: out of memory in each member throws bad_alloc, leaks nothing") {
  Stream s;
  const auto src = iota(4096, 1);
  const std::size_t bytes = src.size() * sizeof(unsigned);
  const std::size_t before = device_live();
  alloy::device_buffer<alloy::CudaMallocator> b(src.data(), bytes, s);
  const void* data = b.data();
  sd::faults f;
  f.fail_alloc_at = 1;
  sd::set_faults(f);
  CHECK_THROWS_AS(b.resize(2 * bytes, s), alloy::bad_alloc);
  CHECK(b.data() == data);  // unchanged
  CHECK(b.size() == bytes);
  sd::set_faults(f);
  CHECK_THROWS_AS(b.reserve(4 * bytes, s), alloy::bad_alloc);
  sd::set_faults(f);
  CHECK_THROWS_AS((alloy::device_buffer<alloy::CudaMallocator>(b, s)), alloy::bad_alloc);
  sd::set_faults(f);
  CHECK_THROWS_AS((alloy::device_buffer<alloy::CudaHostMallocator>(b, s)), alloy::bad_alloc);
  sd::set_faults(f);
  alloy::CudaAsyncMallocator async;
  sd::set_faults(f);
  CHECK_THROWS_AS((alloy::device_buffer<alloy::CudaAsyncMallocator>(bytes, s, async)), alloy::bad_alloc);
  f.fail_alloc_at = 0;
  f.byte_budget = bytes + bytes / 2;  // room for b and half of another
  sd::set_faults(f);
  CHECK_THROWS_AS((alloy::device_buffer<alloy::CudaManagedMallocator>(b, s)), alloy::bad_alloc);
  sd::set_faults({});
  CHECK(to_host(b, s) == src);
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(device_live() == before + bytes);
  expect_no_violation();
}

TEST_CASE("device_buffer over the stand-in: a failing copy throws cuda_error with the code, frees the new block") {
  Stream s;
  const auto src = iota(4096, 1);
  const std::size_t bytes = src.size() * sizeof(unsigned);
  alloy::device_buffer<alloy::CudaMallocator> b(src.data(), bytes, s);
  const std::size_t before = device_live();
  sd::faults f;
  f.fail_copy_at = 1;
  for (int member = 0; member < 4; ++member) {
    sd::set_faults(f);
    try {
      switch (member) {
        case 0: b.resize(2 * bytes, s); break;
        case 1: b.reserve(4 * bytes, s); break;
        case 2: alloy::device_buffer<alloy::CudaMallocator>(b, s); break;
        case 3: alloy::device_buffer<alloy::CudaMallocator>(src.data(), bytes, s); break;
      }
      FAIL("the copy was made to fail");
    } catch (const alloy::cuda_error& e) {
      CHECK(e.code() == cudaErrorInvalidValue);
      CHECK(std::strstr(e.what(), "cudaErrorInvalidValue") != nullptr);
    }
    CHECK(device_live() == before);  // the new block went back
    CHECK(b.size() == bytes);
  }
  sd::set_faults({});
  (void)cudaGetLastError();
  CHECK(to_host(b, s) == src);
  expect_no_violation();
}

TEST_CASE("device_buffer over the stand-in: pooled stacks give memory back, no device byte is touched") {
  Stream s;
  const std::size_t before = device_live();
  {
    alloy::AllocatorList<Slabs> slabs;
    for (int round = 0; round < 3; ++round) {
      std::vector<alloy::device_buffer<alloy::AllocatorList<Slabs>>> bufs;
      for (std::size_t i = 1; i <= 64; ++i) bufs.emplace_back(i * 4096, s, slabs);
      for (auto& b : bufs) b.resize(b.size() + 1000, s);
    }
    CHECK(device_live() > before);  // the list keeps a slab
  }
  CHECK(device_live() == before);
  expect_no_violation();
}
#endif
