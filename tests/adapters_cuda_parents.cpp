// The adapters over the CUDA parents, every host-side path: CudaMrResource (both CCCL spellings, ordered and
// unordered, device and managed), TensorRTAllocator over a stream-ordered pool (allocateAsync, reallocate's copy,
// deallocateAsync), PyTorchAllocator, CallbackTable over a device Region, AnyAllocator's copy, and their failure
// paths (out of memory, a failing copy) with nothing leaked. The kernels of tests/cuda/adapters_gpu.cu stay there.
// Built over the real runtime (label gpu: it needs a device) and over the CPU stand-in.
// needs: cuda device
#if __has_include(<NvInferRuntime.h>)
#include <NvInferRuntime.h>
#else
#include "support/tensorrt_decl/NvInferRuntime.h"
#endif

#include <alloy/adapters/any_allocator.hpp>
#include <alloy/adapters/callback_table.hpp>
#include <alloy/adapters/cuda_mr_resource.hpp>
#include <alloy/adapters/pytorch_allocator.hpp>
#include <alloy/adapters/tensorrt_allocator.hpp>
#include <alloy/allocator_list.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/cuda_mallocator.hpp>
#include <alloy/region.hpp>
#include <alloy/ref.hpp>
#include <alloy/stream_ordered.hpp>

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
std::vector<unsigned> iota(std::size_t n) {
  std::vector<unsigned> v(n);
  std::iota(v.begin(), v.end(), 0u);
  return v;
}
void upload(void* dev, const std::vector<unsigned>& v) {
  REQUIRE(cudaMemcpy(dev, v.data(), v.size() * sizeof(unsigned), cudaMemcpyDefault) == cudaSuccess);
}
std::vector<unsigned> download(const void* dev, std::size_t n) {
  std::vector<unsigned> v(n);
  REQUIRE(cudaMemcpy(v.data(), dev, n * sizeof(unsigned), cudaMemcpyDefault) == cudaSuccess);
  return v;
}
#ifdef ALLOY_CUDA_STANDIN
namespace sd = alloy::standin;
std::size_t device_live() {
  const sd::usage u = sd::live_bytes();
  return u.device + u.pinned + u.managed + u.pool;
}
#endif
}  // namespace

