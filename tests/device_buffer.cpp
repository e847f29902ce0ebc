// device_buffer<A> on the CPU: over NoAccessAllocator (device memory the host must not touch: any host read or write
// of the buffer's bytes crashes the test), Mallocator, AlignedMallocator, and stateful / stream-ordered test
// allocators that record what the buffer asks of them. Stacks (BitmappedBlock, Region, AllocatorList over
// NoAccessAllocator) are in device_buffer_stacks.cpp.
#include <alloy/device_buffer.hpp>
#include <alloy/adapters/any_allocator.hpp>

#include <alloy/aligned_mallocator.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/null_allocator.hpp>

#include <cstdint>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "support/rng.hpp"

namespace {

using alloy::Block;
using alloy::device_buffer;
using alloy::NoAccessAllocator;
using alloy::stream_view;

stream_view fake_stream(std::uintptr_t id) { return stream_view(reinterpret_cast<CUstream_st*>(id)); }

// Reads a buffer's bytes through the allocator's copy (never a host dereference of device memory).
template <class A>
std::vector<unsigned char> read_back(const device_buffer<A>& b) {
  std::vector<unsigned char> out(b.size());
  if (b.size()) REQUIRE(alloy::detail::copy_with(b.allocator(), out.data(), b.data(), b.size(), b.stream()));
  return out;
}
std::vector<unsigned char> pattern(std::size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(seed * 131 + i * 7 + (i >> 8));
  return v;
}

// A stateful, stream-ordered allocator over NoAccessAllocator that records every call the buffer makes.
struct StreamRecorder {
  static constexpr std::size_t alignment = NoAccessAllocator::alignment;
  static constexpr alloy::MemorySpace memory_space = alloy::MemorySpace::device;
  NoAccessAllocator parent;
  std::vector<stream_view> alloc_streams, free_streams;
  int plain_allocs = 0, plain_frees = 0, copies = 0;
  bool fail = false;

  Block allocate(std::size_t n) noexcept {
    ++plain_allocs;
    return fail ? Block{} : parent.allocate(n);
  }
  bool deallocate(Block b) noexcept {
    ++plain_frees;
    return parent.deallocate(b);
  }
  Block allocate(stream_view s, std::size_t n) noexcept {
    alloc_streams.push_back(s);
    return fail ? Block{} : parent.allocate(n);
  }
  bool deallocate(stream_view s, Block b) noexcept {
    free_streams.push_back(s);
    return parent.deallocate(b);
  }
  bool copy(void* d, const void* s, std::size_t n, stream_view st) noexcept {
    ++copies;
    return parent.copy(d, s, n, st);
  }
};
static_assert(alloy::has_stream_ordered<StreamRecorder>);

// A stateful, plain allocator whose copy can be made to fail.
struct FlakyCopy {
  static constexpr std::size_t alignment = 16;
  int live = 0;
  bool fail_copy = false;
  Block allocate(std::size_t n) noexcept {
    Block b = alloy::Mallocator::instance.allocate(n);
    if (b) ++live;
    return b;
  }
  bool deallocate(Block b) noexcept {
    if (b) --live;
    return alloy::Mallocator::instance.deallocate(b);
  }
  bool copy(void* d, const void* s, std::size_t n, stream_view) noexcept {
    if (fail_copy) return false;
    if (n) std::memmove(d, s, n);
    return true;
  }
};

struct LeakCheck {
  std::size_t blocks = NoAccessAllocator::live_blocks();
  ~LeakCheck() { CHECK(NoAccessAllocator::live_blocks() == blocks); }
};

}  // namespace

// Layout: a stateless allocator costs nothing, a stateful one is one pointer.
static_assert(sizeof(device_buffer<NoAccessAllocator>) == 4 * sizeof(void*));
static_assert(sizeof(device_buffer<alloy::Mallocator>) == 4 * sizeof(void*));
static_assert(sizeof(device_buffer<alloy::NullAllocator>) == 4 * sizeof(void*));
static_assert(sizeof(device_buffer<StreamRecorder>) == 5 * sizeof(void*));
static_assert(!std::is_copy_constructible_v<device_buffer<NoAccessAllocator>>);
static_assert(!std::is_copy_assignable_v<device_buffer<NoAccessAllocator>>);
static_assert(std::is_nothrow_move_constructible_v<device_buffer<NoAccessAllocator>>);
static_assert(std::is_nothrow_move_assignable_v<device_buffer<NoAccessAllocator>>);
static_assert(std::is_nothrow_default_constructible_v<device_buffer<StreamRecorder>>);

