// ctest-labels: heavy
#include <alloy/segregator.hpp>

#include <alloy/aligned_mallocator.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/null_allocator.hpp>
#include <alloy/region.hpp>

#include <cstring>
#include <span>
#include <vector>

#include <boost/mp11/integral.hpp>
#include <doctest/doctest.h>

#include "support/bitmapped_block_model.hpp"
#include "support/combinator_support.hpp"
#include "support/conformance.hpp"
#include "support/differential.hpp"

using alloy::Block;
using alloy::Segregator;
using alloy::Ternary;
using alloy::threshold;
using BB16 = alloy::BitmappedBlock<16, 16>;  // over spans
using BB64 = alloy::BitmappedBlock<64, 16>;
using BB256 = alloy::BitmappedBlock<256, 16>;
using BB1024 = alloy::BitmappedBlock<1024, 16>;
using BBM = alloy::BitmappedBlock<64, 16, alloy::Mallocator>;
using RegM = alloy::Region<alloy::Mallocator>;

// The variadic form is D's tree of binary Segregators, split at the middle threshold.
struct A1 : alloy::Mallocator {};
struct A2 : alloy::Mallocator {};
struct A3 : alloy::Mallocator {};
struct A4 : alloy::Mallocator {};
struct A5 : alloy::Mallocator {};
static_assert(std::is_base_of_v<Segregator<1, A1, Segregator<2, A2, A3>>, Segregator<1, A1, threshold<2>, A2, A3>>);
static_assert(std::is_base_of_v<Segregator<2, Segregator<1, A1, A2>, Segregator<3, A3, A4>>,
                                Segregator<1, A1, threshold<2>, A2, threshold<3>, A3, A4>>);
static_assert(std::is_base_of_v<Segregator<2, Segregator<1, A1, A2>, Segregator<3, A3, Segregator<4, A4, A5>>>,
                                Segregator<1, A1, threshold<2>, A2, threshold<3>, A3, threshold<4>, A4, A5>>);
static_assert(std::is_same_v<threshold<7>, boost::mp11::mp_size_t<7>>);  // Mp11's spelling works too

// Capabilities: D's rules (owns, deallocate, aligned_allocate, deallocate_all, empty: both; expand, reallocate: either).
using SM = Segregator<128, BBM, alloy::Mallocator>;
static_assert(alloy::has_deallocate<SM> && alloy::has_expand<SM> && alloy::has_reallocate<SM> &&
              alloy::has_good_alloc_size<SM>);
static_assert(!alloy::has_owns<SM> && !alloy::has_empty<SM> && !alloy::has_deallocate_all<SM> &&
              !alloy::has_aligned_allocate<SM> && !alloy::has_aligned_reallocate<SM> && !alloy::has_copy<SM>);
using SB = Segregator<64, BB16, threshold<256>, BB64, threshold<1024>, BB256, BB1024>;
static_assert(alloy::has_owns<SB> && alloy::has_empty<SB> && alloy::has_deallocate_all<SB> &&
              alloy::has_aligned_allocate<SB> && alloy::has_aligned_reallocate<SB> && alloy::has_expand<SB>);
static_assert(!alloy::has_resolve_internal_pointer<SB> && !alloy::has_allocate_all<SB>);
static_assert(SB::alignment == 16 && Segregator<8, alloy::Mallocator, alloy::NullAllocator>::alignment == 16);
using SMM = Segregator<128, alloy::Mallocator, alloy::AlignedMallocator>;
static_assert(alloy::has_reallocate<SMM> && !alloy::has_aligned_allocate<SMM> && alloy::has_deallocate<SMM>);
using SD = Segregator<256, alloy::BitmappedBlock<256, 64, alloy::NoAccessAllocator>, alloy::NoAccessAllocator>;
static_assert(SD::memory_space == alloy::MemorySpace::device && alloy::has_copy<SD> && alloy::has_reallocate<SD> &&
              alloy::has_owns<SD> && alloy::has_aligned_allocate<SD>);
using SS = Segregator<64, BBM, alloy::test::StreamHeap<>>;
static_assert(alloy::has_stream_ordered<SS> && !alloy::has_stream_ordered<SM>);
static_assert(sizeof(Segregator<64, alloy::Mallocator, alloy::AlignedMallocator>) == 1);

alignas(4096) static std::byte g_mem[1 << 16];

static SB make_sb() {
  std::byte* p = g_mem;
  auto take = [&p](std::size_t n) {
    std::span<std::byte> s(p, n);
    p += n;
    return s;
  };
  return SB(Segregator<64, BB16, BB64>(BB16(take(16 * 128)), BB64(take(64 * 128))),
            Segregator<1024, BB256, BB1024>(BB256(take(256 * 64)), BB1024(take(1024 * 32))));
}

