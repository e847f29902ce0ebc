// AllocatorList's node storage on its own (detail::AllocatorListNodes): the out-of-band form (the array in memory from
// the bookkeeping allocator) and the in-band form (the array inside one of the allocators, its "home"), checked in
// lockstep against a plain model of the slots under randomized acquire / release / clear, with the allocators' own
// blocks taken and freed in between (so that the home sometimes can expand the array in place and sometimes not).
#include <alloy/allocator_list.hpp>

#include <alloy/null_allocator.hpp>
#include <alloy/region.hpp>

#include <algorithm>
#include <cstddef>
#include <map>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "support/rng.hpp"
#include "support/test_length.hpp"

using alloy::Block;
using alloy::Ternary;

namespace {

// malloc that counts its live blocks, so that a test can see every byte go back.
struct CountingMalloc {
  static constexpr std::size_t alignment = alloy::platform_alignment;
  static inline long live = 0;
  Block allocate(std::size_t n) noexcept {
    const Block b = alloy::Mallocator::instance.allocate(n);
    if (b) ++live;
    return b;
  }
  bool deallocate(Block b) noexcept {
    if (b) --live;
    return alloy::Mallocator::instance.deallocate(b);
  }
};

// A region with an identity, so that the model can follow each allocator through the array's moves. Expand = false
// leaves out expand: the in-band array then always moves to a new allocator when it grows.
template <bool Expand>
struct Tagged {
  alloy::Region<CountingMalloc> r;
  std::size_t id;
  static constexpr std::size_t alignment = alloy::platform_alignment;
  Block allocate(std::size_t n) noexcept { return r.allocate(n); }
  bool expand(Block& b, std::size_t d) noexcept requires Expand { return r.expand(b, d); }
  bool deallocate(Block b) noexcept { return r.deallocate(b); }
  Ternary owns(Block b) const noexcept { return r.owns(b); }
};

template <class A, class B>
using Nodes = alloy::detail::AllocatorListNodes<A, B>;
constexpr std::size_t npos = SIZE_MAX;

static_assert(!Nodes<Tagged<true>, CountingMalloc>::in_band && Nodes<Tagged<true>, alloy::NullAllocator>::in_band);
// The storage is the array, its capacity and the free chain; in-band also the home's slot. A stateless
// bookkeeping allocator costs nothing.
static_assert(sizeof(Nodes<Tagged<true>, CountingMalloc>) == 3 * sizeof(void*));
static_assert(sizeof(Nodes<Tagged<true>, alloy::NullAllocator>) == 4 * sizeof(void*));
static_assert(std::is_nothrow_move_constructible_v<Nodes<Tagged<true>, CountingMalloc>> &&
              !std::is_copy_constructible_v<Nodes<Tagged<true>, CountingMalloc>>);

// The model: which slots are used, by which allocator (its id), with which live count; which slot is the home.
struct Entry {
  std::size_t id;
  std::size_t live;
  std::vector<Block> blocks;  // taken from the allocator by the test, newest last
};

template <class A, class B>
struct Harness {
  static constexpr bool in_band = Nodes<A, B>::in_band;
  Nodes<A, B> nodes;
  std::map<std::size_t, Entry> used;
  std::size_t capacity = 0;
  std::size_t home = npos;
  std::size_t next_id = 1;
  std::size_t asked = 0;  // the n the last make was given
  bool fail_make = false;
  alloy::test::Rng rng;

  bool make(void* where, std::size_t n) noexcept {
    if (fail_make) return false;
    asked = n;
    ::new (where) A{alloy::Region<CountingMalloc>(std::max<std::size_t>(n, 2048)), next_id++};
    return true;
  }

  // Everything the storage answers, against the model: "" when they agree.
  std::string verify() {
    std::ostringstream err;
    if (nodes.capacity() != capacity) err << "capacity " << nodes.capacity() << " != " << capacity << "; ";
    std::size_t homes = 0;
    for (std::size_t i = 0; i < nodes.capacity(); ++i) {
      const auto it = used.find(i);
      if (nodes[i].used != (it != used.end())) err << "slot " << i << " used " << nodes[i].used << "; ";
      if (nodes.holds_array(i)) ++homes;
      if (it == used.end()) continue;
      if (nodes[i].a().id != it->second.id) err << "slot " << i << " holds allocator " << nodes[i].a().id << "; ";
      if (nodes[i].live != it->second.live) err << "slot " << i << " live " << nodes[i].live << "; ";
    }
    if (capacity == 0) return err.str();
    const Block array{&nodes[0], capacity * sizeof(nodes[0])};
    if constexpr (in_band) {
      if (homes != 1 || !nodes.holds_array(home)) err << "home " << home << " (" << homes << " homes); ";
      if (!nodes.is_array(array) || !nodes.is_array({array.ptr, 1})) err << "is_array misses the array; ";
      if (home != npos && nodes[home].a().owns(array) != Ternary::yes) err << "the home does not own the array; ";
    } else {
      if (homes != 0 || nodes.is_array(array)) err << "out-of-band, an allocator holds the array; ";
    }
    for (const auto& [slot, e] : used) {
      if (!e.blocks.empty() && nodes.is_array(e.blocks.front())) err << "a block of slot " << slot << " is the array; ";
      if constexpr (!in_band) {
        if (nodes[slot].a().owns(array) == Ternary::yes) err << "slot " << slot << " owns the array; ";
      }
    }
    return err.str();
  }

