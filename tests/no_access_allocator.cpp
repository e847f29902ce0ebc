#include <alloy/no_access_allocator.hpp>

#include <csignal>
#include <algorithm>
#include <cstring>
#include <vector>

#include <doctest/doctest.h>

#include "support/child_process.hpp"
#include "support/conformance.hpp"
#include "support/differential.hpp"

using alloy::NoAccessAllocator;
static_assert(alloy::memory_space_of<NoAccessAllocator>() == alloy::MemorySpace::device);
static_assert(!alloy::host_accessible<NoAccessAllocator> && alloy::device_accessible<NoAccessAllocator>);
static_assert(alloy::has_copy<NoAccessAllocator> && alloy::has_owns<NoAccessAllocator>);

TEST_CASE("NoAccessAllocator: conformance") { alloy::test::check_allocator([] { return NoAccessAllocator{}; }); }

TEST_CASE("NoAccessAllocator: good_alloc_size is the page rounding, 0 only when it overflows") {
  const NoAccessAllocator a;
  CHECK(a.good_alloc_size(1) == 4096);
  CHECK(a.good_alloc_size(std::size_t{PTRDIFF_MAX} + 1) == std::size_t{PTRDIFF_MAX} + 1);  // no object fits, but
  CHECK(a.good_alloc_size(SIZE_MAX - 4095) == SIZE_MAX - 4095);                           // the hint still rounds
  CHECK(a.good_alloc_size(SIZE_MAX) == 0);
  CHECK(!a.allocate(std::size_t{PTRDIFF_MAX} + 1));  // allocate is what refuses
  CHECK(!a.allocate(SIZE_MAX - 4095));
}

TEST_CASE("NoAccessAllocator: randomized, contents through copy only") {
  NoAccessAllocator a;
  const std::size_t before = NoAccessAllocator::live_blocks();
  alloy::test::DiffOptions o;
  o.ops = 20'000;
  o.slots = 64;
  o.max_size = 3 * 4096;
  const auto st = alloy::test::run_differential(a, o);
  CHECK(st.failures == 0);
  CHECK(st.allocations > 1000);
  CHECK(NoAccessAllocator::live_blocks() == before);
}

// Runs f in a child process; returns the signal that ended it, or 0 if it exited normally.
template <class F>
int signal_of_child(F f) {
  return alloy::test::run_in_child(f).signal;
}

TEST_CASE("NoAccessAllocator: a host read or write crashes, copy does not") {
  NoAccessAllocator a;
  alloy::Block b = a.allocate(64);
  REQUIRE(b);
  CHECK(signal_of_child([&] { static_cast<volatile char*>(b.ptr)[0] = 1; }) == SIGSEGV);
  CHECK(signal_of_child([&] { (void)static_cast<volatile char*>(b.ptr)[63]; }) == SIGSEGV);
  CHECK(signal_of_child([&] {
          char buf[64] = "bytes";
          a.copy(b.ptr, buf, sizeof buf, {});
          a.copy(buf, b.ptr, sizeof buf, {});
        }) == 0);
  // After a copy the pages are closed again.
  char msg[] = "moved through copy";
  CHECK(a.copy(b.ptr, msg, sizeof msg, {}));
  CHECK(signal_of_child([&] { (void)static_cast<volatile char*>(b.ptr)[0]; }) == SIGSEGV);
  char back[sizeof msg] = {};
  CHECK(a.copy(back, b.ptr, sizeof msg, {}));
  CHECK(std::strcmp(back, msg) == 0);
  // device -> device
  alloy::Block c = a.allocate(64);
  CHECK(a.copy(c.ptr, b.ptr, sizeof msg, {}));
  std::memset(back, 0, sizeof back);
  CHECK(a.copy(back, c.ptr, sizeof msg, {}));
  CHECK(std::strcmp(back, msg) == 0);
  CHECK(a.deallocate(b));
  CHECK(a.deallocate(c));
}

TEST_CASE("NoAccessAllocator: copy refuses a range that runs past its mapping, and copies nothing") {
  NoAccessAllocator a;
  alloy::Block b = a.allocate(100);  // one page
  REQUIRE(b);
  char msg[] = "kept";
  REQUIRE(a.copy(b.ptr, msg, sizeof msg, {}));
  const std::size_t page = NoAccessAllocator::alignment;
  auto* last = static_cast<char*>(b.ptr) + page - 8;  // 8 bytes before the mapping's end
  std::vector<char> host(64, 'x');
  // Into, out of, and within the mapping: 64 bytes from 8 before its end. Each would fault (a child shows that
  // no call crashes), and each must refuse.
  CHECK(signal_of_child([&] {
          const bool refused = !a.copy(last, host.data(), 64, {}) && !a.copy(host.data(), last, 64, {}) &&
                               !a.copy(b.ptr, last, 64, {}) && !a.copy(last, b.ptr, 64, {});
          if (!refused) std::abort();  // SIGABRT: the check below fails
        }) == 0);
  CHECK_FALSE(a.copy(last, host.data(), 64, {}));
  CHECK(std::count(host.begin(), host.end(), 'x') == 64);  // nothing was read into host either
  CHECK_FALSE(a.copy(host.data(), last, 64, {}));
  CHECK(std::count(host.begin(), host.end(), 'x') == 64);
  // The exact tail still copies, and the start of the block was left alone.
  CHECK(a.copy(last, host.data(), 8, {}));
  char back[sizeof msg] = {};
  CHECK(a.copy(back, b.ptr, sizeof msg, {}));
  CHECK(std::strcmp(back, "kept") == 0);
  CHECK(a.deallocate(b));
}

