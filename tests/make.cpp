#include <alloy/make.hpp>

#include <alloy/aligned_mallocator.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/null_allocator.hpp>
#include <alloy/ref.hpp>

#include <csignal>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "support/child_process.hpp"
#include "support/rng.hpp"
#include "support/test_allocators.hpp"

using alloy::test::BumpArena;
using alloy::test::CheckedHeap;
namespace caps = alloy::test::caps;
using Heap = CheckedHeap<16>;                                 // allocate + deallocate: every fallback path
using ExpandHeap = CheckedHeap<16, caps::expand>;             // grows in place
using AlignedHeap = CheckedHeap<16, caps::aligned>;           // over-aligned types

struct Boom {};

// Counts live objects, and throws from the k-th construction from now when told to (countdown). NothrowMove: whether
// the move constructor is noexcept (then it never throws; else it may, and move_if_noexcept copies instead).
template <bool NothrowMove>
struct TrackedT {
  static inline long live = 0;
  static inline long countdown = -1;  // < 0: never throw
  static inline std::vector<int> destroyed;
  int v = 0;
  static void maybe_throw() {
    if (countdown >= 0 && countdown-- == 0) throw Boom{};
  }
  TrackedT() { maybe_throw(); ++live; }
  explicit TrackedT(int x) : v(x) { maybe_throw(); ++live; }
  TrackedT(int x, int y) : v(x * 100 + y) { maybe_throw(); ++live; }
  TrackedT(const TrackedT& o) : v(o.v) { maybe_throw(); ++live; }
  TrackedT(TrackedT&& o) noexcept(NothrowMove) : v(o.v) {
    if constexpr (!NothrowMove) maybe_throw();
    ++live;
  }
  TrackedT& operator=(const TrackedT&) = default;
  ~TrackedT() {
    --live;
    destroyed.push_back(v);
  }
  static void reset() {
    countdown = -1;
    destroyed.clear();
  }
};
using Tracked = TrackedT<true>;
using TrackedThrowingMove = TrackedT<false>;
static_assert(!std::is_trivially_copyable_v<Tracked>);

// Trivially copyable, but its default constructor may throw: the byte-copy paths must not be used for new elements.
struct TrivialThrowing {
  static inline long countdown = -1;
  int v;
  TrivialThrowing() : v(7) {
    if (countdown >= 0 && countdown-- == 0) throw Boom{};
  }
};
static_assert(std::is_trivially_copyable_v<TrivialThrowing>);

// Not trivially copyable, but nothing about it throws: expand_array may grow it in place.
struct Quiet {
  static inline long live = 0;
  int v = 0;
  Quiet() noexcept { ++live; }
  explicit Quiet(int x) noexcept : v(x) { ++live; }
  Quiet(const Quiet& o) noexcept : v(o.v) { ++live; }
  ~Quiet() { --live; }
};
static_assert(!std::is_trivially_copyable_v<Quiet>);

struct alignas(64) Wide {
  unsigned char bytes[64];
};
struct Aggregate {
  int a;
  double b;
};

// ---------------------------------------------------------------------------------------------------------------
// make / dispose

TEST_CASE("make: constructs from arguments, dispose destroys and frees") {
  Tracked::reset();
  Heap h;
  Tracked* p = alloy::make<Tracked>(h, 4, 2);
  REQUIRE(p != nullptr);
  CHECK(p->v == 402);
  CHECK(Tracked::live == 1);
  CHECK(h.live_bytes() == sizeof(Tracked));
  CHECK(alloy::is_aligned(p, alignof(Tracked)));
  CHECK(alloy::dispose(h, p));
  CHECK(Tracked::live == 0);
  CHECK(h.live_blocks() == 0);

  int* i = alloy::make<int>(h);  // value-initialized
  REQUIRE(i);
  CHECK(*i == 0);
  CHECK(alloy::dispose(h, i));
  Aggregate* ag = alloy::make<Aggregate>(h, 3, 2.5);  // aggregates: brace-initialized
  REQUIRE(ag);
  CHECK(ag->a == 3);
  CHECK(ag->b == 2.5);
  CHECK(alloy::dispose(h, ag));
  const std::string* s = alloy::make<const std::string>(h, 3, 'x');
  REQUIRE(s);
  CHECK(*s == "xxx");
  CHECK(alloy::dispose(h, s));
  CHECK(alloy::dispose(h, static_cast<int*>(nullptr)));
  CHECK(h.live_blocks() == 0);
}