  void acquire() {
    const std::size_t n = 1 + rng.below(rng.chance(10) ? 20'000 : 1500);
    fail_make = rng.chance(3);
    const bool full = used.size() == capacity;
    const std::size_t old_home = home;
    const auto [p, vacated] = nodes.acquire(n, [this](void* where, std::size_t m) noexcept { return make(where, m); });
    if (fail_make) {  // no allocator, nothing moved; the array may have doubled before make failed
      REQUIRE(p == npos);
      REQUIRE(vacated == npos);
      const std::size_t doubled = capacity ? 2 * capacity : 4;
      if (!full) CHECK(nodes.capacity() == capacity);
      else if (!in_band) CHECK(nodes.capacity() == doubled);  // out-of-band, the array grows first
      else CHECK((nodes.capacity() == capacity || nodes.capacity() == doubled));  // in place, or no move
      capacity = nodes.capacity();
      return;
    }
    REQUIRE(p != npos);
    REQUIRE(!used.count(p));
    REQUIRE(nodes[p].used);
    CHECK(nodes[p].live == 0);
    CHECK(nodes[p].next == npos);
    if (full) capacity = capacity ? 2 * capacity : 4;  // no free slot: the array doubled
    CHECK(nodes.capacity() == capacity);
    used[p] = Entry{next_id - 1, 0, {}};
    // The new allocator serves the request, even when it also took the array.
    const Block b = nodes[p].a().allocate(n);
    CHECK(b.size == n);
    if (b) used[p].blocks.push_back(b);
    if constexpr (in_band) {
      if (nodes.holds_array(p)) {  // the array moved into p, made for n plus the array
        CHECK(full);
        CHECK(vacated == old_home);
        CHECK(asked > n + capacity * sizeof(nodes[0]));
        home = p;
        if (vacated != npos && rng.chance(50)) release(vacated);  // the list destroys it when it holds no block
      } else {
        CHECK(vacated == npos);  // a free slot, or the home expanded the array in place
        CHECK(asked == n);
      }
    } else {
      CHECK(vacated == npos);
      CHECK(asked == n);
    }
  }

  void release(std::size_t p) {
    REQUIRE(used.count(p));
    REQUIRE(!nodes.holds_array(p));
    nodes.release(p);
    used.erase(p);
  }

  std::size_t random_used() {
    auto it = used.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(rng.below(used.size())));
    return it->first;
  }

  void step() {
    const unsigned op = static_cast<unsigned>(rng.below(100));
    if (op < 35 || used.empty()) {
      acquire();
    } else if (op < 60) {  // release an allocator that does not hold the array
      const std::size_t p = random_used();
      if (!nodes.holds_array(p)) release(p);
    } else if (op < 75) {  // the list's live counts travel with the nodes
      const std::size_t p = random_used();
      nodes[p].live = used[p].live = rng.below(1000);
    } else if (op < 90) {  // a block from an allocator: over the home, the array can then no longer expand in place
      const std::size_t p = random_used();
      if (const Block b = nodes[p].a().allocate(1 + rng.below(600))) used[p].blocks.push_back(b);
    } else if (op < 99) {  // the newest block back
      const std::size_t p = random_used();
      auto& bs = used[p].blocks;
      if (!bs.empty()) {
        CHECK(nodes[p].a().deallocate(bs.back()));
        bs.pop_back();
      }
    } else if (rng.chance(10)) {
      nodes.clear();
      used.clear();
      capacity = 0;
      home = npos;
    }
  }
};

template <class A, class B>
void run_model(std::uint64_t seed, std::size_t ops) {
  const long before = CountingMalloc::live;
  std::size_t peak_capacity = 0, moves = 0, grows = 0, in_place = 0;
  {
    Harness<A, B> h;
    h.rng.x = seed;
    for (std::size_t i = 0; i < ops; ++i) {
      const std::size_t cap = h.capacity, home = h.home;
      if (h.used.size() > 150) {  // keep the array within a few doublings
        const std::size_t p = h.random_used();
        if (!h.nodes.holds_array(p)) h.release(p);
      } else {
        h.step();
      }
      grows += h.capacity > cap;
      moves += h.capacity > cap && h.home != home && home != npos;
      in_place += h.capacity > cap && h.home == home && home != npos;
      peak_capacity = std::max(peak_capacity, h.capacity);
      const std::string err = h.verify();
      if (!err.empty()) FAIL("step " << i << ": " << err);
    }
    MESSAGE("in-band " << Harness<A, B>::in_band << ": " << grows << " growths, " << moves
                       << " moves to a new home, " << in_place << " in place, peak capacity " << peak_capacity);
    CHECK(grows > 5);
    if constexpr (Harness<A, B>::in_band) {
      CHECK(moves > 2);
      CHECK((in_place > 2) == alloy::has_expand<A>);
    }
    // Moved-from storage is empty; the target keeps every allocator.
    Nodes<A, B> moved(std::move(h.nodes));
    CHECK(h.nodes.capacity() == 0);  // NOLINT(bugprone-use-after-move): the moved-from state is what is tested
    CHECK(moved.capacity() == h.capacity);
    for (const auto& [slot, e] : h.used) CHECK(moved[slot].a().id == e.id);
  }
  CHECK(CountingMalloc::live == before);  // every allocator and the array went back
}

}  // namespace

