// ctest-labels: heavy
#include <alloy/stats_collector.hpp>

#include <alloy/aligned_mallocator.hpp>
#include <alloy/free_list.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/mmap_allocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/region.hpp>

#include <map>
#include <sstream>
#include <span>
#include <vector>

#include <doctest/doctest.h>

#include "support/bump_model.hpp"
#include "support/conformance.hpp"
#include "support/differential.hpp"
#include "support/rng.hpp"

using alloy::Block;
using alloy::Mallocator;
using alloy::Options;
using alloy::StatsCollector;
using alloy::Ternary;
using Arena = alloy::Region<Mallocator>;

template <class A, Options F, Options P>
inline constexpr bool alloy::test::deallocates_last_only<StatsCollector<A, F, P>> = alloy::test::deallocates_last_only<A>;

// Capabilities: exactly the parent's (D declares expand, reallocate, deallocate and alignedAllocate always).
using SM = StatsCollector<Mallocator>;
static_assert(alloy::has_deallocate<SM> && alloy::has_reallocate<SM> && !alloy::has_expand<SM> && !alloy::has_owns<SM>);
static_assert(!alloy::has_aligned_allocate<SM> && !alloy::has_deallocate_all<SM> && !alloy::has_good_alloc_size<SM>);
static_assert(alloy::has_empty<SM> && !alloy::has_empty<StatsCollector<Mallocator, Options::num_allocate>>);
using SR = StatsCollector<Arena>;
static_assert(alloy::has_expand<SR> && alloy::has_owns<SR> && alloy::has_aligned_allocate<SR> && alloy::has_allocate_all<SR> &&
              alloy::has_deallocate_all<SR> && alloy::has_good_alloc_size<SR> && !alloy::has_reallocate<SR>);
static_assert(alloy::has_empty<StatsCollector<Arena, Options::num_allocate>>);  // the parent's empty
using SD = StatsCollector<alloy::NoAccessAllocator>;
static_assert(alloy::has_copy<SD> && alloy::has_owns<SD> && SD::memory_space == alloy::MemorySpace::device);
// Accessors exist only for the statistics kept; the counters cost one word each.
template <class S>
concept has_bytes_used = requires(const S& s) { s.bytes_used(); };
template <class S>
concept has_snapshots = requires(S& s) { s.push_counters(); };
template <class S>
concept has_per_call = requires(const S& s) { s.by_file_line(); };
static_assert(has_bytes_used<SM> && !has_bytes_used<StatsCollector<Mallocator, Options::num_allocate>>);
static_assert(has_snapshots<SM> && !has_snapshots<StatsCollector<Mallocator, Options::bytes_all>>);
static_assert(has_per_call<StatsCollector<Mallocator, Options::all, Options::num_allocate>> && !has_per_call<SM>);
static_assert(sizeof(StatsCollector<Mallocator, Options::num_allocate | Options::bytes_used>) == 2 * sizeof(std::uint64_t));
static_assert(alloy::to_string(Options::bytes_high_tide) == "bytes_high_tide" && alloy::to_string(Options::all).empty());

TEST_CASE_TEMPLATE("StatsCollector: conformance", A, SM, StatsCollector<Mallocator, Options::all, Options::all>,
                   StatsCollector<Mallocator, Options::num_allocate>, StatsCollector<alloy::AlignedMallocator>,
                   StatsCollector<alloy::MmapAllocator, Options::all, Options::bytes_all>, SD,
                   StatsCollector<alloy::FreeList<Mallocator, 16, 128>>) {
  alloy::test::check_allocator([] { return A{}; });
}

TEST_CASE("StatsCollector: conformance over a Region") {
  alloy::test::check_allocator([] { return SR(Arena(1 << 16)); });
  alloy::test::check_allocator([] { return StatsCollector<Arena, Options::all, Options::all>(Arena(1 << 16)); });
}

