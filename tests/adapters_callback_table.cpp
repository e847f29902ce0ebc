// ctest-labels: tsan
// CallbackTable from C++ (the C program tests/adapters_callback_table.c drives it from C).
#include <alloy/adapters/any_allocator.hpp>
#include <alloy/adapters/callback_table.hpp>
#include <alloy/aligned_mallocator.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/ref.hpp>
#include <alloy/region.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "support/test_allocators.hpp"

TEST_CASE("CallbackTable: the table's fields and the C callbacks") {
  alloy::CallbackTable<alloy::AlignedMallocator> ct;
  alloy_callback_table* t = ct.table();
  CHECK(t->obj == &ct);
  CHECK(t->alignment == alloy::AlignedMallocator::alignment);
  CHECK(t->memory_space == ALLOY_MEMORY_HOST);
  CHECK(t->alloc(t->obj, 0) == nullptr);
  void* b = t->alloc(t->obj, 33);
  REQUIRE(b != nullptr);
  auto* rec = static_cast<alloy_block*>(b);
  CHECK(rec->size == 33);
  CHECK(t->addr_of_block(b) == rec->address);
  CHECK(ct.live_blocks() == 1);
  void* a = t->alloc_advise(t->obj, 10, reinterpret_cast<void*>(std::uintptr_t{0x7f0000001000}));
  CHECK(alloy::is_aligned(t->addr_of_block(a), 4096));
  void* c = t->alloc_advise(t->obj, 10, nullptr);
  CHECK(c != nullptr);
  t->free(t->obj, a);
  t->free(t->obj, b);
  t->free(t->obj, c);
  t->free(t->obj, nullptr);
  CHECK(ct.live_blocks() == 0);
}

TEST_CASE("CallbackTable: exact blocks back to the stack; live blocks freed at the end") {
  using Heap = alloy::test::CheckedHeap<16, alloy::test::caps::aligned>;
  Heap heap;
  {
    alloy::CallbackTable<alloy::Ref<Heap>> ct(heap);
    alloy_callback_table* t = ct.table();
    std::vector<void*> bs;
    for (std::size_t i = 1; i <= 100; ++i) bs.push_back(t->alloc(t->obj, i * 3));
    for (std::size_t i = 0; i < bs.size(); i += 3) t->free(t->obj, bs[i]);
    CHECK(heap.live_blocks() == 66);
    heap.fail_after(0);
    CHECK(t->alloc(t->obj, 8) == nullptr);  // the stack fails: NULL
  }
  CHECK(heap.live_blocks() == 0);
}

TEST_CASE("CallbackTable: device-like stacks (records on the host, memory never touched)") {
  alloy_callback_table* t = alloy::make_callback_table<alloy::NoAccessAllocator>();
  CHECK(t->memory_space == ALLOY_MEMORY_DEVICE);
  void* b = t->alloc(t->obj, 5000);
  CHECK(static_cast<alloy_block*>(b)->size == 5000);  // the record is host memory
  CHECK(alloy::NoAccessAllocator::instance.owns({t->addr_of_block(b), 5000}) == alloy::Ternary::yes);
  t->free(t->obj, b);
  t->destroy(t->obj);
  CHECK(alloy::NoAccessAllocator::live_blocks() == 0);
  {
    using Pool = alloy::BitmappedBlock<256, 256, alloy::NoAccessAllocator>;
    alloy::CallbackTable<Pool> pool(std::size_t{1} << 20);
    std::vector<void*> bs;
    for (std::size_t i = 1; i <= 64; ++i) bs.push_back(pool.table()->alloc(pool.table()->obj, i * 100));
    for (void* h : bs) CHECK(pool.stack().owns({pool.table()->addr_of_block(h), static_cast<alloy_block*>(h)->size}) ==
                             alloy::Ternary::yes);
    for (void* h : bs) pool.table()->free(pool.table()->obj, h);
    CHECK(pool.stack().empty() == alloy::Ternary::yes);
  }
  t = alloy::make_callback_table<alloy::Region<alloy::NoAccessAllocator>>(std::size_t{1} << 16);
  void* x = t->alloc(t->obj, 100);
  void* y = t->alloc(t->obj, 100);
  CHECK(x != nullptr);
  CHECK(y != nullptr);
  t->free(t->obj, x);  // a Region keeps a middle block until it is reset; the handle is freed all the same
  t->destroy(t->obj);
  CHECK(alloy::NoAccessAllocator::live_blocks() == 0);
}

// Regression test: over an AnyAllocator the table published its compile-time answers (host, alignment 1)
// whatever stack it erased.
TEST_CASE("CallbackTable over an AnyAllocator: the erased stack's memory space and alignment") {
  alloy::AnyAllocator dev{alloy::NoAccessAllocator{}};
  alloy::CallbackTable<alloy::AnyAllocator> d(dev);
  CHECK(d.table()->memory_space == ALLOY_MEMORY_DEVICE);
  CHECK(d.table()->alignment == alloy::NoAccessAllocator::alignment);
  alloy::CallbackTable<alloy::AnyAllocator> h(alloy::AnyAllocator{alloy::Mallocator{}});
  CHECK(h.table()->memory_space == ALLOY_MEMORY_HOST);
  CHECK(h.table()->alignment == alloy::Mallocator::alignment);
  void* b = d.table()->alloc(d.table()->obj, 100);
  REQUIRE(b != nullptr);
  CHECK(alloy::is_aligned(d.table()->addr_of_block(b), alloy::NoAccessAllocator::alignment));
  d.table()->free(d.table()->obj, b);
}