TEST_CASE("device_buffer: default construction") {
  device_buffer<NoAccessAllocator> b;
  CHECK(b.data() == nullptr);
  CHECK(b.size() == 0);
  CHECK(b.ssize() == 0);
  CHECK(b.capacity() == 0);
  CHECK(b.is_empty());
  CHECK(b.stream().is_default());
  CHECK(b.alignment() == NoAccessAllocator::alignment);
  CHECK(!b.is_external());
}

TEST_CASE("device_buffer: sized construction over NoAccessAllocator") {
  LeakCheck leaks;
  const stream_view s = fake_stream(0x100);
  {
    device_buffer<NoAccessAllocator> b(1000, s);
    CHECK(b.data() != nullptr);
    CHECK(b.size() == 1000);
    CHECK(b.ssize() == 1000);
    CHECK(b.capacity() == 1000);
    CHECK(!b.is_empty());
    CHECK(b.stream() == s);
    CHECK(alloy::is_aligned(b.data(), 4096));
    CHECK(NoAccessAllocator::live_blocks() == leaks.blocks + 1);
    CHECK(NoAccessAllocator::instance.owns({b.data(), b.capacity()}) == alloy::Ternary::yes);
  }
  device_buffer<NoAccessAllocator> z(0, s);
  CHECK(z.data() == nullptr);
  CHECK(z.capacity() == 0);
  CHECK(z.is_empty());
}

TEST_CASE("device_buffer: construction from a source pointer") {
  LeakCheck leaks;
  const auto src = pattern(5000, 1);
  device_buffer<NoAccessAllocator> b(src.data(), src.size(), alloy::default_stream);
  CHECK(b.size() == src.size());
  CHECK(read_back(b) == src);

  device_buffer<NoAccessAllocator> empty(nullptr, 0, alloy::default_stream);  // null with size 0 is fine
  CHECK(empty.data() == nullptr);
  CHECK_THROWS_AS(device_buffer<NoAccessAllocator>(nullptr, 1, alloy::default_stream), alloy::logic_error);
  CHECK_THROWS_AS(device_buffer<NoAccessAllocator>(nullptr, 1, alloy::default_stream), std::logic_error);

  device_buffer<alloy::Mallocator> h(src.data(), src.size(), alloy::default_stream);
  CHECK(std::memcmp(h.data(), src.data(), src.size()) == 0);
}

TEST_CASE("device_buffer: alignment argument (RMM 26)") {
  LeakCheck leaks;
  const stream_view s{};
  CHECK_THROWS_AS(device_buffer<NoAccessAllocator>(64, 3, s), alloy::invalid_argument);
  CHECK_THROWS_AS(device_buffer<NoAccessAllocator>(64, 0, s), std::invalid_argument);
  {
    device_buffer<NoAccessAllocator> b(64, 1 << 16, s);  // NoAccessAllocator has aligned_allocate
    CHECK(alloy::is_aligned(b.data(), 1 << 16));
    CHECK(b.alignment() == (1 << 16));
    CHECK(b.capacity() == 64);
    b.resize(100000, s);  // keeps the alignment through a reallocation
    CHECK(alloy::is_aligned(b.data(), 1 << 16));
    CHECK(b.alignment() == (1 << 16));
    device_buffer<NoAccessAllocator> c(b, s);  // a copy keeps it too
    CHECK(alloy::is_aligned(c.data(), 1 << 16));
    CHECK(c.alignment() == (1 << 16));
    b.shrink_to_fit(s);
    CHECK(b.alignment() == (1 << 16));
  }
  device_buffer<NoAccessAllocator> small(64, 8, s);  // below A::alignment: A's own is enough
  CHECK(small.alignment() == 4096);
  // Mallocator cannot align beyond 16: bad_alloc, never a misaligned buffer.
  CHECK_THROWS_AS(device_buffer<alloy::Mallocator>(64, 64, s), alloy::bad_alloc);
  device_buffer<alloy::AlignedMallocator> al(64, 4096, s);
  CHECK(alloy::is_aligned(al.data(), 4096));
  const auto src = pattern(300, 2);
  device_buffer<alloy::AlignedMallocator> al2(src.data(), src.size(), 1024, s);
  CHECK(alloy::is_aligned(al2.data(), 1024));
  CHECK(std::memcmp(al2.data(), src.data(), src.size()) == 0);
}