TEST_CASE("make: allocation failure gives nullptr and constructs nothing") {
  Tracked::reset();
  Heap h;
  h.fail_after(0);
  CHECK(alloy::make<Tracked>(h, 1) == nullptr);
  CHECK(Tracked::live == 0);
  alloy::NullAllocator n;
  CHECK(alloy::make<int>(n, 5) == nullptr);
}

TEST_CASE("make: a throwing constructor frees the memory and propagates") {
  Tracked::reset();
  Heap h;
  Tracked::countdown = 0;
  CHECK_THROWS_AS(alloy::make<Tracked>(h, 1), Boom);
  CHECK(Tracked::live == 0);
  CHECK(h.live_blocks() == 0);
  CHECK(h.allocations() == 1);
  Tracked::reset();
}

TEST_CASE("make: noexcept follows the constructor") {
  Heap h;
  static_assert(noexcept(alloy::make<int>(h, 1)));
  static_assert(noexcept(alloy::make<Aggregate>(h, 1, 2.0)));
  static_assert(!noexcept(alloy::make<Tracked>(h, 1)));
  static_assert(!noexcept(alloy::make<std::string>(h, "x")));
  static_assert(noexcept(alloy::make_array<int>(h, 3)));
  static_assert(!noexcept(alloy::make_array<Tracked>(h, 3)));
  static_assert(noexcept(alloy::dispose(h, static_cast<Tracked*>(nullptr))));
}

TEST_CASE("make: over-aligned types use aligned_allocate") {
  alloy::AlignedMallocator am;
  Wide* w = alloy::make<Wide>(am);
  REQUIRE(w);
  CHECK(alloy::is_aligned(w, 64));
  CHECK(alloy::dispose(am, w));
  AlignedHeap h;
  for (int i = 0; i < 16; ++i) {
    Wide* x = alloy::make<Wide>(h);
    REQUIRE(x);
    CHECK(alloy::is_aligned(x, 64));
    CHECK(alloy::dispose(h, x));
  }
  std::span<Wide> s = alloy::make_array<Wide>(h, 5);
  CHECK(alloy::is_aligned(s.data(), 64));
  CHECK(alloy::expand_array(h, s, 100));  // trivially copyable: aligned_reallocate keeps the alignment
  CHECK(alloy::is_aligned(s.data(), 64));
  CHECK(alloy::shrink_array(h, s, 50));
  CHECK(alloy::is_aligned(s.data(), 64));
  CHECK(s.size() == 55);
  CHECK(alloy::dispose(h, s));
  CHECK(h.live_blocks() == 0);
}

TEST_CASE("make: over an allocator without deallocate, dispose destroys and reports false") {
  Tracked::reset();
  BumpArena<1024> arena;
  Tracked* p = alloy::make<Tracked>(arena, 9);
  REQUIRE(p);
  CHECK_FALSE(alloy::dispose(arena, p));
  CHECK(Tracked::live == 0);
  std::span<Tracked> s = alloy::make_array<Tracked>(arena, 3);
  CHECK(alloy::expand_array(arena, s, 2));  // a new block: the old one stays in the arena
  CHECK(Tracked::live == 5);
  CHECK_FALSE(alloy::dispose(arena, s));
  CHECK(Tracked::live == 0);
}

TEST_CASE("make: works through Ref and on a const stateless instance") {
  Heap h;
  alloy::Ref<Heap> r(h);
  int* p = alloy::make<int>(r, 5);
  REQUIRE(p);
  CHECK(h.live_blocks() == 1);
  CHECK(alloy::dispose(r, p));
  double* d = alloy::make<double>(alloy::Mallocator::instance, 1.5);
  REQUIRE(d);
  CHECK(*d == 1.5);
  CHECK(alloy::dispose(alloy::Mallocator::instance, d));
}

// ---------------------------------------------------------------------------------------------------------------
// make_array / dispose(span)