TEST_CASE_TEMPLATE("AllocatorListNodes: randomized against a model of the slots", A, Tagged<true>, Tagged<false>) {
  const std::size_t ops = alloy::test::test_length(1'000'000);
  SUBCASE("out-of-band") { run_model<A, CountingMalloc>(11, ops); }
  SUBCASE("in-band") { run_model<A, alloy::NullAllocator>(12, ops); }
}

TEST_CASE("AllocatorListNodes, in-band: the first allocator holds the array; growth in place, then a move") {
  using N = Nodes<Tagged<true>, alloy::NullAllocator>;
  using Node = N::Node;
  const long before = CountingMalloc::live;
  {
    N nodes;
    std::size_t id = 0;
    auto make = [&](void* where, std::size_t n) noexcept {
      ::new (where) Tagged<true>{alloy::Region<CountingMalloc>(n), ++id};
      return true;
    };
    const auto [p0, v0] = nodes.acquire(100, make);
    REQUIRE(p0 != npos);
    CHECK(v0 == npos);
    CHECK(nodes.capacity() == 4);
    CHECK(nodes.holds_array(p0));
    // The region holds exactly the array so far (made for the request, the array and slack).
    auto& r = nodes[p0].a().r;
    CHECK(r.capacity() - r.available() == 4 * sizeof(Node));
    CHECK(nodes.is_array({&nodes[0], 4 * sizeof(Node)}));
    CHECK_FALSE(nodes.is_array({}));
    // Three more slots, then the array doubles in place: the home's region has room above it.
    std::vector<std::size_t> slots;
    for (int i = 0; i < 4; ++i) slots.push_back(nodes.acquire(10, make).slot);
    CHECK(nodes.capacity() == 8);
    CHECK(nodes.holds_array(p0));
    CHECK(r.capacity() - r.available() == 8 * sizeof(Node));
    // A block above the array: the next growth moves the array to a new allocator, which is the one acquired.
    const Block above = r.allocate(16);
    REQUIRE(above);
    for (int i = 0; i < 3; ++i) slots.push_back(nodes.acquire(10, make).slot);
    CHECK(nodes.capacity() == 8);
    const auto [p1, v1] = nodes.acquire(10, make);
    CHECK(nodes.capacity() == 16);
    CHECK(nodes.holds_array(p1));
    CHECK_FALSE(nodes.holds_array(p0));
    CHECK(v1 == p0);
    CHECK(nodes[p0].a().id == 1);  // the old home is still there (the list decides whether it goes)
    CHECK(nodes[p1].a().owns({&nodes[0], 16 * sizeof(Node)}) == Ternary::yes);
    nodes.release(p0);
    CHECK(nodes.acquire(10, make).slot == p0);  // the freed slot is reused first
  }
  CHECK(CountingMalloc::live == before);
}

TEST_CASE("AllocatorListNodes, out-of-band: the array comes from the bookkeeping allocator; make failing") {
  using N = Nodes<Tagged<true>, CountingMalloc>;
  const long before = CountingMalloc::live;
  {
    N nodes;
    bool fail = true;
    auto make = [&](void* where, std::size_t n) noexcept {
      if (fail) return false;
      ::new (where) Tagged<true>{alloy::Region<CountingMalloc>(std::max<std::size_t>(n, 64)), 1};
      return true;
    };
    CHECK(nodes.acquire(10, make).slot == npos);  // the array was made, the allocator not
    CHECK(nodes.capacity() == 4);
    CHECK(CountingMalloc::live == before + 1);
    fail = false;
    const std::size_t p = nodes.acquire(10, make).slot;
    CHECK(p == 0);
    CHECK(CountingMalloc::live == before + 2);
    CHECK_FALSE(nodes.holds_array(p));
    nodes.clear();
    CHECK(nodes.capacity() == 0);
    CHECK(CountingMalloc::live == before);
    CHECK(nodes.acquire(10, make).slot == 0);
  }
  CHECK(CountingMalloc::live == before);
}