TEST_CASE("device_buffer: resize") {
  LeakCheck leaks;
  const stream_view s1 = fake_stream(0x10), s2 = fake_stream(0x20);
  const auto src = pattern(3000, 3);
  device_buffer<NoAccessAllocator> b(src.data(), src.size(), s1);
  void* const p = b.data();
  b.resize(1000, s2);  // within capacity: only the size changes
  CHECK(b.data() == p);
  CHECK(b.size() == 1000);
  CHECK(b.capacity() == 3000);
  CHECK(b.stream() == s2);
  b.resize(3000, s1);  // back up to the capacity: still no reallocation, bytes kept
  CHECK(b.data() == p);
  CHECK(read_back(b) == src);
  b.resize(10000, s1);  // past the capacity: reallocate and copy the old size() bytes
  CHECK(b.size() == 10000);
  CHECK(b.capacity() == 10000);
  auto back = read_back(b);
  CHECK(std::equal(src.begin(), src.end(), back.begin()));
  b.resize(0, s1);
  CHECK(b.is_empty());
  CHECK(b.capacity() == 10000);
  CHECK(NoAccessAllocator::live_blocks() == leaks.blocks + 1);
}

TEST_CASE("device_buffer: reserve") {
  LeakCheck leaks;
  const auto src = pattern(100, 4);
  device_buffer<NoAccessAllocator> b(src.data(), src.size(), {});
  b.reserve(50, {});  // smaller: nothing happens
  CHECK(b.capacity() == 100);
  b.reserve(20000, {});
  CHECK(b.capacity() == 20000);
  CHECK(b.size() == 100);
  CHECK(read_back(b) == src);
  device_buffer<NoAccessAllocator> e;
  e.reserve(10, {});
  CHECK(e.capacity() == 10);
  CHECK(e.size() == 0);
  CHECK(e.data() != nullptr);
}

TEST_CASE("device_buffer: shrink_to_fit") {
  LeakCheck leaks;
  const auto src = pattern(5000, 5);
  device_buffer<NoAccessAllocator> b(src.data(), src.size(), {});
  b.resize(100, {});
  b.shrink_to_fit({});
  CHECK(b.capacity() == 100);
  CHECK(b.size() == 100);
  CHECK(read_back(b) == std::vector<unsigned char>(src.begin(), src.begin() + 100));
  void* const p = b.data();
  b.shrink_to_fit({});  // size == capacity: nothing happens
  CHECK(b.data() == p);
  b.resize(0, {});
  b.shrink_to_fit({});
  CHECK(b.data() == nullptr);
  CHECK(b.capacity() == 0);
  CHECK(NoAccessAllocator::live_blocks() == leaks.blocks);
}

TEST_CASE("device_buffer: deep copy, same allocator type") {
  LeakCheck leaks;
  const auto src = pattern(7000, 6);
  device_buffer<NoAccessAllocator> a(src.data(), src.size(), {});
  a.resize(5000, {});
  device_buffer<NoAccessAllocator> b(a, fake_stream(0x30));
  CHECK(b.data() != a.data());
  CHECK(b.size() == 5000);
  CHECK(b.capacity() == 5000);  // other.size(), not other.capacity()
  CHECK(b.stream() == fake_stream(0x30));
  CHECK(read_back(b) == read_back(a));
  device_buffer<NoAccessAllocator> e;
  device_buffer<NoAccessAllocator> ec(e, {});
  CHECK(ec.data() == nullptr);
}