TEST_CASE("StatsCollector: D's unittests") {
  StatsCollector<Mallocator, Options::all, Options::all> a;
  CHECK(a.empty() == Ternary::yes);
  Block b1 = a.allocate(100);
  CHECK(a.num_allocate() == 1);
  CHECK(a.reallocate(b1, b1.size + 1));
  Block b2 = a.allocate(101);
  CHECK(a.num_allocate() == 2);
  CHECK(a.bytes_allocated() == 100 + (a.num_reallocate_in_place() == 1 ? 1 : 101) + 101);  // D: 202 (in place)
  CHECK(a.bytes_used() == 202);
  Block b3 = a.allocate(202);
  CHECK(a.num_allocate() == 3);
  CHECK(a.empty() == Ternary::no);
  CHECK(a.deallocate(b2));
  CHECK(a.num_deallocate() == 1);
  CHECK(a.deallocate(b1));
  CHECK(a.deallocate(b3));
  CHECK(a.num_deallocate() == 3);
  CHECK(a.bytes_used() == 0);
  CHECK(a.bytes_high_tide() == 404);
  CHECK(a.num_reallocate() == 1);
  CHECK(a.num_reallocate_ok() == 1);

  // alignedAllocate over a Region (D's last unittest)
  alignas(64) static std::byte buf[64 * 1024];
  StatsCollector<alloy::Region<>> r{alloy::Region<>(std::span<std::byte>(buf))};
  Block b = r.aligned_allocate(42, 128);
  CHECK(b.size == 42);
  CHECK(alloy::is_aligned(b.ptr, 128));
  CHECK(r.num_aligned_allocate() == 1);
  CHECK(r.num_aligned_allocate_ok() == 1);
  CHECK(r.bytes_used() == 42);
  b = r.aligned_allocate(23, 256);
  CHECK(r.num_aligned_allocate_ok() == 2);
  CHECK(r.bytes_used() == 65);
  b = r.aligned_allocate(0, 512);
  CHECK(!b);
  CHECK(r.num_aligned_allocate() == 3);
  CHECK(r.num_aligned_allocate_ok() == 3);  // 0 bytes asked, 0 given: OK, as in D
  b = r.aligned_allocate(1024 * 1024, 512);
  CHECK(!b);
  CHECK(r.num_aligned_allocate() == 4);
  CHECK(r.num_aligned_allocate_ok() == 3);
  CHECK(r.bytes_used() == 65);
  CHECK(r.bytes_slack() == (48 - 42) + (32 - 23));
  CHECK(r.deallocate_all());
  CHECK(r.bytes_used() == 0);
  CHECK(r.bytes_slack() == 0);
  CHECK(r.num_deallocate_all() == 1);
}

TEST_CASE("StatsCollector: a refused deallocate changes no byte count; reports") {
  StatsCollector<Arena> r(Arena(4096));
  const Block a = r.allocate(10), b = r.allocate(20);
  CHECK_FALSE(r.deallocate(a));  // a Region takes back its last block only
  CHECK(r.bytes_used() == 30);
  CHECK(r.num_deallocate() == 1);
  CHECK(r.deallocate(b));
  CHECK(r.bytes_used() == 10);
  Block c = r.allocate(16);
  CHECK(r.expand(c, 16));
  CHECK(r.bytes_expanded() == 16);
  CHECK(r.num_expand_ok() == 1);
  CHECK(r.owns(c) == Ternary::yes);
  CHECK(r.num_owns() == 1);
  std::ostringstream out;
  r.report_statistics(out);
  CHECK(out.str().find("bytes_used:42\n") != std::string::npos);
  CHECK(out.str().find("num_allocate:3\n") != std::string::npos);
  std::size_t lines = 0;
  for (char ch : out.str()) lines += ch == '\n';
  CHECK(lines == 20);
}

