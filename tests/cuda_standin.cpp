// The CPU stand-in for the CUDA runtime checks what it promises (tests/support/cuda_standin/cuda_standin.hpp): one
// test per checker rule shows it catching the mistake, and the ordering model (streams, events, the legacy default
// stream, host synchronization), the pools and the injected faults behave as the runtime does.
// needs: cuda-standin
#include <alloy/bitmapped_block.hpp>
#include <alloy/cuda_mallocator.hpp>

#include <cuda_standin.hpp>

#include <csetjmp>
#include <csignal>
#include <cstring>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "support/child_process.hpp"
#include "support/cuda_stream.hpp"

using alloy::test::Stream;

namespace sd = alloy::standin;

namespace {

// Takes the violations recorded so far and checks there is exactly one, of rule r.
void expect_one(sd::rule r) {
  const auto v = sd::take_violations();
  REQUIRE(v.size() == 1);
  CHECK(v[0].what == r);
  CHECK(!v[0].text.empty());
}
void expect_none() {
  const auto v = sd::take_violations();
  for (const auto& x : v) MESSAGE(sd::rule_name(x.what) << ": " << x.text);
  CHECK(v.empty());
}

struct Event {
  cudaEvent_t e = nullptr;
  Event() { REQUIRE(cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess); }
  ~Event() { cudaEventDestroy(e); }
};

// Runs f in a child process; returns its exit status, or 128 + the signal that killed it.
template <class F>
int in_child(F f) {  // the child runs its atexit handlers: the stand-in's leak report is one
  return alloy::test::run_in_child(f, alloy::test::ChildExit::run_atexit).code();
}

// The exit status of a child that touched memory it may not.
bool crashed(int rc) { return rc == 128 + SIGSEGV || rc == 128 + SIGBUS; }

}  // namespace

TEST_CASE("stand-in: one device, memory of every kind, no violation for correct use") {
  int n = 0;
  REQUIRE(cudaGetDeviceCount(&n) == cudaSuccess);
  CHECK(n == 1);
  CHECK(alloy::cuda_available());
  void *d = nullptr, *h = nullptr, *m = nullptr;
  REQUIRE(cudaMalloc(&d, 1000) == cudaSuccess);
  REQUIRE(cudaMallocHost(&h, 1000) == cudaSuccess);
  REQUIRE(cudaMallocManaged(&m, 1000, cudaMemAttachGlobal) == cudaSuccess);
  CHECK(alloy::is_aligned(d, 256));
  CHECK(sd::live_bytes().device == 1000);
  CHECK(sd::live_bytes().pinned == 1000);
  CHECK(sd::live_bytes().managed == 1000);
  std::memset(h, 7, 1000);  // pinned and managed memory: the host may touch them
  std::memset(m, 9, 1000);
  REQUIRE(cudaMemcpy(d, h, 1000, cudaMemcpyDefault) == cudaSuccess);
  REQUIRE(cudaMemcpy(m, d, 500, cudaMemcpyDefault) == cudaSuccess);
  CHECK(static_cast<unsigned char*>(m)[499] == 7);
  CHECK(static_cast<unsigned char*>(m)[500] == 9);
  CHECK(cudaFree(d) == cudaSuccess);
  CHECK(cudaFreeHost(h) == cudaSuccess);
  CHECK(cudaFree(m) == cudaSuccess);
  CHECK(sd::live_bytes().device == 0);
  CHECK(cudaMalloc(&d, 0) == cudaSuccess);  // 0 bytes: success and a null pointer, as the runtime
  CHECK(d == nullptr);
  CHECK(cudaFree(nullptr) == cudaSuccess);
  expect_none();
}