TEST_CASE("device_buffer: deep copy across memory spaces") {
  LeakCheck leaks;
  const auto src = pattern(4321, 7);
  device_buffer<alloy::Mallocator> host(src.data(), src.size(), {});
  device_buffer<NoAccessAllocator> dev(host, {});  // host -> device: the device allocator's copy
  CHECK(dev.size() == src.size());
  CHECK(read_back(dev) == src);
  device_buffer<alloy::Mallocator> host2(dev, {});  // device -> host: the device allocator's copy, again
  CHECK(std::memcmp(host2.data(), src.data(), src.size()) == 0);
  device_buffer<alloy::AlignedMallocator> al(host2, {});  // host -> host: memmove
  CHECK(std::memcmp(al.data(), src.data(), src.size()) == 0);
  // An explicit alignment is kept across types when the destination can give it.
  device_buffer<NoAccessAllocator> big(64, 1 << 14, {});
  device_buffer<alloy::AlignedMallocator> al3(big, {});
  CHECK(alloy::is_aligned(al3.data(), 1 << 14));
  CHECK_THROWS_AS(device_buffer<alloy::Mallocator>(big, {}), alloy::bad_alloc);
  // A stateful destination.
  StreamRecorder rec;
  device_buffer<StreamRecorder> r(host, fake_stream(0x40), rec);
  CHECK(rec.copies == 1);
  CHECK(rec.alloc_streams == std::vector<stream_view>{fake_stream(0x40)});
  CHECK(read_back(r) == src);
  // Device -> a host allocator with a copy of its own (a memmove): the device side's copy reads the device memory
  // (found in review: the destination's memmove read it from the host and crashed).
  FlakyCopy flaky;
  device_buffer<FlakyCopy> h3(dev, {}, flaky);
  CHECK(std::memcmp(h3.data(), src.data(), src.size()) == 0);
  h3 = device_buffer<FlakyCopy>(0, {}, flaky);
  CHECK(flaky.live == 0);
  // An AnyAllocator's memory space is known only at run time (device at compile time): over host memory, a deep copy
  // out of device memory is the device side's copy too, from another allocator type and from another AnyAllocator
  // (found in review: the erased Mallocator's memmove read the device memory and crashed).
  alloy::AnyAllocator any_host{alloy::Mallocator{}}, any_dev{NoAccessAllocator{}};
  device_buffer<alloy::AnyAllocator> a1(dev, {}, any_host);  // device -> Any(host)
  CHECK(std::memcmp(a1.data(), src.data(), src.size()) == 0);
  device_buffer<alloy::AnyAllocator> a_dev(a1, {}, any_dev);  // Any(host) -> Any(device)
  CHECK(read_back(a_dev) == src);
  device_buffer<alloy::AnyAllocator> a2(a_dev, {}, any_host);  // Any(device) -> Any(host)
  CHECK(std::memcmp(a2.data(), src.data(), src.size()) == 0);
  device_buffer<alloy::Mallocator> h4(a_dev, {});  // Any(device) -> host
  CHECK(std::memcmp(h4.data(), src.data(), src.size()) == 0);
  device_buffer<NoAccessAllocator> d4(a2, {});  // Any(host) -> device
  CHECK(read_back(d4) == src);
}

TEST_CASE("device_buffer: move construction and assignment") {
  LeakCheck leaks;
  const stream_view s = fake_stream(0x50);
  device_buffer<NoAccessAllocator> a(100, s);
  void* const p = a.data();
  device_buffer<NoAccessAllocator> b(std::move(a));
  CHECK(b.data() == p);
  CHECK(b.size() == 100);
  CHECK(b.stream() == s);
  CHECK(a.data() == nullptr);  // NOLINT(bugprone-use-after-move): a moved-from buffer is valid and empty
  CHECK(a.size() == 0);
  CHECK(a.capacity() == 0);
  CHECK(a.stream().is_default());
  device_buffer<NoAccessAllocator> c(200, {});
  c = std::move(b);  // frees c's memory
  CHECK(c.data() == p);
  CHECK(c.stream() == s);
  CHECK(NoAccessAllocator::live_blocks() == leaks.blocks + 1);
  auto& same = c;  // through a reference: clang's -Wself-move rejects the spelled-out `c = std::move(c)`
  c = std::move(same);  // self-move is a no-op
  CHECK(c.data() == p);
  a = std::move(c);
  CHECK(a.data() == p);
}

TEST_CASE("device_buffer: stream-ordered allocator gets the buffer's stream") {
  LeakCheck leaks;
  StreamRecorder rec;
  const stream_view s1 = fake_stream(0x1), s2 = fake_stream(0x2), s3 = fake_stream(0x3);
  {
    device_buffer<StreamRecorder> b(100, s1, rec);
    CHECK(rec.alloc_streams == std::vector<stream_view>{s1});
    CHECK(&b.allocator() == &rec);
    b.resize(50, s2);  // no reallocation, but s2 becomes the stream
    CHECK(rec.alloc_streams.size() == 1);
    b.resize(200, s3);  // allocate on s3, copy on s3, free the old block on s3
    CHECK(rec.alloc_streams == std::vector<stream_view>{s1, s3});
    CHECK(rec.free_streams == std::vector<stream_view>{s3});
    b.set_stream(s2);
    CHECK(b.stream() == s2);
  }  // freed on the last stream set
  CHECK(rec.free_streams == std::vector<stream_view>{s3, s2});
  CHECK(rec.plain_allocs == 0);
  CHECK(rec.plain_frees == 0);
  {
    device_buffer<StreamRecorder> a(10, s1, rec), b(10, s2, rec);
    a = std::move(b);  // a's memory is freed on a's stream (s1); then a takes b's stream
    CHECK(rec.free_streams.back() == s1);
    CHECK(a.stream() == s2);
  }
  CHECK(rec.free_streams.back() == s2);
  // An explicit alignment above the allocator's goes through aligned_allocate; this one has none.
  CHECK_THROWS_AS(device_buffer<StreamRecorder>(10, 1 << 13, s1, rec), alloy::bad_alloc);
}