TEST_CASE("make_array: sizes, values, failure, overflow") {
  Tracked::reset();
  Heap h;
  CHECK(alloy::make_array<int>(h, 0).empty());
  CHECK(h.allocations() == 0);
  CHECK(alloy::make_array<int>(h, SIZE_MAX / 2).empty());  // n * sizeof(int) overflows: no request at all
  CHECK(alloy::make_array<Wide>(alloy::AlignedMallocator::instance, SIZE_MAX / 64 + 1).empty());
  CHECK(h.allocations() == 0);
  CHECK(alloy::make_array<int>(h, SIZE_MAX / 8).empty());  // fits in size_t, but the heap refuses
  std::span<int> z = alloy::make_array<int>(h, 10);
  REQUIRE(z.size() == 10);
  for (int x : z) CHECK(x == 0);  // value-initialized
  CHECK(h.live_bytes() == 10 * sizeof(int));
  CHECK(alloy::dispose(h, z));
  std::span<Tracked> t = alloy::make_array<Tracked>(h, 4, Tracked(7));
  REQUIRE(t.size() == 4);
  CHECK(Tracked::live == 4);
  for (const Tracked& x : t) CHECK(x.v == 7);
  t[0].v = 0, t[1].v = 1, t[2].v = 2, t[3].v = 3;
  Tracked::destroyed.clear();
  CHECK(alloy::dispose(h, t));
  CHECK(Tracked::destroyed == std::vector<int>{3, 2, 1, 0});  // last first
  CHECK(Tracked::live == 0);
  CHECK(alloy::dispose(h, std::span<Tracked>{}));
  std::span<int> dyn = alloy::make_array<int>(h, 3, 1);
  CHECK(alloy::dispose(h, std::span<int, 3>(dyn.data(), 3)));  // a fixed extent works too
  h.fail_after(0);
  CHECK(alloy::make_array<Tracked>(h, 3).empty());
  CHECK(Tracked::live == 0);
  CHECK(h.live_blocks() == 0);
}

TEST_CASE("make_array: a constructor throwing at each position destroys what was built and frees") {
  Heap h;
  constexpr long n = 6;
  for (long k = 0; k < n; ++k) {
    Tracked::reset();
    Tracked::countdown = k;
    CHECK_THROWS_AS(alloy::make_array<Tracked>(h, n), Boom);
    CHECK(Tracked::live == 0);
    CHECK(static_cast<long>(Tracked::destroyed.size()) == k);
    CHECK(h.live_blocks() == 0);
    const Tracked init(5);
    Tracked::destroyed.clear();
    Tracked::countdown = k;
    CHECK_THROWS_AS(alloy::make_array<Tracked>(h, n, init), Boom);
    CHECK(Tracked::live == 1);  // init itself
    CHECK(h.live_blocks() == 0);
  }
  Tracked::reset();
}

// The elements built before a throwing constructor are destroyed last first, as the doc says (found in review: they
// were destroyed first to last).
struct Ordered {
  static inline std::vector<const void*> built, destroyed;
  static inline int countdown = -1;
  Ordered() {
    if (countdown >= 0 && countdown-- == 0) throw Boom{};
    built.push_back(this);
  }
  Ordered(const Ordered&) = delete;
  ~Ordered() { destroyed.push_back(this); }
};
TEST_CASE("make_array: a throwing constructor destroys the elements built, last first") {
  Heap h;
  Ordered::countdown = 3;
  CHECK_THROWS_AS(alloy::make_array<Ordered>(h, 6), Boom);
  REQUIRE(Ordered::built.size() == 3);
  CHECK(Ordered::destroyed == std::vector<const void*>(Ordered::built.rbegin(), Ordered::built.rend()));
  CHECK(h.live_blocks() == 0);
}

// ---------------------------------------------------------------------------------------------------------------
// expand_array

template <class A>
void check_expand_ints(A& a) {
  std::span<int> s;
  CHECK(alloy::expand_array(a, s, 0));
  CHECK(s.empty());
  REQUIRE(alloy::expand_array(a, s, 3, 9));  // an empty array is made
  CHECK(s.size() == 3);
  for (int i = 0; i < 3; ++i) s[i] = i;
  REQUIRE(alloy::expand_array(a, s, 5));
  REQUIRE(s.size() == 8);
  CHECK(s[2] == 2);
  CHECK(s[3] == 0);
  CHECK(s[7] == 0);
  REQUIRE(alloy::expand_array(a, s, 1000, -1));
  CHECK(s.size() == 1008);
  CHECK(s[1] == 1);
  CHECK(s[1007] == -1);
  const std::span<int> kept = s;
  CHECK_FALSE(alloy::expand_array(a, s, SIZE_MAX));  // the count overflows
  CHECK_FALSE(alloy::expand_array(a, s, SIZE_MAX / 4));  // the bytes overflow
  CHECK((s.data() == kept.data() && s.size() == kept.size()));
  CHECK(alloy::dispose(a, s) == alloy::has_deallocate<A>);
}

