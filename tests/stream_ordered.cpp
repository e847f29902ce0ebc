// StreamOrdered / SharedStreamOrdered: RMM's stream-ordered contract over any stack. Over the CPU stand-in for the
// CUDA runtime, whose stream-order checker reports memory that one stream freed and another received without an
// event or a synchronization between them: same-stream reuse makes no CUDA call, a crossing costs one event record
// and one wait, the merge path synchronizes, a released stream's blocks stay usable after it is destroyed, and a
// randomized run over 4 streams and 4 host threads finds no violation where the bare stack has many. Like every block,
// it passes the conformance kit (check_allocator, on the default stream), and SharedStreamOrdered the suite every
// Shared block runs (check_thread_safe, support/thread_safety.hpp), here because this file links the stand-in.
// Built over the real runtime too (label gpu: it needs a device); the checker's parts need the stand-in.
// needs: cuda device
// ctest-labels: tsan heavy
#include <alloy/stream_ordered.hpp>

#include <alloy/allocator_list.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/cuda_mallocator.hpp>
#include <alloy/device_buffer.hpp>
#include <alloy/mallocator.hpp>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "support/conformance.hpp"
#include "support/cuda_stream.hpp"
#include "support/thread_safety.hpp"

using alloy::test::Stream;

#include "cuda/skip.hpp"
#include "support/rng.hpp"
#include "support/test_length.hpp"
#ifdef ALLOY_CUDA_STANDIN
#include <cuda_standin.hpp>
#endif

using alloy::Block;

namespace {

using Slab = alloy::BitmappedBlock<256, 256, alloy::CudaMallocator>;
struct Slabs {
  Slab operator()(std::size_t n) const { return Slab(std::max<std::size_t>(n, std::size_t{16} << 20)); }
};
using SlabList = alloy::AllocatorList<Slabs>;
using Pool = alloy::StreamOrdered<Slab>;

static_assert(alloy::has_stream_ordered<Pool>);
static_assert(alloy::has_stream_ordered<alloy::SharedStreamOrdered<SlabList>>);
static_assert(alloy::memory_space_of<Pool>() == alloy::MemorySpace::device);
static_assert(Pool::alignment == 256);
static_assert(alloy::has_owns<Pool> && alloy::has_copy<Pool>);
static_assert(!alloy::has_owns<alloy::StreamOrdered<alloy::Mallocator>>);
static_assert(sizeof(alloy::device_buffer<alloy::SharedStreamOrdered<SlabList>>) <= 5 * sizeof(void*));

#ifdef ALLOY_CUDA_STANDIN
namespace sd = alloy::standin;
void expect_no_violation() {
  const auto v = sd::take_violations();
  for (std::size_t i = 0; i < v.size() && i < 5; ++i) MESSAGE(sd::rule_name(v[i].what) << ": " << v[i].text);
  CHECK(v.empty());
}

// Tells the stand-in's stream-order checker what a stack does, around any stream-ordered or plain stack: the
// block's free is noted before the stack takes it back, its receipt after the stack handed it out.
template <class A>
struct Checked {
  A& a;
  std::mutex* m = nullptr;  // for a stack that is not thread-safe (the bare one)
  Block allocate(cudaStream_t s, std::size_t n) {
    Block b;
    {
      std::unique_lock<std::mutex> g;
      if (m) g = std::unique_lock<std::mutex>(*m);
      if constexpr (alloy::has_stream_ordered<A>) b = a.allocate(s, n);
      else b = a.allocate(n);
    }
    if (b) sd::note_allocate(b.ptr, b.size, s);
    return b;
  }
  void deallocate(cudaStream_t s, Block b) {
    sd::note_deallocate(b.ptr, b.size, s);
    std::unique_lock<std::mutex> g;
    if (m) g = std::unique_lock<std::mutex>(*m);
    if constexpr (alloy::has_stream_ordered<A>) CHECK(a.deallocate(s, b));
    else CHECK(a.deallocate(b));
  }
};

// 4 host threads; each step picks one of the thread's 8 slots: a full slot's block is freed on the stream that
// used it; an empty one gets a block of 256 B .. 1 MiB (log-uniform) on one of the 4 streams, which then uses it
// (a memset there). Every allocation and every free counts as one operation. Returns the failed allocations.
template <class A>
std::size_t random_run(Checked<A> c, const std::vector<cudaStream_t>& streams, std::size_t ops_per_thread) {
  std::atomic<std::size_t> failures{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      alloy::test::Rng rng{t + 11};
      struct Slot {
        Block b;
        cudaStream_t s;
      };
      std::vector<Slot> slots(8, Slot{{}, nullptr});
      for (std::size_t i = 0; i < ops_per_thread; ++i) {
        Slot& slot = slots[rng.below(slots.size())];
        if (slot.b) {
          c.deallocate(slot.s, slot.b);
          slot.b = {};
          continue;
        }
        cudaStream_t s = streams[rng.below(streams.size())];
        const std::size_t top = std::size_t{256} << rng.below(13);  // 256 B .. 1 MiB
        const std::size_t n = top / 2 + 1 + rng.below(top / 2);
        slot = {c.allocate(s, n), s};
        if (!slot.b) {
          ++failures;
          continue;
        }
        (void)cudaMemsetAsync(slot.b.ptr, 0, 16, s);
      }
      for (Slot& slot : slots)
        if (slot.b) c.deallocate(slot.s, slot.b);
    });
  }
  for (auto& t : threads) t.join();
  return failures;
}
#endif

}  // namespace

