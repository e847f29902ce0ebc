// ctest-labels: heavy
#include <alloy/quantizer.hpp>

#include <alloy/aligned_mallocator.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/region.hpp>

#include <cstring>
#include <span>

#include <doctest/doctest.h>

#include "support/bitmapped_block_model.hpp"
#include "support/combinator_support.hpp"
#include "support/conformance.hpp"
#include "support/differential.hpp"
#include "support/test_allocators.hpp"

using alloy::Block;
using alloy::Quantizer;
using alloy::RoundUpToMultipleOf;
using alloy::RoundUpToPowerOfTwo;
using alloy::Ternary;
using BB16 = alloy::BitmappedBlock<16, 16>;  // over a span
using Heap = alloy::test::CheckedHeap<16, alloy::test::caps::aligned | alloy::test::caps::expand>;

// The roundings.
static_assert(RoundUpToMultipleOf<48>{}(1) == 48 && RoundUpToMultipleOf<48>{}(48) == 48 &&
              RoundUpToMultipleOf<48>{}(49) == 96 && RoundUpToMultipleOf<48>{}(SIZE_MAX) == 0);
static_assert(RoundUpToPowerOfTwo{}(0) == 0 && RoundUpToPowerOfTwo{}(1) == 1 && RoundUpToPowerOfTwo{}(3) == 4 &&
              RoundUpToPowerOfTwo{}(4096) == 4096 && RoundUpToPowerOfTwo{}(4097) == 8192 &&
              RoundUpToPowerOfTwo{}((SIZE_MAX >> 1) + 1) == (SIZE_MAX >> 1) + 1 &&
              RoundUpToPowerOfTwo{}((SIZE_MAX >> 1) + 2) == 0);

// Capabilities: expand and good_alloc_size always; reallocate when Parent's bytes can be moved; the rest iff Parent.
using QM = Quantizer<alloy::Mallocator, RoundUpToMultipleOf<64>>;
static_assert(alloy::has_expand<QM> && alloy::has_reallocate<QM> && alloy::has_deallocate<QM> &&
              alloy::has_good_alloc_size<QM>);
static_assert(!alloy::has_owns<QM> && !alloy::has_aligned_allocate<QM> && !alloy::has_aligned_reallocate<QM> &&
              !alloy::has_empty<QM> && !alloy::has_deallocate_all<QM> && !alloy::has_allocate_all<QM>);
using QB = Quantizer<BB16, RoundUpToMultipleOf<48>>;
static_assert(alloy::has_owns<QB> && alloy::has_empty<QB> && alloy::has_deallocate_all<QB> &&
              alloy::has_aligned_allocate<QB> && alloy::has_aligned_reallocate<QB> && !alloy::has_allocate_all<QB>);
using QD = Quantizer<alloy::NoAccessAllocator, RoundUpToMultipleOf<8192>>;
static_assert(QD::memory_space == alloy::MemorySpace::device && alloy::has_copy<QD> && alloy::has_reallocate<QD> &&
              alloy::has_owns<QD> && QD::alignment == 4096);
using QS = Quantizer<alloy::test::StreamHeap<>, RoundUpToPowerOfTwo>;
static_assert(alloy::has_stream_ordered<QS> && !alloy::has_stream_ordered<QM>);
static_assert(sizeof(QM) == 1);  // a stateless parent and rounding cost nothing

// A rounding whose call operator is not constexpr is checked at run time only (ALLOY_ASSERT).
struct RuntimeRounding {
  std::size_t operator()(std::size_t n) const noexcept { return n > SIZE_MAX - 100 ? 0 : n + 100; }
};
static_assert(alloy::allocator<Quantizer<alloy::Mallocator, RuntimeRounding>>);

// D's example rounding: cache lines for small sizes, pages for large ones.
struct CacheLineOrPage {
  constexpr std::size_t operator()(std::size_t n) const noexcept {
    return n <= 16384 ? RoundUpToMultipleOf<64>{}(n) : RoundUpToMultipleOf<4096>{}(n);
  }
};

alignas(4096) static std::byte g_mem[1 << 16];