TEST_CASE("expand_array: trivially copyable elements over every kind of parent") {
  Heap h;
  check_expand_ints(h);
  CHECK(h.live_blocks() == 0);
  ExpandHeap e;
  check_expand_ints(e);
  CHECK(e.live_blocks() == 0);
  CHECK(e.expansions() > 0);
  alloy::Mallocator m;  // realloc
  check_expand_ints(m);
  BumpArena<1 << 14> arena;
  check_expand_ints(arena);
}

TEST_CASE("expand_array: init may be an element of the array itself") {
  Heap h;  // no expand: every growth moves the block and frees the old one
  std::span<int> s = alloy::make_array<int>(h, 3, 42);
  for (int round = 0; round < 4; ++round) REQUIRE(alloy::expand_array(h, s, 50, s[0]));
  CHECK(s.size() == 203);
  for (int x : s) CHECK(x == 42);
  CHECK(alloy::dispose(h, s));
  std::span<std::string> t = alloy::make_array<std::string>(h, 2, std::string(50, 'q'));
  for (int round = 0; round < 4; ++round) REQUIRE(alloy::expand_array(h, t, 5, t[1]));
  CHECK(t.size() == 22);
  for (const std::string& x : t) CHECK(x == std::string(50, 'q'));
  CHECK(alloy::dispose(h, t));
  CHECK(h.live_blocks() == 0);
}

TEST_CASE("expand_array: grows in place when the parent can expand and construction cannot throw") {
  ExpandHeap e;  // capacity 256 bytes per block
  std::span<Quiet> s = alloy::make_array<Quiet>(e, 2, Quiet(1));
  Quiet* const p = s.data();
  REQUIRE(alloy::expand_array(e, s, 3, Quiet(2)));
  CHECK(s.data() == p);  // in place: nothing moved
  CHECK(e.expansions() == 1);
  CHECK(s.size() == 5);
  CHECK(Quiet::live == 5);
  CHECK((s[1].v == 1 && s[2].v == 2 && s[4].v == 2));
  REQUIRE(alloy::expand_array(e, s, 100));  // beyond the capacity: a new block, elements moved
  CHECK(s.data() != p);
  CHECK(s.size() == 105);
  CHECK(Quiet::live == 105);
  CHECK((s[0].v == 1 && s[4].v == 2 && s[104].v == 0));
  CHECK(e.live_blocks() == 1);
  CHECK(alloy::dispose(e, s));
  CHECK(Quiet::live == 0);
  CHECK(e.live_blocks() == 0);
}

TEST_CASE("expand_array: allocation failure leaves the array as it was") {
  Tracked::reset();
  Heap h;
  std::span<Tracked> s = alloy::make_array<Tracked>(h, 3, Tracked(4));
  h.fail_after(0);
  const std::span<Tracked> kept = s;
  CHECK_FALSE(alloy::expand_array(h, s, 2));
  CHECK((s.data() == kept.data() && s.size() == 3 && s[2].v == 4));
  CHECK(Tracked::live == 3);
  std::span<int> i = {};
  CHECK_FALSE(alloy::expand_array(h, i, 2));
  h.fail_after(SIZE_MAX);
  CHECK(alloy::dispose(h, s));
  CHECK(h.live_blocks() == 0);
}

// The strong guarantee, with the throw at every construction the operation makes.
template <class T, class A, class... Init>
void check_expand_throwing_everywhere(A& a, Init... init) {
  for (long k = 0;; ++k) {
    T::reset();
    const long base = T::live;  // the init arguments
    std::span<T> s = alloy::make_array<T>(a, 4);
    for (int i = 0; i < 4; ++i) s[i].v = 10 + i;
    const std::span<T> kept = s;
    const std::size_t blocks = a.live_blocks(), bytes = a.live_bytes();
    T::countdown = k;
    bool threw = false, ok = false;
    try {
      ok = alloy::expand_array(a, s, 3, init...);
    } catch (const Boom&) {
      threw = true;
    }
    T::countdown = -1;
    if (!threw) {
      REQUIRE(ok);  // k is past the last construction: done, after checking the result
      CHECK(s.size() == 7);
      CHECK((s[0].v == 10 && s[3].v == 13));
      CHECK(T::live == base + 7);
      CHECK(alloy::dispose(a, s));
      CHECK(k >= 3);  // at least the three new elements were built
      break;
    }
    CHECK((s.data() == kept.data() && s.size() == 4));  // unchanged
    for (int i = 0; i < 4; ++i) CHECK(s[i].v == 10 + i);
    CHECK(T::live == base + 4);
    CHECK(a.live_blocks() == blocks);
    CHECK(a.live_bytes() == bytes);
    CHECK(alloy::dispose(a, s));
  }
  CHECK(a.live_blocks() == 0);
}