TEST_CASE("StatsCollector: allocate_all counts as an allocate") {
  StatsCollector<Arena> r(Arena(4096));
  const Block all = r.allocate_all();
  CHECK(all.size == 4096);
  CHECK(r.num_allocate() == 1);
  CHECK(r.num_allocate_ok() == 1);
  CHECK(r.bytes_used() == 4096);
  CHECK(!r.allocate_all());  // nothing left: counted, not OK
  CHECK(r.num_allocate() == 2);
  CHECK(r.num_allocate_ok() == 1);
  CHECK(r.deallocate(all));
  CHECK(r.empty() == Ternary::yes);
}

static Block allocate_here(StatsCollector<Mallocator, Options::all, Options::all>& s, std::size_t n) {
  return s.allocate(n);  // one call site, whoever calls
}

TEST_CASE("StatsCollector: per-call-site statistics") {
  StatsCollector<Mallocator, Options::all, Options::num_allocate | Options::bytes_allocated | Options::num_deallocate> s;
  std::vector<Block> v;
  for (int i = 0; i < 5; ++i) v.push_back(s.allocate(10));
  for (int i = 0; i < 3; ++i) v.push_back(s.allocate(100));
  for (Block b : v) CHECK(s.deallocate(b));
  const auto sites = s.by_file_line();
  REQUIRE(sites.size() == 3);
  CHECK(sites[0].value(Options::num_allocate) == 5);
  CHECK(sites[0].value(Options::bytes_allocated) == 50);
  CHECK(sites[1].value(Options::num_allocate) == 3);
  CHECK(sites[1].value(Options::bytes_allocated) == 300);
  CHECK(sites[2].value(Options::num_deallocate) == 8);
  CHECK(sites[2].value(Options::num_allocate) == 0);
  CHECK(sites[0].line + 1 == sites[1].line);
  CHECK(sites[0].file.find("stats_collector.cpp") != std::string_view::npos);
  CHECK(sites[0].to_string().find("(" + std::to_string(sites[0].line) + "): [num_allocate:5, num_deallocate:0, bytes_allocated:50]") != std::string::npos);
  std::ostringstream out;
  s.report_per_call_statistics(out);
  CHECK(out.str().find("Stats for: StatsCollector\n") == 0);

  StatsCollector<Mallocator, Options::all, Options::all> t;
  Block x = allocate_here(t, 1), y = allocate_here(t, 2);
  REQUIRE(t.by_file_line().size() == 1);
  CHECK(t.by_file_line()[0].value(Options::num_allocate) == 2);
  CHECK(t.by_file_line()[0].function.find("allocate_here") != std::string_view::npos);
  CHECK(t.deallocate(x));
  CHECK(t.deallocate(y));
}

TEST_CASE("StatsCollector: scoped snapshots (RMM's push/pop counters)") {
  StatsCollector<Mallocator, Options::snapshots> s;
  const Block a = s.allocate(100);
  const alloy::StatsSnapshot outer = s.push_counters();
  CHECK(outer.bytes == alloy::StatsCounter{100, 100, 100});
  CHECK(s.bytes_counter() == alloy::StatsCounter{});
  const Block b = s.allocate(50), c = s.allocate(30);
  CHECK(s.deallocate(b));
  CHECK(s.deallocate(a));  // a block of the outer scope freed inside: the inner value goes negative
  const alloy::StatsSnapshot inner = s.pop_counters();
  CHECK(inner.bytes == alloy::StatsCounter{30 - 100, 80, 80});
  CHECK(inner.allocations == alloy::StatsCounter{1 - 1, 2, 2});
  CHECK(s.bytes_counter() == alloy::StatsCounter{30, 180, 180});  // peak: 100 + the inner peak 80
  CHECK(s.allocations_counter() == alloy::StatsCounter{1, 3, 3});
  CHECK(s.deallocate(c));
  CHECK(s.bytes_counter().value == 0);
}

