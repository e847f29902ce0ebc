// ctest-labels: heavy
#include <alloy/bucketizer.hpp>

#include <alloy/allocator_list.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/region.hpp>

#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include <doctest/doctest.h>

#include "support/bitmapped_block_model.hpp"
#include "support/combinator_support.hpp"
#include "support/conformance.hpp"
#include "support/differential.hpp"
#include "support/test_allocators.hpp"

using alloy::Block;
using alloy::Bucketizer;
using alloy::Ternary;
using BB32 = alloy::BitmappedBlock<32, 16>;  // over a span
using Heap = alloy::test::CheckedHeap<16, alloy::test::caps::aligned>;  // fails the test on a wrong-size free

// Capabilities: expand, reallocate and good_alloc_size always (host memory); the rest iff the bucket type has it.
using BM = Bucketizer<alloy::Mallocator, 1, 512, 64>;
static_assert(BM::bucket_count == 8 && BM::bucket_size(0) == 64 && BM::bucket_size(7) == 512);
static_assert(alloy::has_deallocate<BM> && alloy::has_expand<BM> && alloy::has_reallocate<BM> &&
              alloy::has_good_alloc_size<BM>);
static_assert(!alloy::has_owns<BM> && !alloy::has_aligned_allocate<BM> && !alloy::has_aligned_reallocate<BM> &&
              !alloy::has_empty<BM> && !alloy::has_deallocate_all<BM> && !alloy::has_copy<BM>);
using BB = Bucketizer<BB32, 33, 544, 64>;
static_assert(BB::bucket_count == 8 && BB::bucket_size(0) == 96);
static_assert(alloy::has_owns<BB> && alloy::has_aligned_allocate<BB> && alloy::has_aligned_reallocate<BB> &&
              alloy::has_empty<BB> && alloy::has_deallocate_all<BB> && !alloy::has_resolve_internal_pointer<BB>);
using BD = Bucketizer<alloy::NoAccessAllocator, 1, 8192, 1024>;
static_assert(BD::memory_space == alloy::MemorySpace::device && alloy::has_copy<BD> && alloy::has_reallocate<BD> &&
              alloy::has_owns<BD>);
static_assert(alloy::has_resolve_internal_pointer<Bucketizer<alloy::BitmappedBlockWithInternalPointers<64>, 1, 128, 64>>);
using BS = Bucketizer<alloy::test::StreamHeap<>, 1, 256, 64>;
static_assert(alloy::has_stream_ordered<BS> && !alloy::has_stream_ordered<BM>);
static_assert(Bucketizer<alloy::Mallocator, 0, 1023, 1024>::bucket_count == 1);  // one bucket of [0, 1023]

alignas(4096) static std::byte g_mem[1 << 16];

static BB make_bb() {
  return BB([](std::size_t i) { return BB32(std::span<std::byte>(g_mem + i * 32 * 96, 32 * 96)); });
}

TEST_CASE("Bucketizer: conformance") {
  alloy::test::check_allocator([] { return BM(); });
  alloy::test::check_allocator([] { return Bucketizer<Heap, 1, 256, 32>(); });  // exact sizes given back
  alloy::test::check_allocator([] { return Bucketizer<Heap, 17, 4096, 16>(); });
  alloy::test::check_allocator([] { return make_bb(); });
  alloy::test::check_allocator([] { return BS(); });
  alloy::test::check_allocator([] { return Bucketizer<alloy::Mallocator, 2, 9, 8>(); });  // serves no 1-byte request
}

