// The test kit's own audit: one correct heap (16-byte granules, every primitive, answers from BitmapModel) and
// broken variants of it, chosen with the environment variable MUT (0: correct). tests/CMakeLists.txt runs the
// correct heap through every configuration (must pass) and each mutant through check_allocator (must FAIL: ctest
// WILL_FAIL), so a change that blinds the conformance kit to a class of bug fails the suite. Mutants: 1 overlap,
// 2 wrong size, 3 aligned_allocate ignores alignment, 4 expand without a room check, 5 reallocate loses contents,
// 6 reallocate true with b unchanged, 7 deallocate frees nothing, 8 owns yes to foreign blocks, 9 empty looks at
// block 0 only, 10 deallocate_all does nothing, 11 allocate_all over live blocks, 12 good_alloc_size below n,
// 13 owns ignores the size (off by one at the end), 14 aligned_allocate leaks its padding, 15 reallocate(b, 0) keeps
// b, 16 aligned_reallocate drops the alignment when it moves, 17 good_alloc_size one too large (not a multiple of
// the alignment: caught since the kit checks good_alloc_size(n) >= round_up(n, alignment) and its rounding),
// 18 allocate_all one granule short, 19 empty always unknown, 20 resolve_internal_pointer runs into the next
// granule. Not run: 24 (never serves over-alignment: allowed). docs/architecture.md, "The kit's own audit".
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <alloy/common.hpp>
#include "support/bitmapped_block_model.hpp"
#include "support/conformance.hpp"
#include "support/differential.hpp"
#include <cstdlib>
#include <cstring>

using alloy::Block; using alloy::Ternary;
static int g_mut = std::getenv("MUT") ? std::atoi(std::getenv("MUT")) : 0;
enum : unsigned { EMPTY=1, OWNS=2, RIP=4, AALL=8, DALL=16, EXPAND=32, REALLOC=64, AREALLOC=128, ALIGNED=256, FRESH=512, GAS=1024, ALL=2047 };
constexpr std::size_t BS = 16, NB = 4096;

template <unsigned C = ALL>
struct Heap {
  static constexpr std::size_t alignment = 16;
  alignas(4096) unsigned char buf[BS * NB];
  alloy::test::BitmapModel m{buf, BS, NB, 16, true, true};
  unsigned long count = 0;
  Heap() = default;
  Heap(const Heap&) = delete;