TEST_CASE("NoAccessAllocator: live_bytes counts the bytes asked for until they are deallocated") {
  NoAccessAllocator a;
  const std::size_t blocks = NoAccessAllocator::live_blocks(), bytes = NoAccessAllocator::live_bytes();
  alloy::Block b = a.allocate(100);
  alloy::Block c = a.aligned_allocate(5000, std::size_t{1} << 16);
  REQUIRE(b);
  REQUIRE(c);
  CHECK(NoAccessAllocator::live_blocks() == blocks + 2);
  CHECK(NoAccessAllocator::live_bytes() == bytes + 5100);
  CHECK(a.deallocate(b));
  CHECK(NoAccessAllocator::live_bytes() == bytes + 5000);
  CHECK(a.deallocate(c));
  CHECK(NoAccessAllocator::live_bytes() == bytes);
  CHECK(NoAccessAllocator::live_blocks() == blocks);
}

TEST_CASE("NoAccessAllocator: copy within one mapping") {
  NoAccessAllocator a;
  alloy::Block b = a.allocate(200);
  REQUIRE(b);
  char msg[] = "within";
  REQUIRE(a.copy(b.ptr, msg, sizeof msg, {}));
  auto* mid = static_cast<char*>(b.ptr) + 100;
  // Source and destination in the same mapping: its pages must be writable for the memmove (a child shows that it
  // does not crash before the parent tries it).
  REQUIRE(signal_of_child([&] {
            if (!a.copy(mid, b.ptr, sizeof msg, {})) std::abort();
          }) == 0);
  CHECK(a.copy(mid, b.ptr, sizeof msg, {}));
  char back[sizeof msg] = {};
  CHECK(a.copy(back, mid, sizeof back, {}));
  CHECK(std::strcmp(back, msg) == 0);
  CHECK(a.deallocate(b));
}

TEST_CASE("NoAccessAllocator: after a copy out of a mapping its pages are closed again") {
  NoAccessAllocator a;
  alloy::Block b = a.allocate(64);
  REQUIRE(b);
  char msg[] = "source";
  REQUIRE(a.copy(b.ptr, msg, sizeof msg, {}));
  char back[sizeof msg] = {};
  CHECK(a.copy(back, b.ptr, sizeof msg, {}));  // b is the source: opened for reading, then closed
  CHECK(std::strcmp(back, msg) == 0);
  CHECK(signal_of_child([&] { (void)static_cast<volatile char*>(b.ptr)[0]; }) == SIGSEGV);
  alloy::Block c = a.allocate(64);
  REQUIRE(c);
  CHECK(a.copy(c.ptr, b.ptr, sizeof msg, {}));  // device to device: both closed again
  CHECK(signal_of_child([&] { (void)static_cast<volatile char*>(b.ptr)[0]; }) == SIGSEGV);
  CHECK(signal_of_child([&] { (void)static_cast<volatile char*>(c.ptr)[0]; }) == SIGSEGV);
  CHECK(a.deallocate(b));
  CHECK(a.deallocate(c));
}

TEST_CASE("NoAccessAllocator: host memory right after a mapping is not part of it") {
  NoAccessAllocator a;
  const std::size_t page = NoAccessAllocator::alignment;
  // An aligned block is trimmed out of a larger mapping, so the page after it is usually free: map host memory there.
  for (int attempt = 0; attempt < 8; ++attempt) {
    alloy::Block b = a.aligned_allocate(page, std::size_t{1} << 16);
    REQUIRE(b);
    void* const after = static_cast<char*>(b.ptr) + page;
    void* const h = ::mmap(after, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (h == after) {
      char msg[] = "host";
      CHECK(a.copy(after, msg, sizeof msg, {}));  // host to host: the range starts past the mapping's end
      CHECK(std::strcmp(static_cast<const char*>(after), "host") == 0);
      char back[sizeof msg] = {};
      CHECK(a.copy(back, after, sizeof msg, {}));
      CHECK(std::strcmp(back, "host") == 0);
      CHECK(::munmap(h, page) == 0);
      CHECK(a.deallocate(b));
      return;
    }
    if (h != MAP_FAILED) ::munmap(h, page);  // a kernel without MAP_FIXED_NOREPLACE may map it elsewhere
    CHECK(a.deallocate(b));
  }
  MESSAGE("no free page after a mapping: not checked");
}