// A stream-ordered allocator that can also align: an over-aligned block comes from aligned_allocate (which has no
// stream) and goes back through deallocate(stream, b), which takes every block of the allocator (docs/primitives.md).
struct AligningStreamRecorder : StreamRecorder {
  int aligned_allocs = 0;
  Block aligned_allocate(std::size_t n, std::size_t a) noexcept {
    ++aligned_allocs;
    return parent.aligned_allocate(n, a);
  }
};
static_assert(alloy::has_stream_ordered<AligningStreamRecorder> && alloy::has_aligned_allocate<AligningStreamRecorder>);

TEST_CASE("device_buffer: an over-aligned block of a stream-ordered allocator is freed on the buffer's stream") {
  LeakCheck leaks;
  AligningStreamRecorder rec;
  const stream_view s1 = fake_stream(0x11), s2 = fake_stream(0x12);
  {
    device_buffer<AligningStreamRecorder> b(100, 1 << 14, s1, rec);
    CHECK(alloy::is_aligned(b.data(), 1 << 14));
    CHECK(rec.aligned_allocs == 1);
    CHECK(rec.alloc_streams.empty());
    CHECK(NoAccessAllocator::live_blocks() == leaks.blocks + 1);
    b.resize(1 << 16, s2);  // the new block is aligned again; the old one goes back on s2
    CHECK(alloy::is_aligned(b.data(), 1 << 14));
    CHECK(rec.aligned_allocs == 2);
    CHECK(rec.free_streams == std::vector<stream_view>{s2});
    CHECK(NoAccessAllocator::live_blocks() == leaks.blocks + 1);
  }
  CHECK(rec.free_streams == std::vector<stream_view>{s2, s2});
  CHECK(rec.plain_allocs == 0);
  CHECK(rec.plain_frees == 0);
  CHECK(rec.alloc_streams.empty());
}

TEST_CASE("device_buffer: allocation failure throws alloy::bad_alloc, the buffer is unchanged") {
  LeakCheck leaks;
  CHECK_THROWS_AS(device_buffer<alloy::NullAllocator>(16, {}), alloy::bad_alloc);
  CHECK_THROWS_AS(device_buffer<alloy::NullAllocator>(16, {}), std::bad_alloc);
  CHECK_THROWS_AS(device_buffer<NoAccessAllocator>(device_buffer<NoAccessAllocator>::max_capacity + 1, {}),
                  alloy::bad_alloc);
  StreamRecorder rec;
  const auto src = pattern(64, 8);
  device_buffer<StreamRecorder> b(src.data(), src.size(), {}, rec);
  void* const p = b.data();
  rec.fail = true;
  CHECK_THROWS_AS(b.resize(1 << 20, {}), alloy::bad_alloc);
  CHECK_THROWS_AS(b.reserve(1 << 20, {}), alloy::bad_alloc);
  b.resize(10, {});
  CHECK_THROWS_AS(b.shrink_to_fit({}), alloy::bad_alloc);
  CHECK(b.data() == p);
  CHECK(b.size() == 10);
  CHECK(b.capacity() == 64);
  rec.fail = false;
  b.resize(64, {});
  CHECK(read_back(b) == src);
}

TEST_CASE("device_buffer: copy failure throws alloy::cuda_error and frees the new memory") {
  FlakyCopy f;
  const auto src = pattern(64, 9);
  {
    device_buffer<FlakyCopy> b(src.data(), src.size(), {}, f);
    CHECK(f.live == 1);
    f.fail_copy = true;
    CHECK_THROWS_AS(b.resize(1000, {}), alloy::cuda_error);
    CHECK(f.live == 1);
    CHECK(b.capacity() == 64);
    try {
      device_buffer<FlakyCopy> c(b, {});
      FAIL("no exception");
    } catch (const alloy::cuda_error& e) {
      CHECK(e.code() == -1);  // not a CUDA copy
    }
    CHECK_THROWS_AS(device_buffer<FlakyCopy>(src.data(), src.size(), {}, f), alloy::cuda_error);
    CHECK(f.live == 1);
    f.fail_copy = false;
    CHECK(std::memcmp(b.data(), src.data(), src.size()) == 0);
  }
  CHECK(f.live == 0);
}