TEST_CASE("Segregator: conformance") {
  alloy::test::check_allocator([] { return SM(BBM(64 * 64), alloy::Mallocator{}); });
  alloy::test::check_allocator([] { return make_sb(); });
  alloy::test::check_allocator([] { return SMM(); });
  alloy::test::check_allocator([] { return SS(BBM(64 * 64), {}); });
  // a NullAllocator range: requests there fail, the others are served
  alloy::test::check_allocator([] {
    return Segregator<16, alloy::NullAllocator, threshold<4096>, alloy::Mallocator, alloy::NullAllocator>();
  });
  alloy::test::check_allocator([] { return Segregator<64, alloy::NullAllocator, alloy::NullAllocator>(); });
}

TEST_CASE("Segregator: over device memory (NoAccessAllocator) it never touches the memory") {
  const std::size_t before = alloy::NoAccessAllocator::live_blocks();
  {
    using BBD = alloy::BitmappedBlock<256, 64, alloy::NoAccessAllocator>;
    alloy::test::check_allocator([] { return SD(BBD(256 * 64), {}); });
    SD a(BBD(256 * 64), {});
    alloy::test::DiffOptions o;
    o.ops = 20'000;
    o.slots = 48;
    o.max_size = 1200;
    o.max_alignment = 1024;
    const auto st = alloy::test::run_differential(a, o);  // contents through copy only
    CHECK(st.allocations > 5'000);
    CHECK(st.reallocations > 500);
  }
  CHECK(alloy::NoAccessAllocator::live_blocks() == before);
}

// The model: one BitmapModel per part over the same addresses, the part chosen by size in a flat table (the tree must
// agree with it), D's rules for expand (one part only) and reallocate (within a part, else move).
struct SegregatorModel {
  std::vector<std::size_t> thresholds;
  std::vector<alloy::test::BitmapModel> parts;
  std::size_t idx(std::size_t n) const {
    std::size_t k = 0;
    while (k < thresholds.size() && n > thresholds[k]) ++k;
    return k;
  }
  Block allocate(std::size_t n) { return parts[idx(n)].allocate(n); }
  Block aligned_allocate(std::size_t n, std::size_t a) { return parts[idx(n)].aligned_allocate(n, a); }
  bool deallocate(Block b) { return !b || parts[idx(b.size)].deallocate(b); }
  bool expand(Block& b, std::size_t d) {
    if (d == 0) return true;
    if (!b || b.size > SIZE_MAX - d || idx(b.size) != idx(b.size + d)) return false;
    return parts[idx(b.size)].expand(b, d);
  }
  template <class Alloc, class Within>
  bool resize(Block& b, std::size_t n, Alloc alloc, Within within) {
    if (!b) {
      if (n == 0) return true;
      const Block nb = alloc(n);
      if (!nb) return false;
      b = nb;
      return true;
    }
    if (n == 0) {
      deallocate(b);
      b = {};
      return true;
    }
    if (idx(b.size) == idx(n)) return within(parts[idx(n)]);
    const Block nb = alloc(n);
    if (!nb) return false;
    deallocate(b);
    b = nb;
    return true;
  }
  bool reallocate(Block& b, std::size_t n) {
    if (b && b.size == n) return true;
    return resize(b, n, [this](std::size_t m) { return allocate(m); },
                  [&](alloy::test::BitmapModel& p) { return p.reallocate(b, n); });
  }
  bool aligned_reallocate(Block& b, std::size_t n, std::size_t a) {
    if (b && b.size == n && alloy::is_aligned(b.ptr, a)) return true;
    return resize(b, n, [this, a](std::size_t m) { return aligned_allocate(m, a); },
                  [&](alloy::test::BitmapModel& p) { return p.aligned_reallocate(b, n, a); });
  }
  Ternary owns(Block b) const { return b ? parts[idx(b.size)].owns(b) : Ternary::no; }
  Ternary empty() const {
    Ternary e = Ternary::yes;
    for (auto& p : parts) e = e & p.empty();
    return e;
  }
  bool deallocate_all() {
    for (auto& p : parts) p.deallocate_all();
    return true;
  }
};

TEST_CASE("Segregator: 10^6 random operations against a model (variadic: four BitmappedBlocks)") {
  SB a = make_sb();
  SegregatorModel m{{64, 256, 1024}, {}};
  auto model_of = [](auto& bb) {
    return alloy::test::BitmapModel(bb.payload(), bb.block_size(), bb.block_count(), 16, true);
  };
  m.parts.push_back(model_of(a.allocator_for_size<1>()));
  m.parts.push_back(model_of(a.allocator_for_size<65>()));
  m.parts.push_back(model_of(a.allocator_for_size<257>()));
  m.parts.push_back(model_of(a.allocator_for_size<1025>()));
  alloy::test::DiffOptions o;
  o.seed = 0x5E6E6A7E;
  o.ops = 1'000'000;
  o.slots = 96;
  o.max_size = 2000;
  o.max_alignment = 512;
  o.deallocate_all_every = 5'000;
  const auto st = alloy::test::run_differential(a, m, o);
  CHECK(st.ops == 1'000'000);
  CHECK(st.allocations > 200'000);
  CHECK(st.failures > 1'000);
  CHECK(st.reallocations > 50'000);
  CHECK(st.failed_reallocations > 100);
  CHECK(st.expansions > 5'000);
  CHECK(st.failed_expansions > 5'000);
  CHECK(st.deallocate_alls > 100);
  MESSAGE(st.allocations << " allocations, " << st.failures << " failures, " << st.reallocations << " reallocations");
}

TEST_CASE("Segregator: dispatch, expand and reallocate across the threshold, D's unittests") {
  SUBCASE("D: nested and variadic forms allocate 200 and 201 bytes") {
    Segregator<4096, Segregator<128, BBM, alloy::Mallocator>, Segregator<1 << 20, alloy::Mallocator, alloy::Mallocator>>
        a(Segregator<128, BBM, alloy::Mallocator>(BBM(1 << 12), {}), {});
    Block b = a.allocate(200);
    CHECK(b.size == 200);
    CHECK(a.deallocate(b));
    Segregator<128, BBM, threshold<4096>, alloy::Mallocator, threshold<1 << 20>, alloy::Mallocator, alloy::Mallocator> v(
        Segregator<128, BBM, alloy::Mallocator>(BBM(1 << 12), {}), {});
    Block c = v.allocate(201);
    CHECK(c.size == 201);
    CHECK(v.deallocate(c));
  }
  SUBCASE("the threshold belongs to Small; 0 bytes goes nowhere") {
    SB a = make_sb();
    Block s = a.allocate(64), l = a.allocate(65);
    CHECK(a.allocator_for_size<64>().owns(s) == Ternary::yes);
    CHECK(a.allocator_for_size<65>().owns(l) == Ternary::yes);
    CHECK(a.allocator_for_size<64>().owns(l) == Ternary::no);
    CHECK(!a.allocate(0));
    CHECK(a.owns(s) == Ternary::yes);
    CHECK(a.deallocate(s));
    CHECK(a.deallocate(l));
    CHECK(a.empty() == Ternary::yes);
  }
  SUBCASE("expand stays on one side; reallocate moves across") {
    SB a = make_sb();
    Block b = a.allocate(40);
    const Block b0 = b;
    CHECK(!a.expand(b, 25));  // 65 bytes belong to the next part
    CHECK(b == b0);
    CHECK(!a.expand(b, SIZE_MAX));
    CHECK(a.expand(b, 24));   // 64: the same part, the next free 16-byte blocks
    CHECK(b.size == 64);
    std::memset(b.ptr, 0x5A, b.size);
    CHECK(a.reallocate(b, 300));  // into the 256-byte blocks
    CHECK(a.allocator_for_size<300>().owns(b) == Ternary::yes);
    CHECK(a.allocator_for_size<64>().empty() == Ternary::yes);
    CHECK(static_cast<unsigned char*>(b.ptr)[63] == 0x5A);
    CHECK(a.reallocate(b, 2));  // back into the 16-byte blocks
    CHECK(a.allocator_for_size<300>().empty() == Ternary::yes);
    CHECK(a.reallocate(b, 0));
    CHECK(!b);
    CHECK(a.empty() == Ternary::yes);
  }
  SUBCASE("good_alloc_size is that of the part the size goes to") {
    SB a = make_sb();
    CHECK(a.good_alloc_size(1) == 16);
    CHECK(a.good_alloc_size(65) == 128);
    CHECK(a.good_alloc_size(1000) == 1024);
    CHECK(a.good_alloc_size(5000) == 5120);  // beyond the last part's capacity: still its rounding
    static_assert(!alloy::has_good_alloc_size<SMM>);  // neither part has one: the generic rounding
    CHECK(alloy::good_alloc_size(SMM{}, 100) == 112);
  }
}

TEST_CASE("Segregator: stream-ordered calls reach the part that serves the size") {
  using H = alloy::test::StreamHeap<>;
  SS a(BBM(64 * 64), {});
  const std::size_t s0 = H::stream_allocs, f0 = H::stream_frees;
  Block s = a.allocate(alloy::stream_view{}, 64);
  Block l = a.allocate(alloy::stream_view{}, 65);
  CHECK(a.small().owns(s) == Ternary::yes);
  CHECK(H::stream_allocs == s0 + 1);
  CHECK(a.deallocate(alloy::stream_view{}, l));
  CHECK(a.deallocate(alloy::stream_view{}, s));
  CHECK(H::stream_frees == f0 + 1);
  CHECK(a.small().empty() == Ternary::yes);
}