TEST_CASE("stand-in rule: a host touch of device memory crashes") {
  void* d = nullptr;
  REQUIRE(cudaMalloc(&d, 4096) == cudaSuccess);
  CHECK(crashed(in_child([d] { static_cast<volatile char*>(d)[0] = 1; })));
  CHECK(crashed(in_child([d] { (void)static_cast<volatile char*>(d)[100]; })));
  // A copy opens it for its own duration only.
  char buf[16] = "device";
  REQUIRE(cudaMemcpy(d, buf, sizeof buf, cudaMemcpyDefault) == cudaSuccess);
  CHECK(crashed(in_child([d] { (void)static_cast<volatile char*>(d)[0]; })));
  // Stream-ordered pool memory too.
  void* p = nullptr;
  REQUIRE(cudaMallocAsync(&p, 4096, nullptr) == cudaSuccess);
  CHECK(crashed(in_child([p] { static_cast<volatile char*>(p)[0] = 1; })));
  CHECK(cudaFreeAsync(p, nullptr) == cudaSuccess);
  CHECK(cudaFree(d) == cudaSuccess);
  // Freed pinned memory is closed as well: a use after free crashes.
  void* h = nullptr;
  REQUIRE(cudaMallocHost(&h, 64) == cudaSuccess);
  CHECK(cudaFreeHost(h) == cudaSuccess);
  CHECK(crashed(in_child([h] { (void)static_cast<volatile char*>(h)[0]; })));
  expect_none();
}

TEST_CASE("stand-in rule: leaks are reported at exit and fail the program") {
  CHECK(in_child([] {
          void* d = nullptr;
          (void)cudaMalloc(&d, 100);
        }) == 97);
  CHECK(in_child([] {
          void* d = nullptr;
          (void)cudaMallocManaged(&d, 100, cudaMemAttachGlobal);
          (void)cudaFree(d);
        }) == 0);
  // A violation nobody took fails the program as well.
  CHECK(in_child([] { (void)cudaFree(reinterpret_cast<void*>(0x1000)); }) == 97);
  // check_leaks lists them now.
  void* d = nullptr;
  REQUIRE(cudaMalloc(&d, 100) == cudaSuccess);
  const auto leaks = sd::check_leaks();
  REQUIRE(leaks.size() == 1);
  CHECK(leaks[0].what == sd::rule::leak);
  CHECK(leaks[0].text.find("100 bytes of device memory") != std::string::npos);
  CHECK(cudaFree(d) == cudaSuccess);
  CHECK(sd::check_leaks().empty());
}

TEST_CASE("stand-in rule: double free, foreign pointer, interior pointer") {
  void* d = nullptr;
  REQUIRE(cudaMalloc(&d, 1000) == cudaSuccess);
  CHECK(cudaFree(static_cast<char*>(d) + 256) == cudaErrorInvalidValue);
  expect_one(sd::rule::foreign_free);
  CHECK(cudaFree(d) == cudaSuccess);
  CHECK(cudaFree(d) == cudaErrorInvalidValue);
  expect_one(sd::rule::double_free);
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);  // the runtime's last error, as for any failed call
  CHECK(cudaGetLastError() == cudaSuccess);
  int local = 0;
  CHECK(cudaFree(&local) == cudaErrorInvalidValue);
  expect_one(sd::rule::foreign_free);
  CHECK(cudaFreeHost(&local) == cudaErrorInvalidValue);
  expect_one(sd::rule::foreign_free);
  void* p = nullptr;
  REQUIRE(cudaMallocAsync(&p, 512, nullptr) == cudaSuccess);
  CHECK(cudaFreeAsync(p, nullptr) == cudaSuccess);
  CHECK(cudaFreeAsync(p, nullptr) == cudaErrorInvalidValue);
  expect_one(sd::rule::double_free);
  (void)cudaGetLastError();
}

TEST_CASE("stand-in rule: the wrong free call") {
  void *d = nullptr, *p = nullptr, *h = nullptr;
  REQUIRE(cudaMalloc(&d, 256) == cudaSuccess);
  REQUIRE(cudaMallocAsync(&p, 256, nullptr) == cudaSuccess);
  REQUIRE(cudaMallocHost(&h, 256) == cudaSuccess);
  CHECK(cudaFree(p) == cudaErrorInvalidValue);  // pool memory goes back with cudaFreeAsync
  expect_one(sd::rule::wrong_free);
  CHECK(cudaFreeAsync(d, nullptr) == cudaErrorInvalidValue);  // cudaMalloc memory with cudaFree
  expect_one(sd::rule::wrong_free);
  CHECK(cudaFreeHost(d) == cudaErrorInvalidValue);
  expect_one(sd::rule::wrong_free);
  CHECK(cudaFree(h) == cudaErrorInvalidValue);
  expect_one(sd::rule::wrong_free);
  CHECK(cudaFree(d) == cudaSuccess);
  CHECK(cudaFreeAsync(p, nullptr) == cudaSuccess);
  CHECK(cudaFreeHost(h) == cudaSuccess);
  (void)cudaGetLastError();
  expect_none();
}

