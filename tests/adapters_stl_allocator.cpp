#include <alloy/adapters/stl_allocator.hpp>
#include <alloy/adapters/any_allocator.hpp>
#include <alloy/aligned_mallocator.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/null_allocator.hpp>
#include <alloy/ref.hpp>
#include <alloy/region.hpp>

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include <doctest/doctest.h>

#include "support/test_allocators.hpp"

using alloy::StlAllocator;
template <class T>
using MallocAlloc = StlAllocator<T, alloy::Mallocator>;
using Heap = alloy::test::CheckedHeap<16, alloy::test::caps::aligned>;

// allocator_traits sees what it should.
using MT = std::allocator_traits<MallocAlloc<int>>;
static_assert(MT::is_always_equal::value);
static_assert(std::is_empty_v<MallocAlloc<int>>);
static_assert(std::is_same_v<MT::rebind_alloc<double>, MallocAlloc<double>>);
static_assert(std::is_nothrow_default_constructible_v<MallocAlloc<int>>);
using HT = std::allocator_traits<StlAllocator<int, Heap>>;
static_assert(!HT::is_always_equal::value);
static_assert(HT::propagate_on_container_move_assignment::value && HT::propagate_on_container_swap::value);
static_assert(sizeof(StlAllocator<int, Heap>) == sizeof(void*));
static_assert(!std::is_default_constructible_v<StlAllocator<int, Heap>>);

TEST_CASE("StlAllocator: vector, map, string, list over a stateless stack") {
  std::vector<int, MallocAlloc<int>> v;
  for (int i = 0; i < 10000; ++i) v.push_back(i);
  CHECK(v[9999] == 9999);
  std::map<int, std::string, std::less<>, MallocAlloc<std::pair<const int, std::string>>> m;
  for (int i = 0; i < 500; ++i) m.emplace(i, std::to_string(i));
  CHECK(m.at(321) == "321");
  using Str = std::basic_string<char, std::char_traits<char>, MallocAlloc<char>>;
  Str s;
  for (int i = 0; i < 200; ++i) s += "abc";
  CHECK(s.size() == 600);
  std::list<Str, MallocAlloc<Str>> l(3, Str("a long enough string to live on the heap, not inline"));
  CHECK(l.back().size() == 52);
  CHECK(MallocAlloc<int>() == MallocAlloc<double>());
}

TEST_CASE("StlAllocator: a stateful stack is shared by pointer, gets back exactly what it gave") {
  Heap heap, other;
  {
    StlAllocator<int, Heap> a(heap);
    std::vector<int, StlAllocator<int, Heap>> v(a);
    for (int i = 0; i < 1000; ++i) v.push_back(i);
    CHECK(heap.live_blocks() == 1);
    std::map<int, int, std::less<>, StlAllocator<std::pair<const int, int>, Heap>> m(a);
    for (int i = 0; i < 100; ++i) m[i] = i;
    CHECK(heap.live_blocks() == 101);
    using Str = std::basic_string<char, std::char_traits<char>, StlAllocator<char, Heap>>;
    Str s("a string that certainly does not fit the small buffer", a);
    CHECK(heap.live_blocks() == 102);
    CHECK(a == StlAllocator<double, Heap>(heap));
    CHECK(a != StlAllocator<int, Heap>(other));
    // Move assignment propagates the allocator: the memory moves with it, nothing is copied into `other`.
    std::vector<int, StlAllocator<int, Heap>> w{StlAllocator<int, Heap>(other)};
    w = std::move(v);
    CHECK(w.get_allocator() == a);
    CHECK(other.live_blocks() == 0);
  }
  CHECK(heap.live_blocks() == 0);  // CheckedHeap fails the test on a wrong size or a foreign block
}

TEST_CASE("StlAllocator: allocate_shared") {
  Heap heap;
  {
    auto p = std::allocate_shared<std::string>(StlAllocator<std::string, Heap>(heap), 100, 'x');
    CHECK(p->size() == 100);
    CHECK(heap.live_blocks() == 1);  // control block and object in one (the string's buffer is std::allocator's)
    auto q = std::allocate_shared<int>(MallocAlloc<int>(), 7);
    CHECK(*q == 7);
  }
  CHECK(heap.live_blocks() == 0);
}