TEST_CASE("device_buffer: a default-constructed buffer of a stateful allocator has no allocator") {
  StreamRecorder rec;  // declared first: it must outlive the buffers that use it
  device_buffer<StreamRecorder> b;
  CHECK_THROWS_AS(b.resize(10, {}), alloy::logic_error);
  b.resize(0, {});  // nothing to allocate: fine
  device_buffer<StreamRecorder> c(b, {});  // copying an empty one: fine
  CHECK(c.data() == nullptr);
  b = device_buffer<StreamRecorder>(0, {}, rec);  // now it has one
  b.resize(10, {});
  CHECK(b.capacity() == 10);
}

TEST_CASE("device_buffer: external memory is wrapped, never freed") {
  LeakCheck leaks;
  const auto src = pattern(8192, 10);
  Block ext = NoAccessAllocator::instance.allocate(8192);
  REQUIRE(ext);
  REQUIRE(NoAccessAllocator::instance.copy(ext.ptr, src.data(), src.size(), {}));
  {
    device_buffer<NoAccessAllocator> b(alloy::external_memory, ext.ptr, ext.size, {});
    CHECK(b.is_external());
    CHECK(b.data() == ext.ptr);
    CHECK(b.size() == 8192);
    CHECK(b.capacity() == 8192);
    CHECK(read_back(b) == src);
    device_buffer<NoAccessAllocator> copy(b, {});  // a deep copy owns its memory
    CHECK(!copy.is_external());
    CHECK(read_back(copy) == src);
    device_buffer<NoAccessAllocator> moved(std::move(b));  // the flag moves with the memory
    CHECK(moved.is_external());
    CHECK(!b.is_external());  // NOLINT(bugprone-use-after-move): a moved-from buffer is empty
  }
  CHECK(NoAccessAllocator::instance.owns(ext) == alloy::Ternary::yes);  // still ours
  {
    device_buffer<NoAccessAllocator> b(alloy::external_memory, ext.ptr, 100, {});
    b.reserve(20000, {});  // grows into owned memory; the external bytes are copied, not freed
    CHECK(!b.is_external());
    CHECK(b.data() != ext.ptr);
    CHECK(read_back(b) == std::vector<unsigned char>(src.begin(), src.begin() + 100));
  }
  CHECK(NoAccessAllocator::instance.owns(ext) == alloy::Ternary::yes);
  CHECK(NoAccessAllocator::instance.deallocate(ext));
  // Host memory, under-aligned: alignment() reports what the address guarantees.
  alignas(64) static unsigned char raw[256];
  device_buffer<alloy::AlignedMallocator> h(alloy::external_memory, raw + 4, 100, {});
  CHECK(h.alignment() == 4);
  h.shrink_to_fit({});  // size == capacity: stays external
  CHECK(h.is_external());
  h.resize(10, {});
  h.shrink_to_fit({});  // moves into owned memory, with the allocator's alignment
  CHECK(!h.is_external());
  CHECK(h.alignment() == alloy::AlignedMallocator::alignment);
  CHECK_THROWS_AS(device_buffer<NoAccessAllocator>(alloy::external_memory, nullptr, 1, {}), alloy::logic_error);
  // Emptied, then shrunk: no memory, and the external pointer's alignment goes with it (found in review: it stayed,
  // and the next growth asked Mallocator, which has no aligned_allocate, for 8-byte alignment and threw).
  alignas(16) static unsigned char raw16[64];
  device_buffer<alloy::Mallocator> m(alloy::external_memory, raw16 + 8, 32, {});
  CHECK(m.alignment() == 8);
  m.resize(0, {});
  m.shrink_to_fit({});
  CHECK(!m.is_external());
  CHECK(m.data() == nullptr);
  CHECK(m.capacity() == 0);
  CHECK(m.alignment() == alloy::Mallocator::alignment);
  m.resize(10, {});
  CHECK(m.size() == 10);
  CHECK(alloy::is_aligned(m.data(), alloy::Mallocator::alignment));
  // An owned buffer with an explicit alignment keeps it when emptied and shrunk.
  device_buffer<alloy::AlignedMallocator> ex(64, 4096, {});
  ex.resize(0, {});
  ex.shrink_to_fit({});
  CHECK(ex.alignment() == 4096);
  ex.resize(10, {});
  CHECK(alloy::is_aligned(ex.data(), 4096));
}