TEST_CASE("stand-in rule: use of a destroyed stream, event or pool") {
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
  char a[8] = {}, b[8] = {};
  CHECK(cudaMemcpyAsync(a, b, 8, cudaMemcpyDefault, s) == cudaErrorInvalidResourceHandle);
  expect_one(sd::rule::destroyed_handle);
  CHECK(cudaStreamSynchronize(s) == cudaErrorInvalidResourceHandle);
  expect_one(sd::rule::destroyed_handle);
  CHECK(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(std::uintptr_t{0x5000})) ==
        cudaErrorInvalidResourceHandle);  // never created
  expect_one(sd::rule::destroyed_handle);

  cudaEvent_t e = nullptr;
  REQUIRE(cudaEventCreate(&e) == cudaSuccess);
  REQUIRE(cudaEventDestroy(e) == cudaSuccess);
  CHECK(cudaEventRecord(e, nullptr) == cudaErrorInvalidResourceHandle);
  expect_one(sd::rule::destroyed_handle);

  alloy::CudaAsyncMallocator pool;
  REQUIRE(pool.has_pool());
  cudaMemPool_t raw = pool.pool();
  pool = alloy::CudaAsyncMallocator(0);  // destroys the first pool
  void* p = nullptr;
  CHECK(cudaMallocFromPoolAsync(&p, 64, raw, nullptr) != cudaSuccess);
  expect_one(sd::rule::destroyed_handle);
  (void)cudaGetLastError();
}

TEST_CASE("stand-in rule: a copy into freed device memory or past an allocation") {
  void* d = nullptr;
  REQUIRE(cudaMalloc(&d, 1000) == cudaSuccess);
  char buf[2000] = {};
  CHECK(cudaMemcpy(d, buf, 1001, cudaMemcpyDefault) == cudaErrorInvalidValue);
  expect_one(sd::rule::bad_access);
  CHECK(cudaMemcpy(buf, static_cast<char*>(d) + 999, 2, cudaMemcpyDefault) == cudaErrorInvalidValue);
  expect_one(sd::rule::bad_access);
  CHECK(cudaMemcpy(d, buf, 1000, cudaMemcpyDefault) == cudaSuccess);
  CHECK(cudaFree(d) == cudaSuccess);
  CHECK(cudaMemcpy(d, buf, 10, cudaMemcpyDefault) == cudaErrorInvalidValue);
  expect_one(sd::rule::bad_access);
  CHECK(cudaMemset(d, 0, 10) == cudaErrorInvalidValue);
  expect_one(sd::rule::bad_access);
  (void)cudaGetLastError();
}