  Block allocate(std::size_t n) noexcept {
    Block b = m.allocate(n);
    if (!b) return b;
    ++count;
    if (g_mut == 1 && count % 7 == 0) m.deallocate(b);            // forgot to mark: overlap
    if (g_mut == 2) b.size = (n + 15) & ~std::size_t{15};         // wrong size
    return b;
  }
  Block aligned_allocate(std::size_t n, std::size_t a) noexcept requires((C & ALIGNED) != 0) {
    if (g_mut == 3 && a > alignment) return allocate(n);          // ignores alignment
    if (g_mut == 24 && a > alignment) return {};                  // never serves over-alignment
    Block b = m.aligned_allocate(n, a);
    if (g_mut == 14 && b && a > alignment) {                      // leaks the block before (padding kept)
      std::size_t i = m.block_of(b.ptr);
      if (i > 0 && !m.used[i - 1]) m.set(i - 1, 1, 1);
    }
    return b;
  }
  Block allocate_fresh(std::size_t n) noexcept requires((C & FRESH) != 0) { return m.allocate_fresh(n); }
  Block allocate_all() noexcept requires((C & AALL) != 0) {
    if (g_mut == 11) { m.take(0, NB); return {buf, NB * BS}; }   // ignores live blocks
    Block b = m.allocate_all();
    if (g_mut == 18 && b) b.size -= BS;                           // not all
    return b;
  }
  bool expand(Block& b, std::size_t d) noexcept requires((C & EXPAND) != 0) {
    if (g_mut == 4 && d && b) {                                   // no room check
      const std::size_t off = alloy::address_of(b.ptr) - m.base, ne = off + b.size + d;
      if (d > SIZE_MAX / 2 || ne > NB * BS) return false;
      const std::size_t ob = m.blocks_for(off + b.size), nbk = m.blocks_for(ne);
      if (nbk > ob) { m.set(ob, nbk - ob, 1); if (nbk > m.fresh) m.fresh = nbk; m.live[m.block_of(b.ptr)] = nbk - m.block_of(b.ptr); }
      b.size += d;
      return true;
    }
    return m.expand(b, d);
  }
  bool reallocate(Block& b, std::size_t n) noexcept requires((C & REALLOC) != 0) {
    if (!b) { if (n == 0) return true; Block nb = m.allocate(n); if (!nb) return false; b = nb; return true; }
    if (n == 0) { if (g_mut == 15) return true; m.deallocate(b); b = {}; return true; }
    if (n == b.size) return true;
    if (n < b.size) { m.shrink(b, n); return true; }
    if (m.expand(b, n - b.size)) return true;
    Block nb = m.allocate(n);
    if (!nb) return false;
    if (g_mut == 6) { m.deallocate(nb); return true; }             // true, b unchanged
    if (g_mut != 5) std::memcpy(nb.ptr, b.ptr, b.size);            // 5: loses contents
    m.deallocate(b);
    b = nb;
    return true;
  }
  bool aligned_reallocate(Block& b, std::size_t n, std::size_t a) noexcept requires((C & AREALLOC) != 0) {
    if (!alloy::is_power_of_two(a)) return false;
    if (!b) { if (n == 0) return true; Block nb = m.aligned_allocate(n, a); if (!nb) return false; b = nb; return true; }
    if (n == 0) { m.deallocate(b); b = {}; return true; }
    if (alloy::is_aligned(b.ptr, a)) {
      if (n <= b.size) { if (n < b.size) m.shrink(b, n); return true; }
      if (m.expand(b, n - b.size)) return true;
    }
    Block nb = g_mut == 16 ? m.allocate(n) : m.aligned_allocate(n, a);   // 16: ignores alignment
    if (!nb) return false;
    std::memcpy(nb.ptr, b.ptr, std::min(n, b.size));
    m.deallocate(b);
    b = nb;
    return true;
  }
  bool deallocate(Block b) noexcept {
    if (g_mut == 7) return true;                                   // does not free
    return m.deallocate(b);
  }
  bool deallocate_all() noexcept requires((C & DALL) != 0) {
    if (g_mut == 10) return true;                                  // leaves blocks live
    return m.deallocate_all();
  }
  Ternary owns(Block b) const noexcept requires((C & OWNS) != 0) {
    if (g_mut == 8) return alloy::to_ternary(b.ptr != nullptr);    // yes to foreign
    if (g_mut == 13) {                                             // ignores size, off-by-one at the end
      const auto p = alloy::address_of(b.ptr);
      return alloy::to_ternary(b && p >= m.base && p - m.base <= NB * BS);
    }
    return m.owns(b);
  }
  Ternary empty() const noexcept requires((C & EMPTY) != 0) {
    if (g_mut == 9) return alloy::to_ternary(!m.used[0]);          // looks at block 0 only
    if (g_mut == 19) return Ternary::unknown;                      // never knows
    return m.empty();
  }
  Ternary resolve_internal_pointer(const void* p, Block& r) const noexcept requires((C & RIP) != 0) {
    if (g_mut == 20) {  // answers for the whole granule run it is in, ignores free space past a live block's end
      Ternary t = m.resolve_internal_pointer(p, r);
      if (t == Ternary::yes) r.size += BS;
      return t;
    }
    return m.resolve_internal_pointer(p, r);
  }
  void* payload() const noexcept requires((C & RIP) != 0) { return const_cast<unsigned char*>(buf); }
  std::size_t block_count() const noexcept requires((C & RIP) != 0) { return NB; }
  std::size_t block_size() const noexcept requires((C & RIP) != 0) { return BS; }
  std::size_t good_alloc_size(std::size_t n) noexcept requires((C & GAS) != 0) {
    if (g_mut == 12) return n > 16 ? n - 1 : 16;                   // smaller than n
    if (g_mut == 17) return n + 1;                                 // not what allocate(n) reserves; allocate(g) size ok
    std::size_t r = 0;
    return alloy::round_up_checked(n, alignment, r) ? r : 0;
  }
};

template <unsigned C> Heap<C> make() { return {}; }

alloy::test::DiffOptions opts() {
  alloy::test::DiffOptions o;
  o.slots = 128;
  o.ops = 60'000;
  o.deallocate_all_every = 6'000;
  o.allocate_all_every = 2'000;
  return o;
}

template <unsigned C> void diffM() {
  Heap<C> a;
  alloy::test::BitmapModel model{a.buf, BS, NB, 16, true, true};
  auto st = alloy::test::run_differential(a, model, opts());
  MESSAGE("allocs " << st.allocations << " fails " << st.failures << " deallocs " << st.deallocations << " exp " << st.expansions << "/" << st.failed_expansions << " realloc " << st.reallocations << "/" << st.failed_reallocations << " dall " << st.deallocate_alls << " aall " << st.allocate_alls << " peak " << st.peak_live);
}
template <unsigned C> void diffN() {
  Heap<C> a;
  auto st = alloy::test::run_differential(a, opts());
  MESSAGE("allocs " << st.allocations << " fails " << st.failures << " deallocs " << st.deallocations << " exp " << st.expansions << " realloc " << st.reallocations << " dall " << st.deallocate_alls << " aall " << st.allocate_alls << " peak " << st.peak_live);
}
constexpr unsigned NOEMPTY = ALL & ~EMPTY;
TEST_CASE("conf") { alloy::test::check_allocator([] { return make<ALL>(); }); }
TEST_CASE("diffM") { diffM<ALL>(); }
TEST_CASE("diffN") { diffN<ALL>(); }
TEST_CASE("conf_noempty") { alloy::test::check_allocator([] { return make<NOEMPTY>(); }); }
TEST_CASE("diffM_noempty") { diffM<NOEMPTY>(); }
TEST_CASE("diffN_noempty") { diffN<NOEMPTY>(); }
constexpr unsigned BARE = ALIGNED | EXPAND | REALLOC | AREALLOC | DALL;
TEST_CASE("conf_bare") { alloy::test::check_allocator([] { return make<BARE>(); }); }
TEST_CASE("diffN_bare") { diffN<BARE>(); }