TEST_CASE("StreamOrdered: conformance, on the default stream, over host and device parents") {
  alloy::test::check_allocator([] { return alloy::StreamOrdered<alloy::Mallocator>(); });
  alloy::test::check_allocator([] { return Pool(std::size_t{1} << 20); });  // device memory, reached through copy
  alloy::test::check_allocator([] { return alloy::SharedStreamOrdered<SlabList>(); });
}

namespace {
// A stream-ordered pool as a plain allocator whose calls each go to the calling thread's own stream
// (cudaStreamPerThread): the threads' lists cross behind events.
template <class P>
struct PerThreadStream {
  static constexpr std::size_t alignment = P::alignment;
  P pool;
  Block allocate(std::size_t n) noexcept { return pool.allocate(cudaStreamPerThread, n); }
  bool deallocate(Block b) noexcept { return pool.deallocate(cudaStreamPerThread, b); }
  alloy::Ternary empty() const noexcept { return pool.empty(); }
};
using HostSlab = alloy::BitmappedBlock<256, 256, alloy::Mallocator>;
}  // namespace

TEST_CASE("thread safety: SharedStreamOrdered, on the shared default stream and on a stream per thread") {
#if defined(__SANITIZE_THREAD__)
  constexpr std::size_t total = 12'000;
#else
  constexpr std::size_t total = 48'000;
#endif
  for (unsigned threads : {8u, 16u}) {
    const alloy::test::ThreadSafeOptions o{.threads = threads, .steps = total / threads, .max_size = 1024};
    alloy::test::check_thread_safe([] { return alloy::SharedStreamOrdered<alloy::Mallocator>(); }, o);
    // 64 KiB for up to 256 live blocks of up to 1 KiB: the lists run dry, take from other threads' streams behind
    // their events, and go back to the slab after a synchronization.
    using Slabbed = alloy::SharedStreamOrdered<HostSlab>;
#ifdef ALLOY_CUDA_STANDIN
    const auto waits = sd::call_count("cudaStreamWaitEvent"), syncs = sd::call_count("cudaEventSynchronize");
#endif
    alloy::test::check_thread_safe([] { return PerThreadStream<Slabbed>{Slabbed(1 << 16)}; }, o);
#ifdef ALLOY_CUDA_STANDIN
    MESSAGE((sd::call_count("cudaStreamWaitEvent") - waits) << " waits, "
                                                         << (sd::call_count("cudaEventSynchronize") - syncs) << " syncs");
    CHECK(sd::call_count("cudaStreamWaitEvent") > waits);
    CHECK(sd::call_count("cudaEventSynchronize") > syncs);
    expect_no_violation();
#endif
  }
}