TEST_CASE("stand-in rule: memory one stream frees and another receives needs an event or a synchronization") {
  // A pool over cudaMalloc that knows nothing of streams (the bare stack of the stream-ordered pools' tests).
  alloy::BitmappedBlock<256, 256, alloy::CudaMallocator> slab(std::size_t{1} << 20);
  Stream a, b;
  alloy::Block x = slab.allocate(4096);
  REQUIRE(x);
  CHECK(sd::note_allocate(x.ptr, x.size, a.s));
  REQUIRE(cudaMemsetAsync(x.ptr, 1, x.size, a.s) == cudaSuccess);  // work on a uses it
  sd::note_deallocate(x.ptr, x.size, a.s);
  CHECK(slab.deallocate(x));

  SUBCASE("another stream takes it at once: reported") {
    alloy::Block y = slab.allocate(4096);
    CHECK(y.ptr == x.ptr);  // the bare stack hands it straight back
    CHECK(!sd::note_allocate(y.ptr, y.size, b.s));
    expect_one(sd::rule::cross_stream_reuse);
    CHECK(slab.deallocate(y));
  }
  SUBCASE("the same stream takes it: stream order makes it safe") {
    alloy::Block y = slab.allocate(4096);
    CHECK(sd::note_allocate(y.ptr, y.size, a.s));
    expect_none();
    CHECK(slab.deallocate(y));
  }
  SUBCASE("an event recorded after the free, waited for by the other stream") {
    Event e;
    REQUIRE(cudaEventRecord(e.e, a.s) == cudaSuccess);
    REQUIRE(cudaStreamWaitEvent(b.s, e.e, 0) == cudaSuccess);
    alloy::Block y = slab.allocate(4096);
    CHECK(sd::note_allocate(y.ptr, y.size, b.s));
    expect_none();
    CHECK(slab.deallocate(y));
  }
  SUBCASE("an event recorded before the free does not order it") {
    sd::note_allocate(x.ptr, x.size, a.s);  // take it back on a, use it again, record, then free
    REQUIRE(cudaMemsetAsync(x.ptr, 2, x.size, a.s) == cudaSuccess);
    Event e;
    REQUIRE(cudaEventRecord(e.e, a.s) == cudaSuccess);
    REQUIRE(cudaMemsetAsync(x.ptr, 3, x.size, a.s) == cudaSuccess);
    sd::note_deallocate(x.ptr, x.size, a.s);
    REQUIRE(cudaStreamWaitEvent(b.s, e.e, 0) == cudaSuccess);
    CHECK(!sd::note_allocate(x.ptr, x.size, b.s));
    expect_one(sd::rule::cross_stream_reuse);
  }
  SUBCASE("the host synchronizes the freeing stream (or the device) first") {
    REQUIRE(cudaStreamSynchronize(a.s) == cudaSuccess);
    CHECK(sd::note_allocate(x.ptr, x.size, b.s));
    expect_none();
  }
  SUBCASE("the legacy default stream orders blocking streams, not non-blocking ones") {
    Stream blocking(cudaStreamDefault), other(cudaStreamDefault);
    void* scratch = nullptr;
    REQUIRE(cudaMallocManaged(&scratch, 4, cudaMemAttachGlobal) == cudaSuccess);
    sd::forget_annotations(x.ptr, x.size);
    CHECK(sd::note_allocate(x.ptr, x.size, blocking.s));
    REQUIRE(cudaMemsetAsync(x.ptr, 2, x.size, blocking.s) == cudaSuccess);
    sd::note_deallocate(x.ptr, x.size, blocking.s);
    REQUIRE(cudaMemsetAsync(scratch, 0, 4, nullptr) == cudaSuccess);  // work on stream 0 waits for `blocking`
    CHECK(sd::note_allocate(x.ptr, x.size, other.s));  // a blocking stream's next work waits for stream 0's
    REQUIRE(cudaMemsetAsync(x.ptr, 3, x.size, other.s) == cudaSuccess);
    sd::note_deallocate(x.ptr, x.size, other.s);
    REQUIRE(cudaMemsetAsync(scratch, 0, 4, nullptr) == cudaSuccess);
    CHECK(!sd::note_allocate(x.ptr, x.size, b.s));  // non-blocking: stream 0 orders nothing for it
    expect_one(sd::rule::cross_stream_reuse);
    CHECK(cudaFree(scratch) == cudaSuccess);
  }
  sd::forget_annotations(x.ptr, x.size);
  expect_none();
}

TEST_CASE("stand-in rule: a free on one stream while another stream's use of the memory is not ordered before it") {
  Stream a, b;
  void* p = nullptr;
  REQUIRE(cudaMallocAsync(&p, 4096, a.s) == cudaSuccess);
  REQUIRE(cudaMemsetAsync(p, 1, 4096, a.s) == cudaSuccess);
  SUBCASE("freed on the stream that used it") {
    CHECK(cudaFreeAsync(p, a.s) == cudaSuccess);
    expect_none();
  }
  SUBCASE("freed on another stream, unordered: reported") {
    CHECK(cudaFreeAsync(p, b.s) == cudaSuccess);
    expect_one(sd::rule::unordered_free);
  }
  SUBCASE("freed on another stream that waited for an event after the use") {
    Event e;
    REQUIRE(cudaEventRecord(e.e, a.s) == cudaSuccess);
    REQUIRE(cudaStreamWaitEvent(b.s, e.e, 0) == cudaSuccess);
    CHECK(cudaFreeAsync(p, b.s) == cudaSuccess);
    expect_none();
  }
  SUBCASE("a stack's free (note_deallocate) is held to the same rule") {
    sd::note_deallocate(p, 4096, b.s);
    expect_one(sd::rule::unordered_free);
    sd::forget_annotations(p, 4096);
    CHECK(cudaFreeAsync(p, a.s) == cudaSuccess);
  }
}