TEST_CASE("Bucketizer: over device memory (NoAccessAllocator) it never touches the memory") {
  const std::size_t before = alloy::NoAccessAllocator::live_blocks();
  {
    alloy::test::check_allocator([] { return BD(); });
    using BBD = alloy::BitmappedBlock<256, 64, alloy::NoAccessAllocator>;
    alloy::test::check_allocator([] {
      return Bucketizer<BBD, 1, 1024, 256>([](std::size_t) { return BBD(256 * 32); });
    });
    BD a;
    alloy::test::DiffOptions o;
    o.ops = 20'000;
    o.slots = 48;
    o.max_size = 9000;  // above Max too
    o.max_alignment = 1 << 14;
    const auto st = alloy::test::run_differential(a, o);  // contents through copy only
    CHECK(st.allocations > 5'000);
    CHECK(st.failures > 500);
    CHECK(st.reallocations > 500);
    CHECK(st.expansions > 50);  // in-bucket only: delta is drawn up to max_size, so most are refused
  }
  CHECK(alloy::NoAccessAllocator::live_blocks() == before);
}

// The model: one BitmapModel per bucket over the same addresses; every request asks its bucket for the bucket's
// largest size; expand only inside it; reallocate in place inside it, else allocate + give back.
struct BucketizerModel {
  std::size_t min, step;
  std::vector<alloy::test::BitmapModel> b;
  bool in(std::size_t n) const { return n != 0 && n >= min && n - min < b.size() * step; }
  std::size_t idx(std::size_t n) const { return (n - min) / step; }
  std::size_t top(std::size_t n) const { return min + (idx(n) + 1) * step - 1; }
  Block allocate(std::size_t n) {
    if (!in(n)) return {};
    const Block r = b[idx(n)].allocate(top(n));
    return r ? Block{r.ptr, n} : Block{};
  }
  Block aligned_allocate(std::size_t n, std::size_t a) {
    if (!in(n)) return {};
    const Block r = b[idx(n)].aligned_allocate(top(n), a);
    return r ? Block{r.ptr, n} : Block{};
  }
  bool deallocate(Block x) { return !x || b[idx(x.size)].deallocate(Block{x.ptr, top(x.size)}); }
  bool expand(Block& x, std::size_t d) {
    if (d == 0) return true;
    if (!x || x.size > SIZE_MAX - d || x.size + d > top(x.size)) return false;
    x.size += d;
    return true;
  }
  template <class Alloc>
  bool resize(Block& x, std::size_t n, bool in_place, Alloc alloc) {
    if (!x) {
      if (n == 0) return true;
      const Block nb = alloc(n);
      if (!nb) return false;
      x = nb;
      return true;
    }
    if (n == 0) {
      deallocate(x);
      x = {};
      return true;
    }
    if (in_place && in(n) && idx(n) == idx(x.size)) {
      x.size = n;
      return true;
    }
    const Block nb = alloc(n);
    if (!nb) return false;
    deallocate(x);
    x = nb;
    return true;
  }
  bool reallocate(Block& x, std::size_t n) {
    if (x && x.size == n) return true;
    return resize(x, n, true, [this](std::size_t m) { return allocate(m); });
  }
  bool aligned_reallocate(Block& x, std::size_t n, std::size_t a) {
    return resize(x, n, x && alloy::is_aligned(x.ptr, a), [this, a](std::size_t m) { return aligned_allocate(m, a); });
  }
  Ternary owns(Block x) const { return x && in(x.size) ? b[idx(x.size)].owns(Block{x.ptr, top(x.size)}) : Ternary::no; }
  Ternary empty() const {
    Ternary e = Ternary::yes;
    for (auto& m : b) e = e & m.empty();
    return e;
  }
  bool deallocate_all() {
    for (auto& m : b) m.deallocate_all();
    return true;
  }
};

TEST_CASE("Bucketizer: 10^6 random operations against a model (eight BitmappedBlocks)") {
  BB a = make_bb();
  BucketizerModel m{33, 64, {}};
  for (auto& bucket : a.buckets())
    m.b.emplace_back(bucket.payload(), bucket.block_size(), bucket.block_count(), 16, true);
  alloy::test::DiffOptions o;
  o.seed = 0xB0C4E71;
  o.ops = 1'000'000;
  o.slots = 96;
  o.min_size = 1;
  o.max_size = 600;  // below Min and above Max too
  o.max_alignment = 256;
  o.deallocate_all_every = 5'000;
  const auto st = alloy::test::run_differential(a, m, o);
  CHECK(st.ops == 1'000'000);
  CHECK(st.allocations > 200'000);
  CHECK(st.failures > 50'000);
  CHECK(st.reallocations > 50'000);
  CHECK(st.failed_reallocations > 1'000);
  CHECK(st.expansions > 3'000);  // in-bucket only
  CHECK(st.failed_expansions > 10'000);
  CHECK(st.deallocate_alls > 100);
  MESSAGE(st.allocations << " allocations, " << st.failures << " failures, " << st.reallocations << " reallocations");
}

struct Regions {  // D's unittest: regions of 1 MiB from malloc (larger on demand)
  alloy::Region<alloy::Mallocator> operator()(std::size_t n) const {
    return alloy::Region<alloy::Mallocator>(std::max<std::size_t>(n, 1 << 20));
  }
};

TEST_CASE("Bucketizer: D's unittests, sizes out of range, exact sizes to the buckets") {
  SUBCASE("D: an AllocatorList of regions per bucket; expand, move across buckets, free through reallocate") {
    Bucketizer<alloy::AllocatorList<Regions>, 65, 512, 64> a;
    CHECK(a.good_alloc_size(65) == 128);
    Block b = a.allocate(100);
    CHECK(b.size == 100);
    CHECK(a.owns(b) == Ternary::yes);
    CHECK(a.reallocate(b, 101));  // in place
    CHECK(b.size == 101);
    const void* p = b.ptr;
    CHECK(a.reallocate(b, 200));  // across buckets
    CHECK(b.size == 200);
    CHECK(b.ptr != p);
    CHECK(a.buckets()[2].owns(Block{b.ptr, 256}) == Ternary::yes);
    CHECK(a.reallocate(b, 0));
    CHECK(!b);
  }
  SUBCASE("D: aligned_allocate over bitmapped blocks") {
    using B = alloy::BitmappedBlock<64, 8>;
    std::vector<std::byte> mem(8 * 1024);
    Bucketizer<B, 65, 512, 64> a([&](std::size_t i) { return B(std::span<std::byte>(mem.data() + i * 1024, 1024)); });
    Block b = a.aligned_allocate(100, 16);
    CHECK(b.size == 100);
    CHECK(alloy::is_aligned(b.ptr, 16));
    CHECK(!a.aligned_allocate(42, 16));  // below Min
    CHECK(!a.aligned_allocate(0, 16));
    CHECK(a.deallocate(b));
  }
  SUBCASE("the bucket's allocator gets the bucket's size, in and out") {
    Bucketizer<Heap, 1, 256, 32> a;
    Block b = a.allocate(33);
    CHECK(a.buckets()[1].live_blocks() == 1);
    CHECK(a.buckets()[1].live_bytes() == 64);
    CHECK(a.expand(b, 31));
    CHECK(!a.expand(b, 1));
    CHECK(b.size == 64);
    CHECK(a.deallocate(b));  // CheckedHeap fails the test unless {ptr, 64} comes back
    CHECK(a.buckets()[1].live_blocks() == 0);
    CHECK(!a.allocate(257));
    CHECK(a.good_alloc_size(257) == 272);  // outside [Min, Max]: the alignment's rounding
    CHECK(a.good_alloc_size(SIZE_MAX) == 0);
    CHECK(a.good_alloc_size(1) == 32);
  }
}

TEST_CASE("Bucketizer: stream-ordered calls go to the bucket") {
  using H = alloy::test::StreamHeap<>;
  BS a;
  const std::size_t s0 = H::stream_allocs, f0 = H::stream_frees, live0 = H::live;
  Block b = a.allocate(alloy::stream_view{}, 100);
  CHECK(b.size == 100);
  CHECK(H::stream_allocs == s0 + 1);
  CHECK(a.deallocate(alloy::stream_view{}, b));
  CHECK(H::stream_frees == f0 + 1);
  CHECK(!a.allocate(alloy::stream_view{}, 300));
  CHECK(H::live == live0);
}