TEST_CASE("StreamOrdered: a block freed on a stream is reused on that stream at once") {
  Stream a;
  Pool pool(std::size_t{1} << 20);
  Block x = pool.allocate(a.s, 1000);
  REQUIRE(x);
  CHECK(x.size == 1000);
  CHECK(alloy::is_aligned(x.ptr, 256));
  CHECK(pool.empty() == alloy::Ternary::no);
  CHECK(pool.owns(x) == alloy::Ternary::yes);
  CHECK(pool.deallocate(a.s, x));
  CHECK(pool.empty() == alloy::Ternary::yes);
  CHECK(pool.cached_bytes() == 1024);
#ifdef ALLOY_CUDA_STANDIN
  const auto calls = sd::call_count();
#endif
  for (int i = 0; i < 100; ++i) {
    Block y = pool.allocate(a.s, 900 + i);  // the same class
    CHECK(y.ptr == x.ptr);
    CHECK(y.size == std::size_t(900 + i));
    CHECK(pool.deallocate(a.s, y));
  }
#ifdef ALLOY_CUDA_STANDIN
  CHECK(sd::call_count() == calls);  // no CUDA call on the same stream
#endif
  Block z = pool.allocate(a.s, 5000);  // another class: from the slab
  CHECK(z.ptr != x.ptr);
  CHECK(pool.deallocate(a.s, z));
  CHECK(pool.release());
  CHECK(pool.cached_bytes() == 0);
  CHECK(pool.parent().empty() == alloy::Ternary::yes);  // everything went back
  CHECK(!pool.allocate(a.s, 0));
  CHECK(!pool.allocate(a.s, SIZE_MAX));
  CHECK(pool.deallocate(a.s, {}));
}

TEST_CASE("StreamOrdered: another stream takes a freed block behind one event, when the parent is full") {
  Stream a, b;
  Pool pool(std::size_t{4} * 256);  // four blocks
  std::vector<Block> v;
  for (int i = 0; i < 4; ++i) v.push_back(pool.allocate(a.s, 256));
  CHECK(!pool.parent().allocate(256));  // full
#ifdef ALLOY_CUDA_STANDIN
  for (Block x : v) REQUIRE(cudaMemsetAsync(x.ptr, 1, 256, a.s) == cudaSuccess);  // a's work uses them, then frees
  for (Block x : v) sd::note_deallocate(x.ptr, 256, a.s);
#endif
  for (Block x : v) CHECK(pool.deallocate(a.s, x));
#ifdef ALLOY_CUDA_STANDIN
  const auto records = sd::call_count("cudaEventRecord"), waits = sd::call_count("cudaStreamWaitEvent");
#endif
  Block y = pool.allocate(b.s, 200);
  REQUIRE(y);
#ifdef ALLOY_CUDA_STANDIN
  CHECK(sd::note_allocate(y.ptr, y.size, b.s));  // ordered: no violation
  CHECK(sd::call_count("cudaEventRecord") == records + 1);
  CHECK(sd::call_count("cudaStreamWaitEvent") == waits + 1);
#endif
  // The crossing moved a's whole list of that class: b takes the others without another call.
  std::vector<Block> w{y};
  for (int i = 0; i < 3; ++i) w.push_back(pool.allocate(b.s, 256));
  for (Block x : w) CHECK(x);
#ifdef ALLOY_CUDA_STANDIN
  CHECK(sd::call_count("cudaEventRecord") == records + 1);
  for (Block x : w) sd::forget_annotations(x.ptr, x.size);
  expect_no_violation();
#endif
  for (Block x : w) CHECK(pool.deallocate(b.s, x));
}

TEST_CASE("StreamOrdered: when no list has the class, the streams are synchronized and the lists go back") {
  Stream a, b;
  Pool pool(std::size_t{4} * 256);
  Block x = pool.allocate(a.s, 1024);  // the whole slab
  REQUIRE(x);
  CHECK(pool.deallocate(a.s, x));
#ifdef ALLOY_CUDA_STANDIN
  const auto syncs = sd::call_count("cudaStreamSynchronize");
#endif
  Block y = pool.allocate(b.s, 256);  // another class: a's list must go back to the slab first
  REQUIRE(y);
  CHECK(y.ptr == x.ptr);
  CHECK(pool.cached_bytes() == 0);
#ifdef ALLOY_CUDA_STANDIN
  CHECK(sd::call_count("cudaStreamSynchronize") == syncs + 1);
#endif
  CHECK(pool.deallocate(b.s, y));  // cached on b
  Block h = pool.allocate(a.s, 768);  // the slab's other three blocks
  REQUIRE(h);
  Block z = pool.allocate(b.s, 512);  // two blocks: none free, y's goes back, still one short: fails
  CHECK(!z);
  CHECK(pool.cached_bytes() == 0);
  CHECK(pool.deallocate(a.s, h));
}