TEST_CASE("stand-in pools: reuse follows stream order, release threshold, trim") {
  Stream a, b;
  alloy::CudaAsyncMallocator pool;  // threshold: unbounded
  alloy::Block x = pool.allocate(a.s, 1 << 16);
  REQUIRE(x);
  CHECK(pool.deallocate(a.s, x));
  alloy::Block y = pool.allocate(a.s, 1 << 16);
  CHECK(y.ptr == x.ptr);  // the same stream: reused at once
  CHECK(pool.deallocate(a.s, y));
  alloy::Block z = pool.allocate(b.s, 1 << 16);
  CHECK(z.ptr != x.ptr);  // another stream, nothing ordering it after the free: fresh memory
  CHECK(pool.deallocate(b.s, z));
  Event e;
  REQUIRE(cudaEventRecord(e.e, a.s) == cudaSuccess);
  REQUIRE(cudaStreamWaitEvent(b.s, e.e, 0) == cudaSuccess);
  alloy::Block w = pool.allocate(b.s, 1 << 16);
  CHECK((w.ptr == x.ptr || w.ptr == z.ptr));  // both may be taken now
  CHECK(pool.deallocate(b.s, w));
  CHECK(pool.reserved_bytes() == 2 << 16);
  CHECK(pool.trim_to(1 << 16));
  CHECK(pool.reserved_bytes() == 2 << 16);  // frees the host has not seen finish stay
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(pool.reserved_bytes() == 2 << 16);  // unbounded threshold: kept across the synchronization
  CHECK(pool.trim_to(0));
  CHECK(pool.reserved_bytes() == 0);

  alloy::CudaAsyncMallocator eager(0);
  alloy::Block v = eager.allocate(a.s, 1 << 20);
  CHECK(eager.deallocate(a.s, v));
  CHECK(eager.reserved_bytes() == 1 << 20);  // not yet: a has not been seen to reach the free
  REQUIRE(cudaStreamSynchronize(a.s) == cudaSuccess);
  CHECK(eager.reserved_bytes() == 0);
  expect_none();
}

TEST_CASE("stand-in faults: out of memory on the N-th allocation and above a byte budget") {
  sd::faults f;
  f.fail_alloc_at = 2;
  sd::set_faults(f);
  alloy::Block a = alloy::CudaMallocator::instance.allocate(100);
  alloy::Block b = alloy::CudaMallocator::instance.allocate(100);
  alloy::Block c = alloy::CudaMallocator::instance.allocate(100);
  CHECK(a);
  CHECK(!b);  // the second call
  CHECK(c);
  CHECK(cudaGetLastError() == cudaSuccess);  // the parent cleared the failure
  sd::set_faults({});
  CHECK(alloy::CudaMallocator::instance.deallocate(a));
  CHECK(alloy::CudaMallocator::instance.deallocate(c));

  f = {};
  f.byte_budget = 10000;
  sd::set_faults(f);
  alloy::Block d = alloy::CudaHostMallocator::instance.allocate(6000);
  CHECK(d);
  CHECK(!alloy::CudaManagedMallocator::instance.allocate(6000));  // 12000 > 10000
  alloy::Block e = alloy::CudaManagedMallocator::instance.allocate(4000);
  CHECK(e);
  sd::set_faults({});
  CHECK(alloy::CudaHostMallocator::instance.deallocate(d));
  CHECK(alloy::CudaManagedMallocator::instance.deallocate(e));
  // More than the device has.
  CHECK(!alloy::CudaMallocator::instance.allocate(std::size_t{1} << 40));
  CHECK(!alloy::CudaMallocator::instance.allocate(SIZE_MAX));
  CHECK(cudaGetLastError() == cudaSuccess);
  expect_none();
}

