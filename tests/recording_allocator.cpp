// ctest-labels: tsan
#include <alloy/recording_allocator.hpp>

#include <alloy/aligned_mallocator.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/null_allocator.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "../benchmarks/replay/trace.hpp"
#include "support/conformance.hpp"
#include "support/differential.hpp"

using alloy::Block;
using alloy::RecordingAllocator;
using alloy::TraceEvent;
using Op = alloy::TraceEvent::Op;

// Capabilities are exactly the parent's.
static_assert(alloy::has_reallocate<RecordingAllocator<alloy::Mallocator>>);
static_assert(alloy::has_deallocate<RecordingAllocator<alloy::Mallocator>>);
static_assert(!alloy::has_owns<RecordingAllocator<alloy::Mallocator>>);
static_assert(!alloy::has_expand<RecordingAllocator<alloy::Mallocator>>);
static_assert(!alloy::has_aligned_allocate<RecordingAllocator<alloy::Mallocator>>);
static_assert(alloy::has_aligned_allocate<RecordingAllocator<alloy::AlignedMallocator>>);
static_assert(alloy::has_aligned_reallocate<RecordingAllocator<alloy::AlignedMallocator>>);
using RecNull = RecordingAllocator<alloy::NullAllocator>;
static_assert(alloy::has_owns<RecNull> && alloy::has_expand<RecNull> && alloy::has_allocate_all<RecNull> &&
              alloy::has_deallocate_all<RecNull> && alloy::has_empty<RecNull> &&
              alloy::has_resolve_internal_pointer<RecNull> && alloy::has_aligned_reallocate<RecNull>);
static_assert(RecNull::alignment == alloy::NullAllocator::alignment);
static_assert(alloy::memory_space_of<RecordingAllocator<alloy::NoAccessAllocator>>() == alloy::MemorySpace::device);
static_assert(!std::is_copy_constructible_v<RecordingAllocator<alloy::Mallocator>>);

namespace {

// A small bump arena with expand, owns, deallocate (last block only) and deallocate_all: exercises the primitives
// Mallocator lacks. 4096 bytes, 16-byte blocks.
struct TestArena {
  static constexpr std::size_t alignment = 16;
  alignas(16) std::byte mem[4096];
  std::size_t top = 0;
  Block allocate(std::size_t n) noexcept {
    std::size_t r = 0;
    if (n == 0 || !alloy::round_up_checked(n, 16, r) || r > sizeof mem - top) return {};
    Block b{mem + top, n};
    top += r;
    return b;
  }
  bool expand(Block& b, std::size_t d) noexcept {
    if (d == 0) return true;
    if (!b || alloy::round_up(b.size, 16) + (static_cast<std::byte*>(b.ptr) - mem) != top) return false;
    std::size_t n = 0, r = 0;
    if (!alloy::add_checked(b.size, d, n) || !alloy::round_up_checked(n, 16, r)) return false;
    const std::size_t start = static_cast<std::size_t>(static_cast<std::byte*>(b.ptr) - mem);
    if (r > sizeof mem - start) return false;
    top = start + r;
    b.size = n;
    return true;
  }
  alloy::Ternary owns(Block b) const noexcept {
    return alloy::to_ternary(b && alloy::block_within(b, mem, sizeof mem));
  }
  bool deallocate(Block b) noexcept {
    if (!b) return true;
    const std::size_t start = static_cast<std::size_t>(static_cast<std::byte*>(b.ptr) - mem);
    if (start + alloy::round_up(b.size, 16) == top) top = start;
    return true;
  }
  bool deallocate_all() noexcept {
    top = 0;
    return true;
  }
};

std::vector<TraceEvent> parse_ok(const std::string& text) {
  const auto t = alloy::replay::parse_trace(text);
  INFO(t.error_line, ": ", t.error);
  REQUIRE(t.ok());
  return t.events;
}

}  // namespace

TEST_CASE("RecordingAllocator: conformance") {
  alloy::test::check_allocator([] { return RecordingAllocator<alloy::Mallocator>{}; });
  alloy::test::check_allocator([] { return RecordingAllocator<alloy::AlignedMallocator>{}; });
  alloy::test::check_allocator([] { return RecordingAllocator<alloy::NullAllocator>{}; });
  alloy::test::check_allocator([] { return RecordingAllocator<TestArena>{}; });
}