TEST_CASE("expand_array: a throwing constructor at each position leaves the array as it was") {
  Heap h;
  check_expand_throwing_everywhere<Tracked>(h);                              // new elements throw
  check_expand_throwing_everywhere<Tracked>(h, Tracked(3));                  // copies of init throw
  check_expand_throwing_everywhere<TrackedThrowingMove>(h);                  // moves may throw: copies, which throw
  check_expand_throwing_everywhere<TrackedThrowingMove>(h, TrackedThrowingMove(3));
  ExpandHeap e;  // could grow in place, but not while a constructor may throw
  check_expand_throwing_everywhere<Tracked>(e);
  check_expand_throwing_everywhere<TrackedThrowingMove>(e, TrackedThrowingMove(3));
  CHECK(e.expansions() == 0);
  Tracked::reset();
  TrackedThrowingMove::reset();
}

TEST_CASE("expand_array: trivially copyable with a throwing default constructor") {
  ExpandHeap e;
  for (long k = 0; k < 3; ++k) {
    std::span<TrivialThrowing> s = alloy::make_array<TrivialThrowing>(e, 2);
    s[0].v = 1;
    const std::span<TrivialThrowing> kept = s;
    TrivialThrowing::countdown = k;
    CHECK_THROWS_AS(alloy::expand_array(e, s, 3), Boom);
    TrivialThrowing::countdown = -1;
    CHECK((s.data() == kept.data() && s.size() == 2 && s[0].v == 1));
    CHECK(e.live_blocks() == 1);
    CHECK(alloy::dispose(e, s));
  }
  CHECK(e.live_blocks() == 0);
}

// ---------------------------------------------------------------------------------------------------------------
// shrink_array

TEST_CASE("shrink_array: trivially copyable and not") {
  Tracked::reset();
  Heap h;
  std::span<int> i = alloy::make_array<int>(h, 10, 3);
  i[1] = 11;
  CHECK(alloy::shrink_array(h, i, 0));
  CHECK(i.size() == 10);
  CHECK_FALSE(alloy::shrink_array(h, i, 11));
  CHECK(i.size() == 10);
  REQUIRE(alloy::shrink_array(h, i, 8));
  CHECK((i.size() == 2 && i[0] == 3 && i[1] == 11));
  CHECK(h.live_bytes() == 2 * sizeof(int));
  REQUIRE(alloy::shrink_array(h, i, 2));  // everything: disposed
  CHECK(i.empty());
  CHECK(h.live_blocks() == 0);

  std::span<Tracked> t = alloy::make_array<Tracked>(h, 5);
  for (int k = 0; k < 5; ++k) t[k].v = k;
  Tracked::destroyed.clear();
  REQUIRE(alloy::shrink_array(h, t, 3));
  CHECK(t.size() == 2);
  CHECK((t[0].v == 0 && t[1].v == 1));
  CHECK(Tracked::live == 2);
  CHECK(h.live_bytes() == 2 * sizeof(Tracked));  // the block is exactly the array: the allocator was told
  CHECK(alloy::dispose(h, t));
  CHECK(Tracked::live == 0);

  alloy::Mallocator m;
  std::span<std::string> s = alloy::make_array<std::string>(m, 4, std::string(40, 'z'));
  REQUIRE(alloy::shrink_array(m, s, 1));
  CHECK((s.size() == 3 && s[2] == std::string(40, 'z')));
  CHECK(alloy::dispose(m, s));
}

TEST_CASE("shrink_array: failure and throwing copies leave the array as it was") {
  Heap h;
  TrackedThrowingMove::reset();
  std::span<TrackedThrowingMove> s = alloy::make_array<TrackedThrowingMove>(h, 5);
  for (int k = 0; k < 5; ++k) s[k].v = k;
  const std::span<TrackedThrowingMove> kept = s;
  h.fail_after(0);
  CHECK_FALSE(alloy::shrink_array(h, s, 2));
  CHECK((s.data() == kept.data() && s.size() == 5));
  h.fail_after(SIZE_MAX);
  for (long k = 0; k < 3; ++k) {
    TrackedThrowingMove::countdown = k;
    CHECK_THROWS_AS(alloy::shrink_array(h, s, 2), Boom);
    TrackedThrowingMove::countdown = -1;
    CHECK((s.data() == kept.data() && s.size() == 5 && s[4].v == 4));
    CHECK(TrackedThrowingMove::live == 5);
    CHECK(h.live_blocks() == 1);
  }
  CHECK(alloy::dispose(h, s));
  CHECK(TrackedThrowingMove::live == 0);
  CHECK(h.live_blocks() == 0);
}