TEST_CASE("StreamOrdered: a released stream's blocks stay usable after the stream is destroyed") {
  Stream b;
  Pool pool(std::size_t{2} * 256);
  Stream a;
  Block x = pool.allocate(a.s, 256), y = pool.allocate(a.s, 256);
  CHECK(pool.deallocate(a.s, x));
  CHECK(pool.deallocate(a.s, y));
#ifdef ALLOY_CUDA_STANDIN
  REQUIRE(cudaMemsetAsync(x.ptr, 1, 256, a.s) == cudaSuccess);  // work on a uses them
  REQUIRE(cudaMemsetAsync(y.ptr, 1, 256, a.s) == cudaSuccess);
  sd::note_deallocate(x.ptr, 256, a.s);
  sd::note_deallocate(y.ptr, 256, a.s);
#endif
  CHECK(pool.release_stream(a.s));
  REQUIRE(cudaStreamDestroy(a.s) == cudaSuccess);
  a.s = nullptr;
  Block z = pool.allocate(b.s, 256);  // crosses behind the event recorded at release_stream
  CHECK((z.ptr == x.ptr || z.ptr == y.ptr));
#ifdef ALLOY_CUDA_STANDIN
  CHECK(sd::note_allocate(z.ptr, 256, b.s));
  sd::forget_annotations(x.ptr, 256);
  sd::forget_annotations(y.ptr, 256);
#endif
  CHECK(pool.deallocate(b.s, z));
  CHECK(pool.release());
#ifdef ALLOY_CUDA_STANDIN
  expect_no_violation();  // no use of the destroyed stream
#endif
}

TEST_CASE("StreamOrdered<..., FreeEvents::at_each_free>: an event record per free, a destroyed stream never named") {
  Stream a, b;
  alloy::StreamOrdered<Slab, alloy::FreeEvents::at_each_free> pool(std::size_t{256});
  Block x = pool.allocate(a.s, 256);
  REQUIRE(x);
#ifdef ALLOY_CUDA_STANDIN
  const auto records = sd::call_count("cudaEventRecord");
#endif
#ifdef ALLOY_CUDA_STANDIN
  REQUIRE(cudaMemsetAsync(x.ptr, 1, 256, a.s) == cudaSuccess);
  sd::note_deallocate(x.ptr, 256, a.s);
#endif
  CHECK(pool.deallocate(a.s, x));
#ifdef ALLOY_CUDA_STANDIN
  CHECK(sd::call_count("cudaEventRecord") == records + 1);
#endif
  REQUIRE(cudaStreamDestroy(a.s) == cudaSuccess);  // no release_stream needed
  a.s = nullptr;
  Block y = pool.allocate(b.s, 256);
  CHECK(y.ptr == x.ptr);
#ifdef ALLOY_CUDA_STANDIN
  CHECK(sd::note_allocate(y.ptr, 256, b.s));
  // The crossing waits on a's event, then records b's: b's list is ordered for others by b's event alone.
  CHECK(sd::call_count("cudaEventRecord") == records + 2);
  expect_no_violation();
#endif
  CHECK(pool.deallocate(b.s, y));
}