TEST_CASE("CallbackTable: thread-safe over a Region (which is not)") {
  alloy::CallbackTable<alloy::Region<alloy::Mallocator>> ct(std::size_t{1} << 22);
  alloy_callback_table* t = ct.table();
  std::vector<std::thread> ts;
  std::vector<int> bad(6, 0);
  for (int k = 0; k < 6; ++k) {
    ts.emplace_back([&, k] {
      std::vector<void*> mine;
      for (int i = 0; i < 3000; ++i) {
        if (mine.size() < 16 && i % 3 != 2) {
          void* b = t->alloc(t->obj, 1 + (i * 7 + k) % 200);
          if (!b) { ++bad[k]; continue; }
          std::memset(t->addr_of_block(b), k, static_cast<alloy_block*>(b)->size);
          mine.push_back(b);
        } else if (!mine.empty()) {
          void* b = mine.back();
          mine.pop_back();
          if (*static_cast<unsigned char*>(t->addr_of_block(b)) != k) ++bad[k];
          t->free(t->obj, b);
        }
      }
      for (void* b : mine) t->free(t->obj, b);
    });
  }
  for (auto& th : ts) th.join();
  for (int b : bad) CHECK(b == 0);
  CHECK(ct.live_blocks() == 0);
}

// Over a Region on a 4096-aligned span, where each block lands is known: the hint's lowest set bit is the alignment,
// at most 4096, and a plain alloc serves the request when the aligned one fails.
TEST_CASE("CallbackTable: alloc_advise aligns to the hint (capped at 4096), else falls back to a plain alloc") {
  alignas(4096) static std::byte buf[8192];
  alloy::CallbackTable<alloy::Region<>> ct{std::span<std::byte>(buf)};
  alloy_callback_table* t = ct.table();
  auto offset = [&](void* h) { return static_cast<std::byte*>(t->addr_of_block(h)) - buf; };
  void* a = t->alloc(t->obj, 10);
  REQUIRE(a != nullptr);
  CHECK(offset(a) == 0);
  void* b = t->alloc_advise(t->obj, 10, reinterpret_cast<void*>(std::uintptr_t{1} << 47));  // capped: 4096
  REQUIRE(b != nullptr);
  CHECK(offset(b) == 4096);
  void* c = t->alloc_advise(t->obj, 10, reinterpret_cast<void*>(std::uintptr_t{0x1000}));  // no 4096 boundary left
  REQUIRE(c != nullptr);
  CHECK(offset(c) == 4096 + 16);  // the plain alloc
  void* d = t->alloc_advise(t->obj, 10, reinterpret_cast<void*>(std::uintptr_t{0x1040}));  // 64
  REQUIRE(d != nullptr);
  CHECK(offset(d) == 4096 + 64);
  CHECK(ct.live_blocks() == 4);
}

// Bad input at the edges (issue 23): sizes no heap serves, address hints that are null, misaligned or absurd, null
// handles. alloc returns NULL and keeps no record (nothing leaks: the asan preset runs LSan); free and addr_of_block
// of NULL do nothing.
TEST_CASE("CallbackTable: bad input at the edges") {
  alloy_callback_table* t = alloy::make_callback_table<alloy::AlignedMallocator>();
  REQUIRE(t != nullptr);
  auto& table = *static_cast<alloy::CallbackTable<alloy::AlignedMallocator>*>(t->obj);
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 4095, std::size_t{PTRDIFF_MAX} + 1}) {
    CHECK(t->alloc(t->obj, n) == nullptr);
    CHECK(t->alloc_advise(t->obj, n, nullptr) == nullptr);
    CHECK(t->alloc_advise(t->obj, n, reinterpret_cast<void*>(std::uintptr_t{4096})) == nullptr);
  }
  CHECK(table.live_blocks() == 0);  // no record kept for a failed request
  // Hints: a misaligned one asks for nothing beyond the stack's alignment; a huge one is capped at 4096.
  void* odd = t->alloc_advise(t->obj, 24, reinterpret_cast<void*>(std::uintptr_t{0x1001}));
  void* top = t->alloc_advise(t->obj, 24, reinterpret_cast<void*>(std::uintptr_t{1} << 62));
  REQUIRE((odd != nullptr && top != nullptr));
  CHECK(alloy::is_aligned(t->addr_of_block(odd), t->alignment));
  CHECK(alloy::is_aligned(t->addr_of_block(top), 4096));
  CHECK(t->addr_of_block(nullptr) == nullptr);
  t->free(t->obj, nullptr);
  t->free(t->obj, odd);
  CHECK(table.live_blocks() == 1);
  t->destroy(t->obj);  // gives `top` back: LSan sees no leak
}