TEST_CASE("device_buffer: randomized operations against a host model") {
  LeakCheck leaks;
  alloy::test::Rng rng{0xdb0fu};
  device_buffer<NoAccessAllocator> b;
  std::vector<unsigned char> model;
  std::size_t cap = 0;
  for (int step = 0; step < 3000; ++step) {
    const auto op = rng.below(6);
    const std::size_t n = rng.below(3) == 0 ? 0 : rng.below(20000);
    if (op == 0) {
      const auto src = pattern(n, static_cast<unsigned>(step));
      b = device_buffer<NoAccessAllocator>(src.data(), src.size(), {});
      model = src;
      cap = n;
    } else if (op == 1) {
      const std::size_t old = model.size();
      b.resize(n, {});
      if (n > cap) cap = n;
      model.resize(n);
      if (n > old) {  // new bytes are uninitialized: write them through copy so the model can check them
        const auto fill = pattern(n - old, static_cast<unsigned>(step));
        REQUIRE(NoAccessAllocator::instance.copy(static_cast<char*>(b.data()) + old, fill.data(), fill.size(), {}));
        std::copy(fill.begin(), fill.end(), model.begin() + static_cast<std::ptrdiff_t>(old));
      }
    } else if (op == 2) {
      b.reserve(n, {});
      if (n > cap) cap = n;
    } else if (op == 3) {
      b.shrink_to_fit({});
      cap = model.size();
    } else if (op == 4) {
      device_buffer<NoAccessAllocator> c(b, {});
      b = std::move(c);
      cap = model.size();
    } else {
      device_buffer<alloy::Mallocator> h(b, {});
      REQUIRE(h.size() == model.size());
      if (!model.empty()) CHECK(std::memcmp(h.data(), model.data(), model.size()) == 0);
      b = device_buffer<NoAccessAllocator>(h, {});
      cap = model.size();
    }
    REQUIRE(b.size() == model.size());
    REQUIRE(b.capacity() == cap);
    if (step % 16 == 0) REQUIRE(read_back(b) == model);
  }
}

// An explicit alignment equal to A::alignment is A's own: it needs no aligned_allocate (Mallocator has none).
TEST_CASE("device_buffer: an explicit alignment equal to A::alignment is A's own") {
  const stream_view s{};
  device_buffer<alloy::Mallocator> m(64, alloy::Mallocator::alignment, s);
  CHECK(m.capacity() == 64);
  CHECK(m.alignment() == alloy::Mallocator::alignment);
  const auto src = pattern(40, 11);
  device_buffer<alloy::Mallocator> m2(src.data(), src.size(), alloy::Mallocator::alignment, s);
  CHECK(std::memcmp(m2.data(), src.data(), src.size()) == 0);
  device_buffer<alloy::Mallocator> m3(m2, s);  // a copy asks for no explicit alignment either
  CHECK(m3.alignment() == alloy::Mallocator::alignment);
}

// max_capacity is the largest capacity a buffer records: itself allowed, one more refused (external memory: nothing
// is allocated or touched, so the bound is checked alone).
TEST_CASE("device_buffer: max_capacity itself is a valid capacity") {
  using B = device_buffer<alloy::Mallocator>;
  alignas(16) static unsigned char raw[16];
  B b(alloy::external_memory, raw, B::max_capacity, {});
  CHECK(b.is_external());
  CHECK(b.size() == B::max_capacity);
  CHECK(b.capacity() == B::max_capacity);
  CHECK(b.alignment() == alloy::Mallocator::alignment);
  CHECK_THROWS_AS(B(alloy::external_memory, raw, B::max_capacity + 1, {}), alloy::bad_alloc);
}