TEST_CASE("Quantizer: conformance") {
  alloy::test::check_allocator([] { return QM(); });
  alloy::test::check_allocator([] { return Quantizer<Heap, RoundUpToMultipleOf<100>>(); });  // exact sizes back
  alloy::test::check_allocator([] { return Quantizer<Heap, RoundUpToPowerOfTwo>(); });
  alloy::test::check_allocator([] { return QB(BB16(std::span<std::byte>(g_mem, 16 * 1024))); });
  alloy::test::check_allocator([] { return Quantizer<alloy::AlignedMallocator, CacheLineOrPage>(); });
  alloy::test::check_allocator([] { return Quantizer<alloy::Mallocator, RuntimeRounding>(); });
  alloy::test::check_allocator([] { return QS(); });
}

TEST_CASE("Quantizer: over device memory (NoAccessAllocator) it never touches the memory") {
  const std::size_t before = alloy::NoAccessAllocator::live_blocks();
  {
    alloy::test::check_allocator([] { return QD(); });
    QD a;
    alloy::test::DiffOptions o;
    o.ops = 20'000;
    o.slots = 48;
    o.max_size = 20'000;
    o.max_alignment = 1 << 14;
    const auto st = alloy::test::run_differential(a, o);  // contents through copy only
    CHECK(st.allocations > 5'000);
    CHECK(st.reallocations > 500);
    CHECK(st.expansions > 500);  // within the 8 KiB quantum
  }
  CHECK(alloy::NoAccessAllocator::live_blocks() == before);
}

// The model: a BitmapModel over the same addresses that sees only quanta (multiples of 48), resizing within a
// quantum in place, through the model's own expand / reallocate across quanta.
struct QuantizerModel {
  alloy::test::BitmapModel p;
  static std::size_t q(std::size_t n) { return (n + 47) / 48 * 48; }
  Block allocate(std::size_t n) {
    const Block r = n ? p.allocate(q(n)) : Block{};
    return r ? Block{r.ptr, n} : Block{};
  }
  Block aligned_allocate(std::size_t n, std::size_t a) {
    const Block r = n ? p.aligned_allocate(q(n), a) : Block{};
    return r ? Block{r.ptr, n} : Block{};
  }
  bool deallocate(Block b) { return !b || p.deallocate(Block{b.ptr, q(b.size)}); }
  bool expand(Block& b, std::size_t d) {
    if (d == 0) return true;
    if (!b) return false;
    const std::size_t m = b.size + d;
    if (q(m) != q(b.size)) {
      Block whole{b.ptr, q(b.size)};
      if (!p.expand(whole, q(m) - q(b.size))) return false;
    }
    b.size = m;
    return true;
  }
  template <class Alloc>
  bool ends(Block& b, std::size_t n, bool& r, Alloc alloc) {
    if (!b) {
      if (n) {
        const Block nb = alloc(n);
        if (!nb) return (r = false, true);
        b = nb;
      }
      return (r = true, true);
    }
    if (n) return false;
    deallocate(b);
    b = {};
    return (r = true, true);
  }
  bool reallocate(Block& b, std::size_t n) {
    if (bool r; ends(b, n, r, [this](std::size_t m) { return allocate(m); })) return r;
    if (b.size == n || (n > b.size && expand(b, n - b.size))) return true;
    if (q(n) == q(b.size)) return (b.size = n, true);
    Block whole{b.ptr, q(b.size)};
    if (!p.reallocate(whole, q(n))) return false;
    b = Block{whole.ptr, n};
    return true;
  }
  bool aligned_reallocate(Block& b, std::size_t n, std::size_t a) {
    if (bool r; ends(b, n, r, [this, a](std::size_t m) { return aligned_allocate(m, a); })) return r;
    if (alloy::is_aligned(b.ptr, a)) {
      if (q(n) == q(b.size)) return (b.size = n, true);
      if (n > b.size && expand(b, n - b.size)) return true;
    }
    Block whole{b.ptr, q(b.size)};
    if (!p.aligned_reallocate(whole, q(n), a)) return false;
    b = Block{whole.ptr, n};
    return true;
  }
  Ternary owns(Block b) const { return b ? p.owns(Block{b.ptr, q(b.size)}) : Ternary::no; }
  Ternary empty() const { return p.empty(); }
  bool deallocate_all() { return p.deallocate_all(); }
};

TEST_CASE("Quantizer: 10^6 random operations against a model (a BitmappedBlock of 16-byte blocks, quanta of 48)") {
  QB a(BB16(std::span<std::byte>(g_mem, 16 * 1024)));
  QuantizerModel m{alloy::test::BitmapModel(a.parent().payload(), 16, a.parent().block_count(), 16, true)};
  alloy::test::DiffOptions o;
  o.seed = 0x0A7712E5;
  o.ops = 1'000'000;
  o.slots = 96;
  o.max_size = 600;
  o.max_alignment = 256;
  o.deallocate_all_every = 5'000;
  const auto st = alloy::test::run_differential(a, m, o);
  CHECK(st.ops == 1'000'000);
  CHECK(st.allocations > 200'000);
  CHECK(st.failures > 1'000);
  CHECK(st.reallocations > 50'000);
  CHECK(st.failed_reallocations > 100);
  CHECK(st.expansions > 10'000);
  CHECK(st.failed_expansions > 1'000);
  CHECK(st.deallocate_alls > 100);
  MESSAGE(st.allocations << " allocations, " << st.failures << " failures, " << st.reallocations << " reallocations");
}

TEST_CASE("Quantizer: quanta, in-place resizing, the parent's sizes") {
  SUBCASE("D: cache lines below 16 KiB, pages above") {
    Quantizer<alloy::Mallocator, CacheLineOrPage> a;
    CHECK(a.quantum(256) == 256);
    CHECK(a.quantum(257) == 320);
    CHECK(a.quantum(16385) == 20480);
    Block b = a.allocate(256);
    CHECK(b);
    CHECK(a.deallocate(b));
  }
  SUBCASE("the parent sees quanta only, in and out") {
    Quantizer<Heap, RoundUpToMultipleOf<100>> a;
    Block b = a.allocate(1);
    CHECK(a.parent().live_bytes() == 100);
    CHECK(a.expand(b, 99));             // in the quantum: no parent call
    CHECK(a.parent().live_bytes() == 100);
    CHECK(a.expand(b, 50));             // the parent's expand, by one quantum
    CHECK(a.parent().live_bytes() == 200);
    CHECK(b.size == 150);
    const void* p = b.ptr;
    CHECK(a.reallocate(b, 101));        // shrink within the quantum of 200: in place
    CHECK(b.ptr == p);
    CHECK(a.parent().live_bytes() == 200);
    CHECK(a.reallocate(b, 100));        // quantum 100: the parent's block shrinks (a move, CheckedHeap has no reallocate)
    CHECK(a.parent().live_bytes() == 100);
    CHECK(a.deallocate(b));             // CheckedHeap fails the test unless {ptr, 100} comes back
    CHECK(a.parent().live_blocks() == 0);
  }
  SUBCASE("good_alloc_size is the parent's hint of the quantum") {
    Quantizer<alloy::NoAccessAllocator, RoundUpToMultipleOf<100>> a;
    CHECK(a.good_alloc_size(1) == 4096);
    CHECK(a.good_alloc_size(4097) == 8192);  // 4100 in pages
    CHECK(a.good_alloc_size(0) == 0);
    CHECK(a.good_alloc_size(SIZE_MAX - 50) == 0);  // the rounding fails, and so does the alignment's
    QB q(BB16(std::span<std::byte>(g_mem, 16 * 4)));
    CHECK(q.good_alloc_size(1) == 48);
    CHECK(q.good_alloc_size(100) == 144);  // beyond the parent's capacity: still the quantum
    CHECK(!q.allocate(100));
  }
  SUBCASE("aligned_allocate passes the alignment on (D drops it)") {
    Quantizer<alloy::AlignedMallocator, RoundUpToMultipleOf<64>> a;
    Block b = a.aligned_allocate(10, 4096);
    CHECK(alloy::is_aligned(b.ptr, 4096));
    CHECK(b.size == 10);
    CHECK(a.deallocate(b));
  }
}

TEST_CASE("Quantizer: stream-ordered calls reach the parent with the quantum") {
  using H = alloy::test::StreamHeap<>;
  QS a;
  const std::size_t s0 = H::stream_allocs, f0 = H::stream_frees;
  Block b = a.allocate(alloy::stream_view{}, 100);
  CHECK(b.size == 100);
  CHECK(H::stream_allocs == s0 + 1);
  CHECK(a.deallocate(alloy::stream_view{}, b));
  CHECK(H::stream_frees == f0 + 1);
}