TEST_CASE("RecordingAllocator: a recorded run parses back to exactly the calls made") {
  RecordingAllocator<alloy::AlignedMallocator> r;
  Block a = r.allocate(10);
  Block b = r.aligned_allocate(100, 256);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(alloy::is_aligned(b.ptr, 256));
  CHECK(!r.allocate(0));                    // failures write nothing
  CHECK(r.reallocate(a, 5000));             // r, may move
  CHECK(r.aligned_reallocate(b, 300, 256)); // r, keeps its alignment
  Block c{};
  CHECK(r.reallocate(c, 64));               // from the empty block: an allocation
  CHECK(r.reallocate(c, 0));                // to 0: a free
  CHECK(!c);
  CHECK(r.deallocate(a));
  CHECK(r.deallocate(Block{}));             // nothing to record
  CHECK(r.live_blocks() == 1);
  CHECK(r.event_count() == 7);
  const std::vector<TraceEvent> want = {
      {Op::allocate, 1, 10, 16, 0},   {Op::allocate, 2, 100, 256, 0}, {Op::reallocate, 1, 5000, 16, 0},
      {Op::reallocate, 2, 300, 256, 0}, {Op::allocate, 3, 64, 16, 0},  {Op::deallocate, 3, 64, 16, 0},
      {Op::deallocate, 1, 5000, 16, 0},
  };
  CHECK(parse_ok(r.trace()) == want);
  CHECK(r.deallocate(b));
  CHECK(r.sink_ok());
}

TEST_CASE("RecordingAllocator: expand, deallocate_all and forwarded queries") {
  RecordingAllocator<TestArena> r;
  Block a = r.allocate(16);
  Block b = r.allocate(20);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(r.expand(b, 0));                 // no change: no line
  CHECK(r.expand(b, 40));                // grows in place: r
  CHECK(b.size == 60);
  CHECK(!r.expand(a, 16));               // not the last block: fails, no line
  CHECK(r.owns(a) == alloy::Ternary::yes);
  CHECK(r.owns(Block{}) == alloy::Ternary::no);
  CHECK(r.deallocate_all());             // one d per live block, in id order
  CHECK(r.live_blocks() == 0);
  const std::vector<TraceEvent> want = {
      {Op::allocate, 1, 16, 16, 0},
      {Op::allocate, 2, 20, 16, 0},
      {Op::reallocate, 2, 60, 16, 0},
      {Op::deallocate, 1, 16, 16, 0},
      {Op::deallocate, 2, 60, 16, 0},
  };
  CHECK(parse_ok(r.trace()) == want);
}

TEST_CASE("RecordingAllocator: FILE* and ostream sinks write the same text as memory") {
  auto run = [](auto& r) {
    Block x = r.allocate(33);
    Block y = r.allocate(77);
    CHECK(r.reallocate(x, 99));
    CHECK(r.deallocate(y));
    CHECK(r.deallocate(x));
  };
  RecordingAllocator<alloy::Mallocator> mem;
  run(mem);
  std::ostringstream os;
  {
    RecordingAllocator<alloy::Mallocator> r(os);
    run(r);
  }
  CHECK(os.str() == mem.trace());
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  {
    RecordingAllocator<alloy::Mallocator> r(f);
    run(r);
    CHECK(r.trace().empty());  // not in memory
    CHECK(r.flush());
  }
  std::rewind(f);
  std::string text;
  char buf[256];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  CHECK(text == mem.trace());
}

TEST_CASE("RecordingAllocator: a failing sink does not change what the parent returns") {
  std::ostringstream os;
  os.setstate(std::ios::badbit);
  RecordingAllocator<alloy::Mallocator> r(os);
  CHECK(!r.sink_ok());  // the header already failed
  Block b = r.allocate(10);
  CHECK(b);
  CHECK(r.deallocate(b));
  CHECK(!r.flush());
}

TEST_CASE("RecordingAllocator: never touches the blocks (device parent)") {
  RecordingAllocator<alloy::NoAccessAllocator> r;
  Block b = r.allocate(5000);  // PROT_NONE pages: any host access would crash
  REQUIRE(b);
  CHECK(r.deallocate(b));
  CHECK(parse_ok(r.trace()).size() == 2);
}

TEST_CASE("RecordingAllocator: randomized run, the trace replays the live set exactly") {
  for (const std::size_t max_size : {64u, 4096u}) {
    RecordingAllocator<alloy::AlignedMallocator> r;
    alloy::test::DiffOptions o;
    o.ops = 150'000;
    o.max_size = max_size;
    o.seed += max_size;
    const auto st = alloy::test::run_differential(r, o);
    CHECK(st.failures == 0);
    const auto events = parse_ok(r.trace());  // the parser checks every id's life
    std::size_t allocs = 0, frees = 0, reallocs = 0;
    for (const TraceEvent& e : events) {
      allocs += e.op == Op::allocate;
      frees += e.op == Op::deallocate;
      reallocs += e.op == Op::reallocate;
    }
    CHECK(allocs - frees == r.live_blocks());
    CHECK(allocs >= st.allocations);  // reallocate from empty also allocates
    CHECK(reallocs > 1000);
    CHECK(frees > 1000);
  }
}