TEST_CASE("CudaMrResource over CudaMallocator, CudaAsyncMallocator and CudaManagedMallocator") {
  Stream s;
  alloy::CudaMrResource<alloy::CudaMallocator> dev;
  void* p = dev.allocate(1 << 20, 256);
  upload(p, iota(1 << 18));
  CHECK(download(p, 1 << 18) == iota(1 << 18));
  dev.deallocate(p, 1 << 20, 256);
  CHECK_THROWS_AS((void)dev.allocate(std::size_t{1} << 50, 256), alloy::bad_alloc);

  alloy::CudaAsyncMallocator pool;
  alloy::CudaMrResource<alloy::CudaAsyncMallocator> async(pool);
  void* q = async.allocate_async(4096, 256, cuda::stream_ref{s.s});
  async.deallocate_async(q, 4096, 256, cuda::stream_ref{s.s});
  void* r = async.allocate(cuda::stream_ref{s.s}, 4096, 256);  // 3.1+ spelling, the same stream: reused
  CHECK(r == q);
  async.deallocate(cuda::stream_ref{s.s}, r, 4096, 256);
  void* t = async.allocate_sync(4096, 256);  // unordered: the default stream
  async.deallocate_sync(t, 4096, 256);
  REQUIRE(cudaStreamSynchronize(s.s) == cudaSuccess);

  alloy::CudaMrResource<alloy::CudaManagedMallocator> managed;
  auto* m = static_cast<unsigned*>(managed.allocate(4096, 256));
  m[1023] = 1023;  // managed: the host writes it directly
  CHECK(download(m, 1024)[1023] == 1023u);
  managed.deallocate(m, 4096, 256);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("TensorRTAllocator over CudaAsyncMallocator: allocateAsync, reallocate moves the bytes, deallocateAsync") {
  Stream s;
  alloy::TensorRTAllocator<alloy::CudaAsyncMallocator> trt;
  nvinfer1::IGpuAsyncAllocator& a = trt;
  void* p = a.allocateAsync(1 << 16, 256, 0, s.s);
  REQUIRE(p != nullptr);
  upload(p, iota(1 << 14));
  void* q = trt.reallocate(p, 256, 1 << 18);  // moved by the stack's copy, waited for
  REQUIRE(q != nullptr);
  CHECK(download(q, 1 << 14) == iota(1 << 14));
  CHECK(a.deallocateAsync(q, s.s));
  REQUIRE(cudaStreamSynchronize(s.s) == cudaSuccess);
  CHECK(trt.live_blocks() == 0);
}

TEST_CASE("PyTorchAllocator, CallbackTable and AnyAllocator over CUDA parents") {
  using Torch = alloy::PyTorchAllocator<alloy::CudaMallocator, 4>;
  void* p = Torch::alloc(4096, 0, nullptr);
  REQUIRE(p != nullptr);
  upload(p, iota(1024));
  CHECK(download(p, 1024) == iota(1024));
  CHECK(Torch::live_bytes(0) == 4096);
  Torch::free(p, 4096, 0, nullptr);
  CHECK(Torch::live_bytes(0) == 0);

  alloy_callback_table* t = alloy::make_callback_table<alloy::Region<alloy::CudaMallocator>>(std::size_t{1} << 20);
  CHECK(t->memory_space == ALLOY_MEMORY_DEVICE);
  void* b = t->alloc(t->obj, 4096);
  REQUIRE(b != nullptr);
  upload(t->addr_of_block(b), iota(1024));
  CHECK(download(t->addr_of_block(b), 1024) == iota(1024));
  t->free(t->obj, b);
  t->destroy(t->obj);

  alloy::AnyAllocator any(alloy::CudaMallocator{});
  CHECK(any.memory_space() == alloy::MemorySpace::device);
  alloy::Block d = any.allocate(4096);
  REQUIRE(d);
  const auto src = iota(1024);
  CHECK(any.copy(d.ptr, src.data(), 4096));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(download(d.ptr, 1024) == src);
  CHECK(any.deallocate(d));
}

namespace {
using Slab = alloy::BitmappedBlock<256, 256, alloy::CudaMallocator>;
struct Slabs {
  Slab operator()(std::size_t n) const { return Slab(std::max<std::size_t>(n, std::size_t{8} << 20)); }
};
using Pool = alloy::SharedStreamOrdered<alloy::AllocatorList<Slabs>>;
std::uint64_t calls() {  // CUDA calls so far: the stand-in counts them; over the real runtime the checks are vacuous
#ifdef ALLOY_CUDA_STANDIN
  return alloy::standin::call_count();
#else
  return 0;
#endif
}
}  // namespace

TEST_CASE("the adapters take a stream-ordered pool and pass it their stream: same-stream reuse, no CUDA call") {
  Stream s;
  Pool pool;
  alloy::CudaMrResource<Pool> mr(pool);
  static_assert(cuda::mr::async_resource<alloy::CudaMrResource<Pool>> ||
                cuda::mr::resource<alloy::CudaMrResource<Pool>>);
  void* p = mr.allocate_async(4096, 256, cuda::stream_ref{s.s});
  mr.deallocate_async(p, 4096, 256, cuda::stream_ref{s.s});
  auto c0 = calls();
  void* q = mr.allocate(cuda::stream_ref{s.s}, 4000, 256);
  CHECK(q == p);
  CHECK(calls() == c0);
  mr.deallocate(cuda::stream_ref{s.s}, q, 4000, 256);

  alloy::TensorRTAllocator<alloy::Ref<Pool>> trt(pool);  // shares the pool
  void* t = trt.allocateAsync(8192, 256, 0, s.s);
  CHECK(trt.deallocateAsync(t, s.s));
  c0 = calls();
  CHECK(trt.allocateAsync(8000, 256, 0, s.s) == t);
  CHECK(calls() == c0);
  CHECK(trt.deallocateAsync(t, s.s));

  // PyTorch's stacks live until exit, past the streams they saw: a pool that records its event at each free never
  // needs a stream again (FreeEvents::at_each_free); its allocations still make no CUDA call.
  using Torch = alloy::PyTorchAllocator<
      alloy::SharedStreamOrdered<alloy::AllocatorList<Slabs>, alloy::FreeEvents::at_each_free>, 2>;
  void* x = Torch::alloc(1 << 16, 0, s.s);
  REQUIRE(x != nullptr);
  Torch::free(x, 1 << 16, 0, s.s);
  CHECK(Torch::alloc(1 << 16, 0, s.s) == x);  // (this mode asks the stream's id: cudaStreamGetId, one call)
  Torch::free(x, 1 << 16, 0, s.s);

  alloy_callback_table* table = alloy::make_callback_table<Pool>();  // the default stream: no stream in the table
  void* h = table->alloc(table->obj, 1000);
  REQUIRE(h != nullptr);
  void* addr = table->addr_of_block(h);
  table->free(table->obj, h);
  void* h2 = table->alloc(table->obj, 1000);
  CHECK(table->addr_of_block(h2) == addr);
  table->free(table->obj, h2);
  table->destroy(table->obj);
  REQUIRE(cudaStreamSynchronize(s.s) == cudaSuccess);
}

#ifdef ALLOY_CUDA_STANDIN
TEST_CASE("adapters over CUDA parents on the stand-in: out of memory and a failing copy, nothing leaked") {
  Stream s;
  const std::size_t before = device_live();
  sd::faults oom;
  oom.fail_alloc_at = 1;
  {
    alloy::CudaAsyncMallocator pool;
    alloy::CudaMrResource<alloy::CudaAsyncMallocator> mr(pool);
    sd::set_faults(oom);
    CHECK_THROWS_AS((void)mr.allocate_async(4096, 256, cuda::stream_ref{s.s}), alloy::bad_alloc);

    alloy::TensorRTAllocator<alloy::CudaAsyncMallocator> trt;
    sd::set_faults(oom);
    CHECK(trt.allocateAsync(4096, 256, 0, s.s) == nullptr);
    sd::set_faults({});
    void* p = trt.allocateAsync(4096, 256, 0, s.s);
    REQUIRE(p != nullptr);
    sd::set_faults(oom);
    CHECK(trt.reallocate(p, 256, 1 << 16) == nullptr);  // no room: the old block stays valid
    sd::faults copy;
    copy.fail_copy_at = 1;
    sd::set_faults(copy);
    CHECK(trt.reallocate(p, 256, 1 << 16) == nullptr);  // the copy failed: the new block went back
    (void)cudaGetLastError();
    sd::set_faults({});
    CHECK(trt.live_blocks() == 1);
    CHECK(trt.deallocateAsync(p, s.s));
    REQUIRE(cudaStreamSynchronize(s.s) == cudaSuccess);

    using Torch = alloy::PyTorchAllocator<alloy::CudaMallocator, 4>;
    sd::set_faults(oom);
    CHECK(Torch::alloc(4096, 0, nullptr) == nullptr);
    CHECK(Torch::live_bytes(0) == 0);

    alloy_callback_table* t = alloy::make_callback_table<alloy::CudaMallocator>();
    sd::set_faults(oom);
    CHECK(t->alloc(t->obj, 4096) == nullptr);
    t->destroy(t->obj);

    alloy::AnyAllocator any(alloy::CudaMallocator{});
    sd::set_faults(oom);
    CHECK(!any.allocate(64));
    sd::set_faults({});
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(pool.trim_to(0));
  }
  CHECK(device_live() == before);
  const auto v = sd::take_violations();
  for (const auto& x : v) MESSAGE(sd::rule_name(x.what) << ": " << x.text);
  CHECK(v.empty());
}
#endif
