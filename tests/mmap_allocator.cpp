#include <alloy/mmap_allocator.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <doctest/doctest.h>

#include "support/conformance.hpp"
#include "support/differential.hpp"
#include "support/rng.hpp"
#include "support/threads.hpp"

using alloy::Block;

using alloy::MmapAllocator;
constexpr std::size_t page = 4096;

static_assert(alloy::allocator<MmapAllocator> && alloy::has_deallocate<MmapAllocator> &&
              alloy::has_aligned_allocate<MmapAllocator> && alloy::has_good_alloc_size<MmapAllocator>);
static_assert(alloy::has_expand<MmapAllocator> && alloy::has_reallocate<MmapAllocator>);  // Linux: mremap
static_assert(!alloy::has_owns<MmapAllocator> && !alloy::has_aligned_reallocate<MmapAllocator> &&
              !alloy::has_deallocate_all<MmapAllocator> && !alloy::has_empty<MmapAllocator>);
static_assert(alloy::has_instance<MmapAllocator> && alloy::stateless_allocator<MmapAllocator>);
static_assert(MmapAllocator::alignment == page);

// Whether [p, p + n) is mapped (msync fails with ENOMEM on unmapped pages).
static bool mapped(const void* p, std::size_t n) { return ::msync(const_cast<void*>(p), n, MS_ASYNC) == 0; }

TEST_CASE("MmapAllocator: the alignment is the page size") {
  CHECK(static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) == MmapAllocator::alignment);
}

TEST_CASE("MmapAllocator: conformance") {
  alloy::test::check_allocator([] { return MmapAllocator{}; });
}

TEST_CASE("MmapAllocator: whole pages, zero-filled, unmapped on deallocate") {
  const MmapAllocator& m = MmapAllocator::instance;
  CHECK(m.good_alloc_size(0) == 0);
  CHECK(m.good_alloc_size(1) == page);
  CHECK(m.good_alloc_size(page + 1) == 2 * page);
  CHECK(m.good_alloc_size(SIZE_MAX - page + 2) == 0);  // rounding overflows
  // Above PTRDIFF_MAX the hint is still the rounding (0 only when it overflows); allocate refuses such sizes.
  CHECK(m.good_alloc_size(std::size_t{PTRDIFF_MAX} + 1) == std::size_t{PTRDIFF_MAX} + 1);
  CHECK(m.good_alloc_size(SIZE_MAX - page + 1) == SIZE_MAX - page + 1);
  CHECK(m.good_alloc_size(std::size_t{PTRDIFF_MAX} - page + 1) == std::size_t{PTRDIFF_MAX} + 1 - page);
  CHECK(!m.allocate(std::size_t{PTRDIFF_MAX} + 1));
  CHECK(!m.aligned_allocate(std::size_t{PTRDIFF_MAX} + 1, 2 * page));
  CHECK(!m.allocate(0));
  CHECK(!m.allocate(SIZE_MAX));
  CHECK(!m.allocate(SIZE_MAX / 2 + 1));
  Block b = m.allocate(3 * page + 1);
  REQUIRE(b);
  CHECK(b.size == 3 * page + 1);
  CHECK(mapped(b.ptr, 4 * page));
  const auto* c = static_cast<const unsigned char*>(b.ptr);
  for (std::size_t i = 0; i < 4 * page; i += 97) CHECK(c[i] == 0);
  std::memset(b.ptr, 1, 4 * page);  // the whole last page is usable
  CHECK(m.deallocate(b));
  CHECK(!mapped(b.ptr, page));
  CHECK(!mapped(static_cast<char*>(b.ptr) + 3 * page, page));  // the partial page went too
  CHECK(m.deallocate({}));
}

TEST_CASE("MmapAllocator: aligned_allocate trims the slack") {
  MmapAllocator m;
  for (std::size_t al : {std::size_t{1}, std::size_t{64}, page, 2 * page, std::size_t{1} << 16, std::size_t{1} << 21}) {
    Block b = m.aligned_allocate(3 * page, al);
    REQUIRE(b);
    CHECK(alloy::is_aligned(b.ptr, al < page ? page : al));
    CHECK(mapped(b.ptr, 3 * page));
    std::memset(b.ptr, 2, 3 * page);
    const Block before = b;
    if (m.expand(b, page)) {  // whichever way it goes, the block stays valid
      CHECK(b.size == 4 * page);
      CHECK(mapped(b.ptr, 4 * page));
    } else {
      CHECK(b == before);
    }
    CHECK(m.deallocate(b));
    CHECK(!mapped(b.ptr, page));
  }
  CHECK(!m.aligned_allocate(page, 3 * page));  // not a power of two
  CHECK(!m.aligned_allocate(0, 1 << 16));
  CHECK(!m.aligned_allocate(page, std::size_t{1} << 63));  // map_len overflows / too large
  CHECK(!m.aligned_allocate(SIZE_MAX - page, 1 << 16));
}