TEST_CASE("RecordingAllocator: threads are numbered and the trace stays consistent") {
  RecordingAllocator<alloy::Mallocator> r;
  constexpr int threads = 4, pairs = 3000;
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&r, t] {
      std::vector<Block> keep;
      for (int i = 0; i < pairs; ++i) {
        Block b = r.allocate(16 + static_cast<std::size_t>(t) * 8 + static_cast<std::size_t>(i % 5));
        if (i % 3 == 0) {
          keep.push_back(b);  // freed later: blocks cross in time between threads
        } else {
          r.deallocate(b);
        }
      }
      for (Block b : keep) r.deallocate(b);
    });
  for (auto& t : ts) t.join();
  const auto events = parse_ok(r.trace());  // addresses reused across threads must not confuse ids
  REQUIRE(events.size() == 2u * threads * pairs);
  std::vector<std::size_t> per_thread(threads, 0);
  for (const TraceEvent& e : events) {
    REQUIRE(e.thread < threads);
    ++per_thread[e.thread];
  }
  for (std::size_t n : per_thread) CHECK(n == 2u * pairs);
  CHECK(r.live_blocks() == 0);
}

namespace {
// A host heap with the stream-ordered primitives (the shape of CudaAsyncMallocator), to test their forwarding.
struct StreamHeap {
  static constexpr std::size_t alignment = alloy::platform_alignment;
  Block allocate(std::size_t n) noexcept { return alloy::Mallocator::instance.allocate(n); }
  bool deallocate(Block b) noexcept { return alloy::Mallocator::instance.deallocate(b); }
  Block allocate(alloy::stream_view, std::size_t n) noexcept { return allocate(n); }
  bool deallocate(alloy::stream_view, Block b) noexcept { return deallocate(b); }
};
static_assert(alloy::has_stream_ordered<StreamHeap>);
static_assert(alloy::has_stream_ordered<RecordingAllocator<StreamHeap>>);
static_assert(!alloy::has_stream_ordered<RecordingAllocator<alloy::Mallocator>>);
}  // namespace

TEST_CASE("RecordingAllocator: stream-ordered allocate and deallocate are recorded") {
  RecordingAllocator<StreamHeap> r;
  const alloy::stream_view s;
  Block a = r.allocate(s, 24);
  Block b = r.allocate(8);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(r.deallocate(s, b));
  CHECK(r.deallocate(s, a));
  const std::vector<TraceEvent> want = {
      {Op::allocate, 1, 24, 16, 0},
      {Op::allocate, 2, 8, 16, 0},
      {Op::deallocate, 2, 8, 16, 0},
      {Op::deallocate, 1, 24, 16, 0},
  };
  CHECK(parse_ok(r.trace()) == want);
}

// Every call to Parent is serialized, copy included (found in review: copy was not). Parent here is not thread-safe
// (a plain counter in allocate, deallocate and copy): under ThreadSanitizer an unserialized copy is a data race.
namespace {
struct Unsynchronized {
  static constexpr std::size_t alignment = 16;
  std::size_t calls = 0;
  Block allocate(std::size_t n) noexcept {
    ++calls;
    return alloy::Mallocator::instance.allocate(n);
  }
  bool deallocate(Block b) noexcept {
    ++calls;
    return alloy::Mallocator::instance.deallocate(b);
  }
  bool copy(void* d, const void* s, std::size_t n, alloy::stream_view) noexcept {
    ++calls;
    if (n) std::memmove(d, s, n);
    return true;
  }
};
}  // namespace
TEST_CASE("RecordingAllocator: copy is serialized with the other calls to Parent") {
  RecordingAllocator<Unsynchronized> r;
  char src[64] = "abc", dst[64] = {};
  int copied = 0;
  std::thread t([&] {
    for (int i = 0; i < 2000; ++i) copied += r.copy(dst, src, sizeof src, {});
  });
  for (int i = 0; i < 2000; ++i) CHECK(r.deallocate(r.allocate(32)));
  t.join();
  CHECK(copied == 2000);
  CHECK(r.parent().calls == 6000);
}