TEST_CASE("stand-in faults: no device, an insufficient driver, a failing copy") {
  sd::faults f;
  f.device_count = 0;
  sd::set_faults(f);
  int n = -1;
  CHECK(cudaGetDeviceCount(&n) == cudaErrorNoDevice);
  CHECK(n == 0);
  CHECK(alloy::query_cuda_devices().error == cudaErrorNoDevice);
  CHECK(!alloy::CudaMallocator::instance.allocate(64));
  alloy::CudaAsyncMallocator none;
  CHECK(!none.has_pool());
  CHECK(cudaGetLastError() == cudaSuccess);  // the parents cleared their failures

  f.device_count = 1;
  f.init_error = cudaErrorInsufficientDriver;
  sd::set_faults(f);
  CHECK(cudaGetDeviceCount(&n) == cudaErrorInsufficientDriver);
  CHECK(alloy::query_cuda_devices().error == 35);
  CHECK(alloy::cuda_no_device_error(alloy::query_cuda_devices().error));
  CHECK(!alloy::CudaHostMallocator::instance.allocate(64));
  CHECK(cudaGetLastError() == cudaErrorInsufficientDriver);  // without a driver the error stays
  CHECK(cudaGetLastError() == cudaErrorInsufficientDriver);
  sd::set_faults({});
  CHECK(cudaGetLastError() == cudaSuccess);

  f = {};
  f.fail_copy_at = 1;
  sd::set_faults(f);
  alloy::Block d = alloy::CudaMallocator::instance.allocate(64);
  char buf[64] = {};
  CHECK(!alloy::CudaMallocator::instance.copy(d.ptr, buf, 64, {}));
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);  // a failed copy leaves its error for the caller
  CHECK(alloy::CudaMallocator::instance.copy(d.ptr, buf, 64, {}));  // only the first
  sd::set_faults({});
  CHECK(alloy::CudaMallocator::instance.deallocate(d));
  expect_none();
}

TEST_CASE("stand-in: calls are counted, and error names are the runtime's") {
  const auto before = sd::call_count("cudaMalloc");
  const auto total = sd::call_count();
  alloy::Block d = alloy::CudaMallocator::instance.allocate(64);
  CHECK(sd::call_count("cudaMalloc") == before + 1);
  CHECK(sd::call_count() == total + 1);
  CHECK(alloy::CudaMallocator::instance.deallocate(d));
  CHECK(std::string(cudaGetErrorName(cudaErrorMemoryAllocation)) == "cudaErrorMemoryAllocation");
  CHECK(std::string(cudaGetErrorString(cudaErrorInsufficientDriver)).find("driver") != std::string::npos);
  CHECK(std::string(cudaGetErrorName(static_cast<cudaError_t>(12345))) == "cudaErrorUnknown");
}

TEST_CASE("stand-in: devices, the current device, memory info") {
  sd::faults f;
  f.device_count = 2;
  f.device_memory = std::size_t{1} << 30;
  sd::set_faults(f);
  CHECK(cudaSetDevice(1) == cudaSuccess);
  int dev = -1;
  CHECK(cudaGetDevice(&dev) == cudaSuccess);
  CHECK(dev == 1);
  std::size_t free_b = 0, total = 0;
  void* d = nullptr;
  REQUIRE(cudaMalloc(&d, std::size_t{1} << 29) == cudaSuccess);
  CHECK(cudaMemGetInfo(&free_b, &total) == cudaSuccess);
  CHECK(total == std::size_t{1} << 30);
  CHECK(free_b == std::size_t{1} << 29);
  CHECK(cudaSetDevice(2) == cudaErrorInvalidDevice);
  (void)cudaGetLastError();
  cudaPointerAttributes at{};
  CHECK(cudaPointerGetAttributes(&at, d) == cudaSuccess);
  CHECK(at.type == cudaMemoryTypeDevice);
  CHECK(at.device == 1);
  CHECK(cudaFree(d) == cudaSuccess);
  CHECK(cudaSetDevice(0) == cudaSuccess);
  sd::set_faults({});
  expect_none();
}