TEST_CASE("MmapAllocator: expand in place with mremap") {
  MmapAllocator m;
  // Make room: map 4 pages, keep the first as the block, unmap the other 3.
  void* p = ::mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  REQUIRE(::munmap(static_cast<char*>(p) + page, 3 * page) == 0);
  Block b{p, 100};
  std::memset(p, 5, 100);
  CHECK(m.expand(b, 0));
  CHECK(m.expand(b, page - 100));  // within the page: no system call
  CHECK(b.size == page);
  CHECK(m.expand(b, 2 * page + 1));  // into the free pages: in place
  CHECK(b.ptr == p);
  CHECK(b.size == 3 * page + 1);
  CHECK(mapped(p, 4 * page));
  CHECK(static_cast<unsigned char*>(p)[99] == 5);
  CHECK(static_cast<unsigned char*>(p)[3 * page] == 0);
  const Block before = b;
  CHECK_FALSE(m.expand(b, SIZE_MAX));
  CHECK_FALSE(m.expand(b, SIZE_MAX - b.size));
  CHECK(b == before);
  Block z{};
  CHECK(m.expand(z, 0));
  CHECK_FALSE(m.expand(z, 1));
  CHECK(m.deallocate(b));
  CHECK(!mapped(p, page));
}

TEST_CASE("MmapAllocator: expand fails when the next page is taken; reallocate moves") {
  MmapAllocator m;
  void* p = ::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  void* const guard = static_cast<char*>(p) + page;  // stays mapped: the block cannot grow into it
  Block b{p, page};
  std::memset(p, 9, page);
  const Block before = b;
  CHECK_FALSE(m.expand(b, 1));
  CHECK(b == before);
  CHECK(mapped(guard, page));
  REQUIRE(m.reallocate(b, 5 * page));  // MREMAP_MAYMOVE
  CHECK(b.ptr != p);
  CHECK(b.size == 5 * page);
  CHECK(static_cast<unsigned char*>(b.ptr)[page - 1] == 9);
  CHECK(static_cast<unsigned char*>(b.ptr)[page] == 0);
  CHECK(!mapped(p, page));  // the old pages moved away
  CHECK(mapped(guard, page));
  void* const q = b.ptr;
  REQUIRE(m.reallocate(b, page + 1));  // shrinking stays in place
  CHECK(b.ptr == q);
  CHECK(!mapped(static_cast<char*>(q) + 2 * page, page));
  REQUIRE(m.reallocate(b, 10));
  CHECK(b.ptr == q);
  CHECK(static_cast<unsigned char*>(b.ptr)[9] == 9);
  const Block kept = b;
  CHECK_FALSE(m.reallocate(b, SIZE_MAX));
  CHECK(b == kept);
  CHECK(m.reallocate(b, 0));
  CHECK(!b);
  CHECK(!mapped(q, page));
  CHECK(m.reallocate(b, 0));         // empty to empty
  CHECK(m.reallocate(b, 3 * page));  // empty: allocates
  CHECK(b.size == 3 * page);
  CHECK(m.deallocate(b));
  CHECK(::munmap(guard, page) == 0);
}

TEST_CASE("MmapAllocator: randomized against the invariants") {
  MmapAllocator m;
  alloy::test::DiffOptions o;
  o.ops = 30'000;
  o.slots = 64;
  o.max_size = 5 * page;
  o.max_alignment = 1 << 16;
  const auto st = alloy::test::run_differential(m, o);
  CHECK(st.failures == 0);
  CHECK(st.expansions > 100);
  CHECK(st.reallocations > 1000);
}

// Not labelled tsan: TSan does not see the kernel order between one thread's munmap and another's mmap of the same
// pages, and reports false races on reused addresses. Default and ASan builds run it.
TEST_CASE("MmapAllocator: thread-safe (4 threads allocate, resize, check and free at once)") {
  const MmapAllocator& a = MmapAllocator::instance;
  for (int e : alloy::test::stress_threads(a, [](std::size_t n) { return std::size_t{1} << (12 + n % 6); })) CHECK(e == 0);
}

// The process's virtual memory in KiB (VmSize in /proc/self/status), read without allocating.
static std::size_t vm_size_kib() {
  char buf[8192] = {};
  const int fd = ::open("/proc/self/status", O_RDONLY);
  REQUIRE(fd >= 0);
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  REQUIRE(n > 0);
  const char* v = std::strstr(buf, "VmSize:");
  REQUIRE(v != nullptr);
  return std::strtoull(v + 7, nullptr, 10);
}

TEST_CASE("MmapAllocator: aligned_allocate unmaps all of the slack") {
  MmapAllocator m;
  constexpr std::size_t count = 16;
  Block blocks[count];
  const std::size_t before = vm_size_kib();
  // Sizes of 1 to 16 pages: the over-mapped runs start at different offsets from a 2 MiB boundary, so each has slack
  // before the block, after it, or both.
  for (std::size_t i = 0; i < count; ++i) blocks[i] = m.aligned_allocate((i + 1) * page, std::size_t{1} << 21);
  const std::size_t after = vm_size_kib();
  std::size_t want = 0;
  for (std::size_t i = 0; i < count; ++i) {
    REQUIRE(blocks[i]);
    want += (i + 1) * page;
  }
  CHECK(after - before == want / 1024);  // exactly the blocks' pages stay mapped
  for (const Block& b : blocks) CHECK(m.deallocate(b));
}