struct alignas(256) Wide {
  unsigned char bytes[256];
};

TEST_CASE("StlAllocator: over-aligned T through aligned_allocate") {
  std::vector<Wide, StlAllocator<Wide, alloy::AlignedMallocator>> v(5);
  CHECK(alloy::is_aligned(v.data(), 256));
  Heap heap;
  {
    std::vector<Wide, StlAllocator<Wide, Heap>> w(3, Wide{}, StlAllocator<Wide, Heap>(heap));
    CHECK(alloy::is_aligned(w.data(), 256));
  }
  CHECK(heap.live_blocks() == 0);
}

TEST_CASE("StlAllocator: failure throws alloy::bad_alloc, a std::bad_alloc") {
  StlAllocator<int, alloy::NullAllocator> none;
  CHECK_THROWS_AS((void)none.allocate(1), alloy::bad_alloc);
  CHECK_THROWS_AS((void)MallocAlloc<int>().allocate(SIZE_MAX / 2), std::bad_alloc);  // n * sizeof(T) overflows
  CHECK(MallocAlloc<int>().allocate(0) == nullptr);
  Heap heap;
  heap.fail_after(2);
  std::vector<int, StlAllocator<int, Heap>> v{StlAllocator<int, Heap>(heap)};
  CHECK_THROWS_AS(
      [&] {
        for (int i = 0; i < 100; ++i) v.push_back(i);
      }(),
      std::bad_alloc);
  CHECK(v.size() == 2);  // strong guarantee of push_back: what was there stays
}

TEST_CASE("StlAllocator: a Region (no deallocate) and a Ref") {
  alloy::Region<alloy::Mallocator> region(1 << 16);
  {
    std::vector<int, StlAllocator<int, decltype(region)>> v{StlAllocator<int, decltype(region)>(region)};
    for (int i = 0; i < 1000; ++i) v.push_back(i);
    CHECK(v[999] == 999);
  }
  alloy::Mallocator m;
  alloy::Ref<alloy::Mallocator> r(m);
  std::vector<int, StlAllocator<int, alloy::Ref<alloy::Mallocator>>> v({1, 2, 3}, r);
  CHECK(v.size() == 3);
}

TEST_CASE("StlAllocator: over an AnyAllocator chosen at run time") {
  for (int pick = 0; pick < 2; ++pick) {
    alloy::AnyAllocator any = pick ? alloy::AnyAllocator(alloy::Mallocator{}) : alloy::AnyAllocator(alloy::AlignedMallocator{});
    std::vector<double, StlAllocator<double, alloy::AnyAllocator>> v({1.0, 2.0}, any);
    v.resize(1000, 3.0);
    CHECK(v.back() == 3.0);
    CHECK(alloy::is_aligned(v.data(), alignof(double)));
  }
}

TEST_CASE("StlAllocator: over an AnyAllocator erasing device memory, allocate throws instead of handing it out") {
  alloy::AnyAllocator dev(alloy::NoAccessAllocator{});
  StlAllocator<int, alloy::AnyAllocator> a(dev);
  CHECK_THROWS_AS((void)a.allocate(4), alloy::bad_alloc);
  CHECK(alloy::NoAccessAllocator::live_blocks() == 0);
}

// Randomized: many containers of random sizes; CheckedHeap verifies every Block given back.
TEST_CASE("StlAllocator: randomized container churn (exact blocks)") {
  Heap heap;
  std::uint64_t x = 88172645463325252ull;
  auto next = [&] { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x; };
  {
    using A = StlAllocator<std::uint64_t, Heap>;
    std::vector<std::vector<std::uint64_t, A>> vs;
    for (int i = 0; i < 64; ++i) vs.emplace_back(A(heap));
    for (int op = 0; op < 200000; ++op) {
      auto& v = vs[next() % vs.size()];
      switch (next() % 4) {
        case 0: case 1: v.push_back(op); break;
        case 2: if (!v.empty()) v.pop_back(); break;
        case 3: if (next() % 16 == 0) { v.clear(); v.shrink_to_fit(); } break;
      }
    }
    for (auto& v : vs)
      for (std::size_t i = 1; i < v.size(); ++i) CHECK_MESSAGE(v[i] > v[i - 1], "contents survive reallocation");
  }
  CHECK(heap.live_blocks() == 0);
}