namespace {
// A heap that moves a block on every reallocate, even to the same size (realloc may), has allocate_fresh, and can be
// told to refuse deallocate: the recorder must follow a block's address and record only what succeeded.
struct Mover {
  static constexpr std::size_t alignment = alloy::platform_alignment;
  bool refuse = false;
  Block allocate(std::size_t n) noexcept { return alloy::AlignedMallocator::instance.allocate(n); }
  Block allocate_fresh(std::size_t n) noexcept { return allocate(n); }
  Block aligned_allocate(std::size_t n, std::size_t a) noexcept {
    return alloy::AlignedMallocator::instance.aligned_allocate(n, a);
  }
  bool deallocate(Block b) noexcept { return !refuse && alloy::AlignedMallocator::instance.deallocate(b); }
  bool reallocate(Block& b, std::size_t n) noexcept { return move(b, allocate(n), n); }
  bool aligned_reallocate(Block& b, std::size_t n, std::size_t a) noexcept {
    return move(b, aligned_allocate(n, a), n);
  }
  bool move(Block& b, Block nb, std::size_t n) noexcept {
    if (n != 0 && !nb) return false;
    if (b && nb) std::memcpy(nb.ptr, b.ptr, std::min(b.size, n));
    alloy::AlignedMallocator::instance.deallocate(b);
    b = nb;
    return true;
  }
};
}  // namespace

TEST_CASE("RecordingAllocator: a block that moves without changing size keeps its id and writes nothing") {
  RecordingAllocator<Mover> r;
  Block a = r.allocate(40);
  REQUIRE(a);
  const void* const first = a.ptr;
  CHECK(r.reallocate(a, 40));  // moves (the new block is taken before the old one is freed), same size: no line
  CHECK(a.ptr != first);
  CHECK(r.event_count() == 1);
  CHECK(r.deallocate(a));  // found at its new address
  Block b = r.allocate(40);
  REQUIRE(b);
  CHECK(r.aligned_reallocate(b, 40, 16));  // moves, same size and alignment: no line
  CHECK(r.deallocate(b));
  Block c = r.allocate(40);
  REQUIRE(c);
  CHECK(r.aligned_reallocate(c, 40, 4096));  // same size, alignment raised: r
  CHECK(r.deallocate(c));
  CHECK(r.live_blocks() == 0);
  const std::vector<TraceEvent> want = {
      {Op::allocate, 1, 40, 16, 0},   {Op::deallocate, 1, 40, 16, 0}, {Op::allocate, 2, 40, 16, 0},
      {Op::deallocate, 2, 40, 16, 0}, {Op::allocate, 3, 40, 16, 0},   {Op::reallocate, 3, 40, 4096, 0},
      {Op::deallocate, 3, 40, 4096, 0},
  };
  CHECK(parse_ok(r.trace()) == want);
}

TEST_CASE("RecordingAllocator: an aligned_reallocate that changes nothing writes nothing") {
  RecordingAllocator<alloy::AlignedMallocator> r;
  Block b = r.aligned_allocate(100, 256);
  REQUIRE(b);
  CHECK(r.aligned_reallocate(b, 100, 256));  // already so: the parent does nothing
  CHECK(r.aligned_reallocate(b, 100, 64));   // a weaker alignment: nothing either
  CHECK(r.event_count() == 1);
  CHECK(r.deallocate(b));
  CHECK(r.event_count() == 2);
}

TEST_CASE("RecordingAllocator: a deallocate that the parent refuses writes nothing") {
  RecordingAllocator<Mover> r;
  Block a = r.allocate(24);
  REQUIRE(a);
  r.parent().refuse = true;
  CHECK_FALSE(r.deallocate(a));
  CHECK(r.live_blocks() == 1);
  CHECK(r.event_count() == 1);
  r.parent().refuse = false;
  CHECK(r.deallocate(a));
  const std::vector<TraceEvent> want = {{Op::allocate, 1, 24, 16, 0}, {Op::deallocate, 1, 24, 16, 0}};
  CHECK(parse_ok(r.trace()) == want);
}

TEST_CASE("RecordingAllocator: the alignment recorded is at least Parent's") {
  RecordingAllocator<Mover> r;
  Block a = r.aligned_allocate(10, 4);  // below Parent::alignment: Parent's is what the caller may rely on
  Block f = r.allocate_fresh(8);
  REQUIRE(a);
  REQUIRE(f);
  CHECK(r.deallocate(a));
  CHECK(r.deallocate(f));
  const std::vector<TraceEvent> want = {
      {Op::allocate, 1, 10, 16, 0},
      {Op::allocate, 2, 8, 16, 0},
      {Op::deallocate, 1, 10, 16, 0},
      {Op::deallocate, 2, 8, 16, 0},
  };
  CHECK(parse_ok(r.trace()) == want);
}
