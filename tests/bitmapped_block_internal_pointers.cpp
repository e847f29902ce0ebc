// BitmappedBlockWithInternalPointers: conformance, D's scenario, "yes only for live blocks", device parents.
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>

#include <cstddef>
#include <vector>

#include <doctest/doctest.h>

#include "support/conformance.hpp"

using alloy::Block;
using alloy::BitmappedBlockWithInternalPointers;
using alloy::Mallocator;
using alloy::NoAccessAllocator;
using alloy::Ternary;

static_assert(alloy::has_resolve_internal_pointer<BitmappedBlockWithInternalPointers<64>>);
static_assert(alloy::has_allocate_all<BitmappedBlockWithInternalPointers<64>>);
static_assert(alloy::memory_space_of<BitmappedBlockWithInternalPointers<64, 64, NoAccessAllocator>>() ==
              alloy::MemorySpace::device);

TEST_CASE_TEMPLATE("BitmappedBlockWithInternalPointers: conformance", A,
                   BitmappedBlockWithInternalPointers<64, 16, Mallocator>,
                   BitmappedBlockWithInternalPointers<4096, 16, Mallocator>,
                   BitmappedBlockWithInternalPointers<256, 64, NoAccessAllocator>) {
  alloy::test::check_allocator([] { return A(256 * 1024); });
}

TEST_CASE("BitmappedBlockWithInternalPointers: D's scenario") {
  std::vector<std::byte> mem(4096 * 1024);
  BitmappedBlockWithInternalPointers<4096> h{std::span<std::byte>(mem)};
  CHECK(h.empty() == Ternary::yes);
  Block b = h.allocate(123);
  CHECK(b.size == 123);
  CHECK(h.empty() == Ternary::no);
  Block p{};
  CHECK(h.resolve_internal_pointer(static_cast<char*>(b.ptr) + 17, p) == Ternary::yes);
  CHECK(p.ptr == b.ptr);
  CHECK(p.size >= b.size);
  b = h.allocate(4096);
  CHECK(h.resolve_internal_pointer(b.ptr, p) == Ternary::yes);
  CHECK(p == b);
  CHECK(h.resolve_internal_pointer(static_cast<char*>(b.ptr) + 11, p) == Ternary::yes);
  CHECK(p == b);
  const Block unchanged = p;
  CHECK(h.resolve_internal_pointer(static_cast<char*>(b.ptr) - 40'970, p) == Ternary::no);
  CHECK(p == unchanged);
  CHECK(h.expand(b, 1));
  CHECK(b.size == 4097);
  CHECK(h.resolve_internal_pointer(static_cast<char*>(b.ptr) + 4096, p) == Ternary::yes);
  CHECK(p.ptr == b.ptr);
  CHECK(p.size == 8192);
  CHECK(h.deallocate(b));
  CHECK(h.good_alloc_size(1) == 4096);
}

TEST_CASE("BitmappedBlockWithInternalPointers: yes only for live allocations, each resolved to its own blocks") {
  std::vector<std::byte> mem(64 * 1024);
  BitmappedBlockWithInternalPointers<64> h{std::span<std::byte>(mem)};
  Block a = h.allocate(64 * 3), b = h.allocate(64 * 2), c = h.allocate(64 * 70);
  Block r{};
  CHECK(h.resolve_internal_pointer(static_cast<char*>(b.ptr) + 64, r) == Ternary::yes);
  CHECK(r == b);  // adjacent allocations do not merge
  CHECK(h.resolve_internal_pointer(static_cast<char*>(c.ptr) + 64 * 69 + 5, r) == Ternary::yes);
  CHECK(r == c);
  CHECK(h.deallocate(b));
  CHECK(h.resolve_internal_pointer(b.ptr, r) == Ternary::no);  // D answers yes for a freed block
  Block d = h.allocate(64);                                    // b's first block again
  CHECK(d.ptr == b.ptr);
  CHECK(h.resolve_internal_pointer(static_cast<char*>(b.ptr) + 64, r) == Ternary::no);  // b's second block: free
  CHECK(h.resolve_internal_pointer(static_cast<char*>(d.ptr) + 63, r) == Ternary::yes);
  CHECK((r.ptr == d.ptr && r.size == 64));
  CHECK(h.reallocate(c, 64 * 10));  // shrink: the tail is no longer part of c
  CHECK(h.resolve_internal_pointer(static_cast<char*>(c.ptr) + 64 * 20, r) == Ternary::no);
  CHECK(h.resolve_internal_pointer(static_cast<char*>(c.ptr) + 64 * 9, r) == Ternary::yes);
  CHECK(r.size == 64 * 10);
  Block al = h.aligned_allocate(100, 1024);
  CHECK(h.resolve_internal_pointer(static_cast<char*>(al.ptr) + 99, r) == Ternary::yes);
  CHECK((r.ptr <= al.ptr && r.end_address() >= al.end_address()));  // the whole blocks (al may start mid-block)
  CHECK(r.size <= 3 * 64);
  CHECK(h.deallocate_all());
  CHECK(h.resolve_internal_pointer(a.ptr, r) == Ternary::no);
  Block all = h.allocate_all();
  CHECK(h.resolve_internal_pointer(static_cast<char*>(all.ptr) + all.size - 1, r) == Ternary::yes);
  CHECK(r == all);
}

TEST_CASE("BitmappedBlockWithInternalPointers over NoAccessAllocator: both bitmaps on the host") {
  BitmappedBlockWithInternalPointers<256, 64, NoAccessAllocator> h(256 * 100);
  Block b = h.allocate(1000);
  Block r{};
  CHECK(h.resolve_internal_pointer(static_cast<char*>(b.ptr) + 999, r) == Ternary::yes);
  CHECK((r.ptr == b.ptr && r.size == 1024));
  CHECK(h.deallocate(b));
}