// ---------------------------------------------------------------------------------------------------------------
// Randomized: arrays grown, shrunk, remade and disposed at random, against std::vector, with throws.

template <class A>
void random_arrays(A& a, std::uint64_t seed, int ops) {
  TrackedThrowingMove::reset();
  alloy::test::Rng rng{seed};
  constexpr std::size_t slots = 16;
  std::vector<std::span<TrackedThrowingMove>> arr(slots);
  std::vector<std::vector<int>> model(slots);
  int next = 1, throws = 0;
  for (int i = 0; i < ops; ++i) {
    const std::size_t s = rng.below(slots);
    const unsigned what = static_cast<unsigned>(rng.below(10));
    if (rng.chance(5)) TrackedThrowingMove::countdown = static_cast<long>(rng.below(8));
    try {
      if (what < 5) {
        const std::size_t d = rng.below(20);
        const int v = next++;
        if (alloy::expand_array(a, arr[s], d, TrackedThrowingMove(v))) model[s].insert(model[s].end(), d, v);
      } else if (what < 8) {
        const std::size_t d = rng.below(model[s].size() + 2);
        if (alloy::shrink_array(a, arr[s], d)) model[s].resize(model[s].size() - d);
        else CHECK(d > model[s].size());
      } else {
        CHECK(alloy::dispose(a, arr[s]));
        arr[s] = {};
        model[s].clear();
      }
    } catch (const Boom&) {
      ++throws;
    }
    TrackedThrowingMove::countdown = -1;
    REQUIRE(arr[s].size() == model[s].size());
    for (std::size_t k = 0; k < model[s].size(); ++k)
      if (arr[s][k].v != model[s][k]) {
        FAIL_CHECK("element " << k << " of slot " << s << " differs at op " << i);
        break;
      }
  }
  long total = 0;
  for (auto& m : model) total += static_cast<long>(m.size());
  CHECK(TrackedThrowingMove::live == total);
  for (auto& s : arr) CHECK(alloy::dispose(a, s));
  CHECK(TrackedThrowingMove::live == 0);
  CHECK(throws > 10);
}

TEST_CASE("make: randomized arrays against std::vector, with throwing constructors") {
  Heap h;
  random_arrays(h, 1, 20'000);
  CHECK(h.live_blocks() == 0);
  CHECK(h.live_bytes() == 0);
  ExpandHeap e;
  random_arrays(e, 2, 20'000);
  CHECK(e.live_blocks() == 0);
  alloy::Mallocator m;
  random_arrays(m, 3, 20'000);
}

#if ALLOY_ENABLE_ASSERTS && (defined(__GXX_RTTI) || defined(__cpp_rtti))
struct Base {
  virtual ~Base() = default;
  int b = 1;
};
struct Derived : Base {
  long more[4] = {};
};

TEST_CASE("dispose: through a base class is caught in debug builds (the size would be wrong)") {
  alloy::Mallocator m;
  Derived* d = alloy::make<Derived>(m);
  REQUIRE(d);
  Base* base = d;
  CHECK(alloy::test::run_in_child([&] { (void)alloy::dispose(m, base); }).signal == SIGABRT);
  CHECK(alloy::dispose(m, d));  // through its own type: fine
}
#endif

namespace {
// Refuses every request, counting them.
struct RequestCounter {
  static constexpr std::size_t alignment = 16;
  std::size_t requests = 0;
  alloy::Block allocate(std::size_t) noexcept {
    ++requests;
    return {};
  }
};
}  // namespace

// n * sizeof(T) that wraps around to a small number must not reach the allocator (it would give 4 bytes for 2^62 + 1
// elements).
TEST_CASE("make_array: a count whose byte size wraps around asks nothing of the allocator") {
  RequestCounter c;
  const std::size_t wraps = SIZE_MAX / sizeof(int) + 2;  // wraps * sizeof(int) == 4 (mod 2^64)
  CHECK(alloy::make_array<int>(c, wraps).empty());
  CHECK(alloy::make_array<int>(c, wraps, 7).empty());
  CHECK(c.requests == 0);
  CHECK(alloy::make_array<int>(c, 2).empty());  // a real request does reach it
  CHECK(c.requests == 1);
}