// The reference model: the counters by D's definitions, kept by hand, and the blocks of a bump pointer.
struct Expected {
  std::map<Options, std::uint64_t> c;
  std::uint64_t& operator[](Options o) { return c[o]; }
  struct Frame {
    alloy::StatsCounter bytes, allocs;
  };
  std::vector<Frame> frames{Frame{}};
  static void add(alloy::StatsCounter& k, std::int64_t v) {
    k.value += v;
    if (v > 0) k.total += v;
    k.peak = std::max(k.peak, k.value);
  }
  void used(std::int64_t d) {
    c[Options::bytes_used] += static_cast<std::uint64_t>(d);
    c[Options::bytes_high_tide] = std::max(c[Options::bytes_high_tide], c[Options::bytes_used]);
    add(frames.back().bytes, d);
  }
};

TEST_CASE("StatsCollector: randomized against hand-kept counters and a bump model (10^6 operations)") {
  alignas(64) static std::byte buf[32 * 1024];
  using S = StatsCollector<alloy::Region<>, Options::all, Options::num_allocate | Options::num_deallocate>;
  S s{alloy::Region<>(std::span<std::byte>(buf))};
  alloy::test::BumpModel<16, false> bump(buf, sizeof buf);
  Expected e;
  alloy::test::Rng rng{7};
  std::vector<Block> live(32);
  auto slack = [](Block b) { return b ? alloy::round_up(b.size, 16) - b.size : 0; };
  std::size_t mismatches = 0, depth = 1, live_count = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    Block& b = live[rng.below(live.size())];
    const unsigned what = static_cast<unsigned>(rng.below(100));
    if (what == 0) {
      CHECK(s.deallocate_all());
      bump.deallocate_all();
      ++e[Options::num_deallocate_all];
      e[Options::bytes_used] = 0;
      e[Options::bytes_slack] = 0;
      for (auto& f : e.frames) f.bytes.value = f.allocs.value = 0;
      for (Block& x : live) x = {};
      live_count = 0;
    } else if (what == 1 && depth < 5) {
      s.push_counters();
      e.frames.push_back({});
      ++depth;
    } else if (what == 2 && depth > 1) {
      const auto got = s.pop_counters();
      const auto f = e.frames.back();
      e.frames.pop_back();
      --depth;
      mismatches += !(got.bytes == f.bytes && got.allocations == f.allocs);
      auto fold = [](alloy::StatsCounter& o, const alloy::StatsCounter& n) {
        o.peak = std::max(o.peak, o.value + n.peak);
        o.value += n.value;
        o.total += n.total;
      };
      fold(e.frames.back().bytes, f.bytes);
      fold(e.frames.back().allocs, f.allocs);
    } else if (!b) {
      const std::size_t n = rng.below(300);  // 0 included
      const bool aligned = what < 20;
      const std::size_t al = std::size_t{1} << rng.below(8);
      b = aligned ? s.aligned_allocate(n, al) : s.allocate(n);
      const Block m = aligned ? (n ? bump.aligned_allocate(n, al) : Block{}) : (n ? bump.allocate(n) : Block{});
      mismatches += !(b == m);
      ++e[aligned ? Options::num_aligned_allocate : Options::num_allocate];
      e[aligned ? Options::num_aligned_allocate_ok : Options::num_allocate_ok] += b.size == n;
      if (b) {
        e.used(static_cast<std::int64_t>(b.size));
        e[Options::bytes_allocated] += b.size;
        e[Options::bytes_slack] += slack(b);
        Expected::add(e.frames.back().allocs, 1);
        ++live_count;
      }
    } else if (what < 40) {
      const std::size_t d = rng.below(100);
      Block bm = b;
      const std::size_t before = slack(b);
      const bool ok = s.expand(b, d);
      mismatches += ok != bump.expand(bm, d) || !(b == bm);
      ++e[Options::num_expand];
      if (ok) {
        ++e[Options::num_expand_ok];
        e.used(static_cast<std::int64_t>(d));
        e[Options::bytes_allocated] += d;
        e[Options::bytes_expanded] += d;
        e[Options::bytes_slack] += slack(b) - before;
      }
    } else if (what < 45) {
      mismatches += s.owns(b) != bump.owns(b);
      ++e[Options::num_owns];
    } else {
      const bool ok = s.deallocate(b);
      mismatches += ok != bump.deallocate(b);
      ++e[Options::num_deallocate];
      if (ok) {
        e.used(-static_cast<std::int64_t>(b.size));
        e[Options::bytes_slack] -= slack(b);
        Expected::add(e.frames.back().allocs, -1);
        --live_count;
        b = {};
      }
    }
    if (i % 4096 == 0 || i == 999'999) {
      for (std::uint64_t bit = 1; bit < (1u << 20); bit <<= 1)
        mismatches += s.statistic(static_cast<Options>(bit)) != e[static_cast<Options>(bit)];
      mismatches += !(s.bytes_counter() == e.frames.back().bytes) || !(s.allocations_counter() == e.frames.back().allocs);
      mismatches += s.empty() != alloy::to_ternary(e[Options::bytes_used] == 0);
    }
  }
  CHECK(mismatches == 0);
  CHECK(e[Options::num_allocate_ok] > 100'000);
  CHECK(e[Options::num_expand_ok] > 10'000);
  CHECK(e[Options::bytes_high_tide] > 4 * 1024);
  std::uint64_t site_allocs = 0, site_deallocs = 0;
  for (const auto& site : s.by_file_line()) {
    site_allocs += site.value(Options::num_allocate);
    site_deallocs += site.value(Options::num_deallocate);
  }
  CHECK(site_allocs == s.num_allocate());
  CHECK(site_deallocs == s.num_deallocate());
  MESSAGE("live at the end: " << live_count << ", high tide " << e[Options::bytes_high_tide]);
}

TEST_CASE("StatsCollector: reallocate counters over malloc, randomized") {
  StatsCollector<Mallocator> s;
  alloy::test::Rng rng{9};
  std::vector<Block> live(64);
  std::uint64_t in_place = 0, moved_bytes = 0, not_moved = 0, used = 0, allocated = 0;
  for (int i = 0; i < 200'000; ++i) {
    Block& b = live[rng.below(live.size())];
    if (!b) {
      b = s.allocate(1 + rng.below(2000));
      used += b.size;
      allocated += b.size;
    } else if (rng.below(2)) {
      const Block old = b;
      REQUIRE(s.reallocate(b, rng.below(4000)));
      used += b.size - old.size;
      if (b.ptr == old.ptr) {
        ++in_place;
        not_moved += old.size;
        if (b.size > old.size) allocated += b.size - old.size;
      } else {
        moved_bytes += old.size;
        allocated += b.size;
      }
    } else {
      used -= b.size;
      CHECK(s.deallocate(b));
      b = {};
    }
  }
  CHECK(s.bytes_used() == used);
  CHECK(s.bytes_allocated() == allocated);
  CHECK(s.num_reallocate_in_place() == in_place);
  CHECK(s.bytes_moved() == moved_bytes);
  CHECK(s.bytes_not_moved() == not_moved);
  CHECK(s.num_reallocate() == s.num_reallocate_ok());
  for (Block b : live) CHECK(s.deallocate(b));
  CHECK(s.bytes_used() == 0);
  CHECK(s.empty() == Ternary::yes);
}

TEST_CASE("StatsCollector: over device memory (NoAccessAllocator) the counters never touch it") {
  StatsCollector<alloy::NoAccessAllocator, Options::all, Options::num_allocate> s;
  alloy::test::DiffOptions o;
  o.ops = 20'000;
  o.slots = 32;
  o.max_size = 5000;
  const auto st = alloy::test::run_differential(s, o);
  CHECK(st.allocations > 1000);
  CHECK(s.num_allocate() + s.num_aligned_allocate() == st.allocations + st.failures);
  CHECK(s.bytes_high_tide() >= st.peak_live_bytes);
  CHECK(s.bytes_used() == 0);
  CHECK(s.empty() == Ternary::yes);
}
