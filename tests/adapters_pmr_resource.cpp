#include <alloy/adapters/pmr_resource.hpp>
#include <alloy/aligned_mallocator.hpp>
#include <alloy/adapters/any_allocator.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/null_allocator.hpp>
#include <alloy/ref.hpp>
#include <alloy/region.hpp>

#include <memory_resource>
#include <new>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "support/test_allocators.hpp"

using alloy::PmrResource;
using Heap = alloy::test::CheckedHeap<16, alloy::test::caps::aligned>;

TEST_CASE("PmrResource: pmr containers over a stack") {
  PmrResource<alloy::Mallocator> res;
  std::pmr::vector<std::pmr::string> v(&res);
  for (int i = 0; i < 1000; ++i) v.emplace_back("a string that is long enough to need the resource " + std::to_string(i));
  CHECK(v[999].get_allocator().resource() == &res);
  std::pmr::map<int, int> m(&res);
  for (int i = 0; i < 100; ++i) m[i] = i * i;
  CHECK(m[9] == 81);
}

TEST_CASE("PmrResource: the stack gets back exactly the block it gave (sizes come from pmr)") {
  Heap heap;
  {
    PmrResource<alloy::Ref<Heap>> res(heap);
    std::pmr::vector<int> v(&res);
    for (int i = 0; i < 10000; ++i) v.push_back(i);
    std::pmr::unsynchronized_pool_resource pool(&res);  // a pmr resource layered on ours
    std::pmr::vector<double> w(&pool);
    w.resize(5000);
    void* z = res.allocate(0);  // 0 bytes: a usable pointer (1 byte from the stack)
    CHECK(z != nullptr);
    CHECK(heap.is_live(alloy::Block{z, 1}));
    res.deallocate(z, 0);
    void* p = res.allocate(100, 1024);
    CHECK(alloy::is_aligned(p, 1024));
    res.deallocate(p, 100, 1024);
  }
  CHECK(heap.live_blocks() == 0);
}

TEST_CASE("PmrResource: over-alignment and failure") {
  PmrResource<alloy::Mallocator> plain;  // no aligned_allocate
  CHECK_THROWS_AS((void)plain.allocate(64, 4096), alloy::bad_alloc);
  void* p = plain.allocate(64, 16);  // within the stack's own alignment
  plain.deallocate(p, 64, 16);
  PmrResource<alloy::AlignedMallocator> aligned;
  void* q = aligned.allocate(64, 4096);
  CHECK(alloy::is_aligned(q, 4096));
  aligned.deallocate(q, 64, 4096);
  std::size_t not_pow2 = 48;  // a variable: clang rejects a constant non-power-of-two alignment at compile time
  CHECK_THROWS_AS((void)aligned.allocate(64, not_pow2), std::bad_alloc);
  PmrResource<alloy::NullAllocator> none;
  CHECK_THROWS_AS((void)none.allocate(8), std::bad_alloc);
  Heap heap;
  heap.fail_after(0);
  PmrResource<alloy::Ref<Heap>> failing(heap);
  CHECK_THROWS_AS((void)failing.allocate(8), alloy::bad_alloc);
}

TEST_CASE("PmrResource: over an AnyAllocator chosen at run time") {
  PmrResource<alloy::AnyAllocator> host(alloy::AnyAllocator(alloy::AlignedMallocator{}));
  std::pmr::vector<int> v(&host);
  v.assign(1000, 7);
  void* p = host.allocate(64, 512);
  CHECK(alloy::is_aligned(p, 512));
  host.deallocate(p, 64, 512);
  PmrResource<alloy::AnyAllocator> dev(alloy::AnyAllocator(alloy::NoAccessAllocator{}));
  CHECK_THROWS_AS((void)dev.allocate(8), alloy::bad_alloc);  // device memory: never handed to pmr
  CHECK(host.is_equal(host));
}

TEST_CASE("PmrResource: is_equal") {
  PmrResource<alloy::Mallocator> a, b;
  CHECK(a.is_equal(b));  // stateless: either frees the other's memory
  CHECK(a == b);
  Heap h1, h2;
  PmrResource<alloy::Ref<Heap>> r1(h1), r1b(h1), r2(h2);
  CHECK(r1.is_equal(r1b));
  CHECK(!r1.is_equal(r2));
  CHECK(!r1.is_equal(a));
  CHECK(!a.is_equal(*std::pmr::new_delete_resource()));
  PmrResource<alloy::Region<alloy::Mallocator>> region(4096);  // not comparable: only itself
  CHECK(region.is_equal(region));
  CHECK(region.stack().available() >= 4096);
}

TEST_CASE("PmrResource: a monotonic Region behind std::pmr") {
  PmrResource<alloy::Region<alloy::Mallocator>> res(1 << 16);
  std::pmr::vector<int> v(&res);
  v.reserve(100);
  for (int i = 0; i < 100; ++i) v.push_back(i);
  CHECK(v[50] == 50);
  CHECK_THROWS_AS(v.reserve(1 << 20), std::bad_alloc);  // the region is finite
}

TEST_CASE("PmrResource: an alignment that is not a power of two throws, even one below the stack's alignment") {
  PmrResource<alloy::Mallocator> res;
  std::size_t three = 3;  // a variable: clang rejects a constant non-power-of-two alignment at compile time
  CHECK_THROWS_AS((void)res.allocate(8, three), alloy::bad_alloc);
}

TEST_CASE("PmrResource: two resources over stacks that cannot be compared are not equal") {
  PmrResource<alloy::Region<alloy::Mallocator>> a(4096), b(4096);
  CHECK(!a.is_equal(b));
  CHECK(!b.is_equal(a));
}

// Bad input at the edges (issue 23): sizes no heap serves, alignments that are not powers of two (0 included) or that
// no heap can give, a bounded stack that runs out, null deallocation. Every failure is alloy::bad_alloc (a
// std::bad_alloc) and leaves nothing allocated (the asan preset runs LSan).
TEST_CASE("PmrResource: bad input at the edges") {
  PmrResource<alloy::AlignedMallocator> res;
  std::pmr::memory_resource& mr = res;
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 15, std::size_t{PTRDIFF_MAX} + 1}) {
    CAPTURE(n);
    CHECK_THROWS_AS((void)mr.allocate(n, 8), alloy::bad_alloc);
    CHECK_THROWS_AS((void)mr.allocate(n, 4096), alloy::bad_alloc);
  }
  std::size_t bad_alignment = 0;  // a variable: pmr's allocate asserts a power of two where the constant is visible
  for (std::size_t al : {std::size_t{0}, std::size_t{3}, std::size_t{24}, SIZE_MAX}) {
    bad_alignment = al;
    CHECK_THROWS_AS((void)mr.allocate(16, bad_alignment), alloy::bad_alloc);
  }
  bad_alignment = std::size_t{1} << 63;  // a power of two no heap can give
  CHECK_THROWS_AS((void)mr.allocate(16, bad_alignment), alloy::bad_alloc);

  PmrResource<alloy::Region<alloy::Mallocator>> small(std::size_t{256});
  CHECK_THROWS_AS((void)small.allocate(1000, 8), alloy::bad_alloc);
  CHECK(small.stack().empty() == alloy::Ternary::yes);
  std::pmr::vector<int> v(&small);
  CHECK_THROWS_AS(v.resize(1000), std::bad_alloc);
  CHECK(v.empty());
}