TEST_CASE("StreamOrdered: blocks taken by one event-only stream cross again only behind that stream's later event") {
  // Three streams whose lists only their events order (FreeEvents::at_each_free): s1 takes s2's list behind s2's
  // event; s3 then takes the rest of it from s1, and must wait for s2's free too, so s1 records again after its wait.
  Stream s1, s2, s3;
  alloy::StreamOrdered<Slab, alloy::FreeEvents::at_each_free> pool(std::size_t{4} * 256);
  Block q = pool.allocate(s1.s, 512);  // s1's event is recorded once, at this free, before anything else
  CHECK(pool.deallocate(s1.s, q));
  Block p1 = pool.allocate(s2.s, 256), p2 = pool.allocate(s2.s, 256);  // the slab is full now
  REQUIRE(p1);
  REQUIRE(p2);
#ifdef ALLOY_CUDA_STANDIN
  REQUIRE(cudaMemsetAsync(p1.ptr, 1, 256, s2.s) == cudaSuccess);  // s2's work uses them
  REQUIRE(cudaMemsetAsync(p2.ptr, 1, 256, s2.s) == cudaSuccess);
  sd::note_deallocate(p1.ptr, 256, s2.s);
  sd::note_deallocate(p2.ptr, 256, s2.s);
#endif
  CHECK(pool.deallocate(s2.s, p1));
  CHECK(pool.deallocate(s2.s, p2));
  Block a = pool.allocate(s1.s, 256);  // s2's list of 256 moves to s1 behind s2's event
  REQUIRE(a);
  Block b = pool.allocate(s3.s, 256);  // the rest of it moves on to s3 behind s1's event
  REQUIRE(b);
  CHECK(b.ptr != a.ptr);
#ifdef ALLOY_CUDA_STANDIN
  CHECK(sd::note_allocate(a.ptr, 256, s1.s));
  CHECK(sd::note_allocate(b.ptr, 256, s3.s));  // ordered after s2's free: s1's event was recorded after its wait
  expect_no_violation();
#endif
  CHECK(pool.deallocate(s1.s, a));
  CHECK(pool.deallocate(s3.s, b));
}

TEST_CASE("StreamOrdered over a growing list: a producer stream and a consumer stream do not grow it for ever") {
  Stream producer, consumer;
  alloy::StreamOrdered<SlabList> pool;
  for (int i = 0; i < 400; ++i) {  // 400 MiB go through the pool, never more than 1 MiB in use
    Block b = pool.allocate(producer.s, 1 << 20);
    REQUIRE(b);
    CHECK(pool.deallocate(consumer.s, b));  // freed on the stream that used it last
  }
  // Past 64 MiB cached, the producer takes the consumer's list (behind an event) before the list grows.
  CHECK(pool.cached_bytes() <= (std::size_t{66} << 20));
  CHECK(pool.parent().allocator_count() <= 6);  // 16 MiB slabs: 66 MiB and change, not 400
}

TEST_CASE("SharedStreamOrdered: the per-thread default stream is a stream per thread") {
  alloy::SharedStreamOrdered<Slab> pool(std::size_t{1} * 256);
  Block x;
  std::thread([&] {
    x = pool.allocate(cudaStreamPerThread, 256);
    CHECK(x);
#ifdef ALLOY_CUDA_STANDIN
    CHECK(cudaMemsetAsync(x.ptr, 1, 256, cudaStreamPerThread) == cudaSuccess);
    sd::note_deallocate(x.ptr, 256, cudaStreamPerThread);
#endif
    CHECK(pool.deallocate(cudaStreamPerThread, x));  // records the thread's event at once
  }).join();
  Block y;
  std::thread([&] {
    y = pool.allocate(cudaStreamPerThread, 256);  // another thread's stream: behind that event
    CHECK(y.ptr == x.ptr);
#ifdef ALLOY_CUDA_STANDIN
    CHECK(sd::note_allocate(y.ptr, 256, cudaStreamPerThread));
#endif
    CHECK(pool.deallocate(cudaStreamPerThread, y));
  }).join();
#ifdef ALLOY_CUDA_STANDIN
  expect_no_violation();
#endif
  CHECK(pool.release());
}