// Memory wrapped as external is never freed by the buffer, whatever ends it (destruction, move assignment over it,
// growth into owned memory): checked at run time through the parent's records (a mutation sweep found this caught
// only by GCC's -Wfree-nonheap-object on the static buffers of the other cases).
TEST_CASE("device_buffer: external memory from an allocator stays the caller's") {
  LeakCheck leaks;
  NoAccessAllocator dev;
  const Block mem = dev.allocate(4096);
  REQUIRE(mem);
  {
    device_buffer<NoAccessAllocator> b(alloy::external_memory, mem.ptr, 100, {});
    CHECK(b.is_external());
  }
  CHECK(dev.owns(mem) == alloy::Ternary::yes);
  {
    device_buffer<NoAccessAllocator> b(alloy::external_memory, mem.ptr, 100, {});
    b = device_buffer<NoAccessAllocator>(10, {});
  }
  CHECK(dev.owns(mem) == alloy::Ternary::yes);
  {
    device_buffer<NoAccessAllocator> b(alloy::external_memory, mem.ptr, 100, {});
    b.resize(5000, {});  // past the capacity: the bytes move into owned memory
    CHECK(!b.is_external());
  }
  CHECK(dev.owns(mem) == alloy::Ternary::yes);
  CHECK(dev.deallocate(mem));
}

// Bad input at the edges (issue 23): sizes past max_capacity, a size the allocator cannot serve, alignments that are
// not powers of two or that no heap can give, null and misaligned pointers. Each throws what the docs say, leaves a
// buffer it was called on as it was, and leaks nothing (the asan preset runs LSan).
TEST_CASE("device_buffer: bad input at the edges") {
  using HostBuffer = device_buffer<alloy::AlignedMallocator>;
  for (std::size_t n : {SIZE_MAX, SIZE_MAX / 2 + 1, HostBuffer::max_capacity + 1}) {
    CAPTURE(n);
    CHECK_THROWS_AS(HostBuffer(n, alloy::default_stream), alloy::bad_alloc);
    CHECK_THROWS_AS(HostBuffer(n, 64, alloy::default_stream), alloy::bad_alloc);
    const char src[4] = {1, 2, 3, 4};
    CHECK_THROWS_AS(HostBuffer(src, n, alloy::default_stream), alloy::bad_alloc);
  }
  // Within max_capacity, but more than any mapping gives: the allocator's empty Block becomes bad_alloc. (Not asked
  // of the C heap: under ASan a malloc of 2^56 bytes is a fatal report, not a null.)
  CHECK_THROWS_AS(device_buffer<NoAccessAllocator>(HostBuffer::max_capacity, alloy::default_stream), alloy::bad_alloc);
  CHECK_THROWS_AS(device_buffer<alloy::NullAllocator>(1, alloy::default_stream), alloy::bad_alloc);
  // Alignments: not a power of two (0 included) is invalid_argument; one no heap can give is bad_alloc.
  for (std::size_t al : {std::size_t{0}, std::size_t{3}, std::size_t{48}, SIZE_MAX})
    CHECK_THROWS_AS(HostBuffer(16, al, alloy::default_stream), alloy::invalid_argument);
  CHECK_THROWS_AS(HostBuffer(16, std::size_t{1} << 63, alloy::default_stream), alloy::bad_alloc);
  // Null pointers with a nonzero size.
  CHECK_THROWS_AS(HostBuffer(nullptr, 8, alloy::default_stream), alloy::logic_error);
  CHECK_THROWS_AS(HostBuffer(alloy::external_memory, nullptr, 8, {}), alloy::logic_error);
  CHECK(HostBuffer(alloy::external_memory, nullptr, 0, {}).data() == nullptr);
  // reserve and resize past what can be had: the buffer keeps its memory, size and bytes.
  HostBuffer b(10, alloy::default_stream);
  std::memset(b.data(), 7, 10);
  void* const before = b.data();
  for (std::size_t n : {SIZE_MAX, HostBuffer::max_capacity + 1}) {
    CHECK_THROWS_AS(b.reserve(n, alloy::default_stream), alloy::bad_alloc);
    CHECK_THROWS_AS(b.resize(n, alloy::default_stream), alloy::bad_alloc);
    CHECK((b.data() == before && b.size() == 10 && b.capacity() == 10));
  }
  CHECK(static_cast<unsigned char*>(b.data())[9] == 7);
  // A misaligned external pointer: the buffer reports the alignment it really has, and growing it draws fresh,
  // aligned memory from the allocator (the external bytes are never freed).
  alignas(64) unsigned char raw[64] = {};
  HostBuffer e(alloy::external_memory, raw + 3, 20, {});
  CHECK(e.alignment() == 1);
  e.resize(200, alloy::default_stream);
  CHECK(alloy::is_aligned(e.data(), alloy::AlignedMallocator::alignment));
}