// Mutation audit: (SIZE_MAX / 4 + 2) * 4 wraps to 4; without the overflow check the stack would serve 4 bytes.
TEST_CASE("StlAllocator: an n * sizeof(T) that wraps to a small size throws, never a short block") {
  CHECK_THROWS_AS((void)MallocAlloc<std::uint32_t>().allocate(SIZE_MAX / sizeof(std::uint32_t) + 2), std::bad_alloc);
}

struct alignas(alloy::Mallocator::alignment) Exact {
  unsigned char bytes[alloy::Mallocator::alignment];
};

TEST_CASE("StlAllocator: alignof(T) equal to the stack's alignment is a plain allocate (no aligned_allocate needed)") {
  std::vector<Exact, MallocAlloc<Exact>> v(3);
  CHECK(alloy::is_aligned(v.data(), alignof(Exact)));
}

TEST_CASE("StlAllocator: copy assignment propagates a stateful stack") {
  Heap heap, other;
  {
    using A = StlAllocator<int, Heap>;
    std::vector<int, A> v({1, 2, 3}, A(heap));
    std::vector<int, A> w{A(other)};
    w = v;
    CHECK(w.get_allocator() == v.get_allocator());
    CHECK(other.live_blocks() == 0);  // the copy's memory came from `heap`
  }
  CHECK(heap.live_blocks() == 0);
}

// Bad input at the edges (issue 23): element counts whose byte size overflows or that no heap serves, a bounded
// stack that runs out, an over-aligned T through an AnyAllocator whose stack cannot align it, null deallocation.
// Every failure is alloy::bad_alloc (a std::bad_alloc) and leaves nothing allocated (the asan preset runs LSan).
TEST_CASE("StlAllocator: bad input at the edges") {
  for (std::size_t n : {SIZE_MAX, SIZE_MAX / 8 + 1, SIZE_MAX / 16 + 1})
    CHECK_THROWS_AS((void)MallocAlloc<double>().allocate(n), alloy::bad_alloc);  // n * 8 overflows (or is > PTRDIFF_MAX)
  CHECK_THROWS_AS((void)MallocAlloc<char>().allocate(SIZE_MAX), alloy::bad_alloc);
  CHECK_THROWS_AS((void)MallocAlloc<char>().allocate(std::size_t{PTRDIFF_MAX} + 1), alloy::bad_alloc);
  MallocAlloc<int>().deallocate(nullptr, 0);
  MallocAlloc<int>().deallocate(nullptr, SIZE_MAX);  // null: nothing to give back, whatever the count

  alloy::Region<alloy::Mallocator> r(4096);
  StlAllocator<int, alloy::Region<alloy::Mallocator>> ra(r);
  CHECK_THROWS_AS((void)ra.allocate(2000), alloy::bad_alloc);  // 8000 bytes from a 4096-byte region
  CHECK(r.empty() == alloy::Ternary::yes);                      // the failed request took nothing
  std::vector<int, StlAllocator<int, alloy::Region<alloy::Mallocator>>> v(ra);
  CHECK_THROWS_AS(v.resize(5000), std::bad_alloc);
  CHECK(v.empty());
  CHECK_THROWS_AS(v.reserve(v.max_size() + 1), std::length_error);  // the container's own check

  struct alignas(64) Wide {
    char c[64];
  };
  alloy::AnyAllocator any{alloy::Mallocator{}};  // 16-aligned, no aligned_allocate: cannot serve alignof 64
  StlAllocator<Wide, alloy::AnyAllocator> wa(any);
  CHECK_THROWS_AS((void)wa.allocate(1), alloy::bad_alloc);
  alloy::AnyAllocator dev{alloy::NoAccessAllocator{}};
  StlAllocator<int, alloy::AnyAllocator> da(dev);  // device memory: the host cannot construct ints there
  CHECK_THROWS_AS((void)da.allocate(1), alloy::bad_alloc);
}