TEST_CASE("StreamOrdered remembers its device and restores the caller's") {
#ifdef ALLOY_CUDA_STANDIN
  sd::faults f;
  f.device_count = 2;
  sd::set_faults(f);
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  {
    Stream a, b;
    Pool pool(std::size_t{256});
    CHECK(pool.device() == 1);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    Block x = pool.allocate(a.s, 256);
    CHECK(pool.deallocate(a.s, x));
    Block y = pool.allocate(b.s, 256);  // a crossing: events made on device 1
    CHECK(y.ptr == x.ptr);
    int now = -1;
    CHECK(cudaGetDevice(&now) == cudaSuccess);
    CHECK(now == 0);  // restored
    CHECK(pool.deallocate(b.s, y));
    // A list that grows while device 0 is current still adds its slabs on device 1.
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    alloy::StreamOrdered<SlabList> list;
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    Block z = list.allocate(a.s, 4096);
    REQUIRE(z);
    cudaPointerAttributes at{};
    REQUIRE(cudaPointerGetAttributes(&at, z.ptr) == cudaSuccess);
    CHECK(at.device == 1);
    CHECK(cudaGetDevice(&now) == cudaSuccess);
    CHECK(now == 0);
    CHECK(list.deallocate(a.s, z));
  }
  sd::set_faults({});
  expect_no_violation();
#else
  int d = -1;
  REQUIRE(cudaGetDevice(&d) == cudaSuccess);
  Pool pool(std::size_t{256});
  CHECK(pool.device() == d);
#endif
}

TEST_CASE("device_buffer over SharedStreamOrdered: allocates and frees on the buffer's stream") {
  Stream a;
  alloy::SharedStreamOrdered<SlabList> pool;
  void* first = nullptr;
  {
    alloy::device_buffer<alloy::SharedStreamOrdered<SlabList>> buf(1 << 20, a.s, pool);
    first = buf.data();
  }
#ifdef ALLOY_CUDA_STANDIN
  const auto calls = sd::call_count();
#endif
  alloy::device_buffer<alloy::SharedStreamOrdered<SlabList>> again(1 << 20, a.s, pool);
  CHECK(again.data() == first);
#ifdef ALLOY_CUDA_STANDIN
  CHECK(sd::call_count() == calls);
#endif
}

#ifdef ALLOY_CUDA_STANDIN
TEST_CASE("stream-order checker over 4 streams and 4 threads: StreamOrdered finds no violation, the bare stack many") {
  // 10^6 allocations and frees in all under ALLOY_TEST_LONG (support/test_length.hpp), a twentieth in CI; a tenth of
  // that under ThreadSanitizer, where every stand-in call is slower.
#if defined(__SANITIZE_THREAD__)
  const std::size_t per_thread = alloy::test::test_length(25000);
#else
  const std::size_t per_thread = alloy::test::test_length(250000);
#endif
  std::vector<Stream> owned(4);
  std::vector<cudaStream_t> streams;
  for (auto& s : owned) streams.push_back(s.s);
  {
    // A slab too small for the live set: its lists cross streams behind events and go back after synchronizing.
    alloy::SharedStreamOrdered<Slab> pool(std::size_t{12} << 20);
    const auto waits = sd::call_count("cudaStreamWaitEvent"), syncs = sd::call_count("cudaStreamSynchronize");
    const std::size_t failed = random_run(Checked<decltype(pool)>{pool, nullptr}, streams, per_thread);
    MESSAGE("slab: " << failed << " allocations failed; " << sd::call_count("cudaStreamWaitEvent") - waits
                     << " waits, " << sd::call_count("cudaStreamSynchronize") - syncs << " synchronizations");
    CHECK(sd::call_count("cudaStreamWaitEvent") > waits);
    CHECK(sd::call_count("cudaStreamSynchronize") > syncs);
    expect_no_violation();
  }
  {
    // A list that grows: the lists only ever serve their own stream.
    alloy::SharedStreamOrdered<SlabList> pool;
    CHECK(random_run(Checked<decltype(pool)>{pool, nullptr}, streams, per_thread / 5) == 0);
    expect_no_violation();
    CHECK(pool.release());
    CHECK(pool.cached_bytes() == 0);
  }
  {
    SlabList bare;  // the same stack, not stream-ordered
    std::mutex m;
    CHECK(random_run(Checked<SlabList>{bare, &m}, streams, per_thread / 10) == 0);
    const auto v = sd::take_violations();
    CHECK(v.size() > 10);
    for (const auto& x : v) CHECK(x.what == sd::rule::cross_stream_reuse);
    for (auto s : streams) CHECK(cudaStreamSynchronize(s) == cudaSuccess);
  }
}
#endif
