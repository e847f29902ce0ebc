#pragma once
/// \file alloy/stats_collector.hpp
/// StatsCollector: counts calls and bytes over any allocator (D's building_blocks/stats_collector.d), per call site
/// through std::source_location, with scoped snapshots (RMM's statistics_resource_adaptor push/pop counters).
///
/// Every counter lives in the StatsCollector object, never in the memory it hands out, so any parent works,
/// device memory included: `StatsCollector<CudaMallocator>` and `StatsCollector<NoAccessAllocator>` are fine.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <map>
#include <source_location>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <alloy/common.hpp>
#include <alloy/detail/source_location.hpp>

namespace alloy {

/// The statistics a StatsCollector keeps (D's `Options`, snake_case), one bit each; combine with `|`.
enum class Options : std::uint64_t {
  num_owns = 1u << 0,                 ///< calls to owns
  num_allocate = 1u << 1,             ///< calls to allocate (and allocate_all), failed ones too
  num_allocate_ok = 1u << 2,          ///< calls to allocate that returned the size asked (0 bytes counts, as D)
  num_expand = 1u << 3,               ///< calls to expand
  num_expand_ok = 1u << 4,            ///< successful expands
  num_reallocate = 1u << 5,           ///< calls to reallocate
  num_reallocate_ok = 1u << 6,        ///< successful reallocates
  num_reallocate_in_place = 1u << 7,  ///< successful reallocates that kept the address
  num_deallocate = 1u << 8,           ///< calls to deallocate
  num_deallocate_all = 1u << 9,       ///< calls to deallocate_all
  num_aligned_allocate = 1u << 10,    ///< calls to aligned_allocate
  num_aligned_allocate_ok = 1u << 11, ///< aligned_allocates that returned the size asked
  num_all = (1u << 12) - 1,
  bytes_used = 1u << 12,              ///< bytes live now
  bytes_allocated = 1u << 13,         ///< bytes handed out in total (allocate, expand, growing reallocate)
  bytes_expanded = 1u << 14,          ///< delta of successful expands (and in-place growing reallocates)
  bytes_contracted = 1u << 15,        ///< bytes given up by in-place shrinking reallocates (per call: deallocate too)
  bytes_moved = 1u << 16,             ///< bytes copied by reallocates that moved
  bytes_not_moved = 1u << 17,         ///< bytes kept in place by reallocates that did not move
  bytes_slack = 1u << 18,             ///< good_alloc_size(n) - n summed over live blocks (internal fragmentation)
  bytes_high_tide = 1u << 19,         ///< the largest bytes_used seen
  bytes_all = ((1u << 20) - 1) & ~((1u << 12) - 1),
  snapshots = 1u << 20,               ///< alloy's: push_counters / pop_counters (RMM's nested counters)
  all = (1u << 21) - 1,
};
constexpr Options operator|(Options a, Options b) noexcept {
  return static_cast<Options>(static_cast<std::uint64_t>(a) | static_cast<std::uint64_t>(b));
}
constexpr Options operator&(Options a, Options b) noexcept {
  return static_cast<Options>(static_cast<std::uint64_t>(a) & static_cast<std::uint64_t>(b));
}

/// The name of one option (`"num_allocate"`), or "" for a combination.
constexpr std::string_view to_string(Options o) noexcept {
  constexpr std::string_view names[] = {
      "num_owns",         "num_allocate",    "num_allocate_ok",      "num_expand",          "num_expand_ok",
      "num_reallocate",   "num_reallocate_ok", "num_reallocate_in_place", "num_deallocate", "num_deallocate_all",
      "num_aligned_allocate", "num_aligned_allocate_ok", "bytes_used", "bytes_allocated",  "bytes_expanded",
      "bytes_contracted", "bytes_moved",     "bytes_not_moved",      "bytes_slack",         "bytes_high_tide"};
  const auto v = static_cast<std::uint64_t>(o);
  if (!std::has_single_bit(v) || v >= (1u << 20)) return {};
  return names[std::countr_zero(v)];
}

/// RMM's counter: the current value, its peak, and the sum of everything added.
struct StatsCounter {
  std::int64_t value = 0, peak = 0, total = 0;
  StatsCounter& operator+=(std::int64_t v) noexcept {
    value += v;
    total += v;
    if (value > peak) peak = value;
    return *this;
  }
  StatsCounter& operator-=(std::int64_t v) noexcept {
    value -= v;
    return *this;
  }
  // Folds the counter of a scope that ran inside this one (its peak counts from this one's value then).
  void add_nested(const StatsCounter& c) noexcept {
    if (value + c.peak > peak) peak = value + c.peak;
    value += c.value;
    total += c.total;
  }
  friend bool operator==(const StatsCounter&, const StatsCounter&) = default;
};
/// What push_counters and pop_counters return: bytes and number of live allocations.
struct StatsSnapshot {
  StatsCounter bytes, allocations;
  friend bool operator==(const StatsSnapshot&, const StatsSnapshot&) = default;
};

namespace detail {
struct NoSite {
  static constexpr NoSite current() noexcept { return {}; }
};
template <bool PerCall>
using call_site = std::conditional_t<PerCall, source_location, NoSite>;
template <int>
struct NoStorage {};  // one type per member: [[no_unique_address]] cannot overlap two members of one empty type
}  // namespace detail

/// StatsCollector<A, Flags = Options::all, PerCallFlags = Options{}>
///
/// Semantics: D's StatsCollector: forwards every primitive to A and keeps the statistics that Flags selects, each
/// read by the accessor of its name (`num_allocate()`, `bytes_used()`, `bytes_high_tide()`, ...; an accessor exists
/// only when its flag is set). PerCallFlags keeps the same statistics per call site: the primitives then take a
/// trailing `std::source_location` defaulted to the caller's, and `by_file_line()` lists the sites (file, line,
/// function, the values). `Options::snapshots` adds RMM's nested counters: `push_counters()` starts a scope with
/// zeroed bytes/allocations counters (value, peak, total), `pop_counters()` ends it and folds it into the enclosing
/// one; `bytes_counter()`, `allocations_counter()` read the current scope. `report_statistics(out)` writes one
/// `name:value` line per statistic to any `out << ...` stream. `parent()` reaches A without counting.
/// Capabilities: allocate, and every primitive A has: aligned_allocate, allocate_all (counted as allocate),
/// expand, reallocate, deallocate, deallocate_all, owns, good_alloc_size, resolve_internal_pointer, allocate_fresh,
/// copy, each iff A has it (D declares expand, reallocate, deallocate and aligned_allocate always); empty iff
/// Flags has bytes_used (bytes_used == 0) or else A has empty.
/// Alignment and memory space: A's. The counters live in the object, so A may be device memory.
/// Thread safety: none (RMM's adaptor locks; wrap a StatsCollector in a lock for that).
/// Failure: whatever A reports; a refused deallocate changes no byte count (D's does).
/// Example:
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// using alloy::Options;
/// alloy::StatsCollector<alloy::Mallocator, Options::bytes_used | Options::bytes_allocated | Options::snapshots,
///                       Options::num_allocate> s;
/// alloy::Block a = s.allocate(10), b = s.allocate(11);
/// CHECK(s.deallocate(a));
/// CHECK(s.bytes_allocated() == 21);
/// CHECK(s.bytes_used() == 11);
/// s.push_counters();                                // a scope
/// alloy::Block c = s.allocate(100);
/// CHECK(s.bytes_counter().value == 100);
/// const alloy::StatsSnapshot inner = s.pop_counters();
/// CHECK(inner.allocations.total == 1);
/// CHECK(s.bytes_counter().value == 21 - 10 + 100);  // the scope folded into the outer one
/// CHECK(s.by_file_line().size() == 2);              // two call sites allocated
/// CHECK(s.deallocate(b));
/// CHECK(s.deallocate(c));
/// ```
template <class A, Options Flags = Options::all, Options PerCallFlags = Options{}>
class StatsCollector {
  static_assert(allocator<A>,
                "StatsCollector: A must be an alloy allocator (a type with `static constexpr std::size_t alignment` "
                "and `Block allocate(std::size_t) noexcept`, e.g. alloy::Mallocator); a std allocator, a "
                "std::pmr::memory_resource or a type whose allocate returns void* is not one");
  static constexpr std::uint64_t flags = static_cast<std::uint64_t>(Flags);
  static_assert(flags < (1u << 21) && static_cast<std::uint64_t>(PerCallFlags) < (1u << 21),
                "StatsCollector: unknown bits in Flags or PerCallFlags; combine alloy::Options values");
  // (snapshots are per collector, not per call site: that bit of PerCallFlags means nothing)
  static constexpr std::uint64_t per_call_flags = static_cast<std::uint64_t>(PerCallFlags) & ((1u << 20) - 1);
  static constexpr bool per_call = per_call_flags != 0;
  static constexpr std::size_t counter_count = std::popcount(flags & ((1u << 20) - 1));
  static constexpr std::size_t per_call_count = std::popcount(per_call_flags);
  static constexpr bool has_snapshots = (flags & static_cast<std::uint64_t>(Options::snapshots)) != 0;
  template <Options O>
  static constexpr bool on = (flags & static_cast<std::uint64_t>(O)) != 0;
  template <Options O>
  static constexpr std::size_t index = std::popcount(flags & (static_cast<std::uint64_t>(O) - 1));
  using Site = detail::call_site<per_call>;

 public:
  static constexpr std::size_t alignment = A::alignment;
  static constexpr MemorySpace memory_space = memory_space_of<A>();
  using parent_type = A;

  /// One call site's statistics (PerCallFlags), D's PerCallStatistics.
  struct PerCallStatistics {
    std::string_view file, function;
    std::uint_least32_t line = 0, column = 0;
    std::uint64_t values[per_call_count == 0 ? 1 : per_call_count] = {};
    /// The value of one of PerCallFlags' options (0 for any other).
    std::uint64_t value(Options o) const noexcept {
      const auto v = static_cast<std::uint64_t>(o);
      if (!std::has_single_bit(v) || !(per_call_flags & v)) return 0;
      return values[std::popcount(per_call_flags & (v - 1))];
    }
    /// D's format: `file(line): [num_allocate:21, bytes_allocated:324202]`.
    std::string to_string() const {
      std::string s = std::string(file) + "(" + std::to_string(line) + "): [";
      bool first = true;
      for (std::uint64_t bit = 1; bit < (1u << 20); bit <<= 1) {
        if (!(per_call_flags & bit)) continue;
        if (!first) s += ", ";
        first = false;
        s += alloy::to_string(static_cast<Options>(bit));
        s += ':';
        s += std::to_string(value(static_cast<Options>(bit)));
      }
      return s + "]";
    }
  };

  StatsCollector() = default;
  explicit StatsCollector(A parent) noexcept(std::is_nothrow_move_constructible_v<A>) : parent_(std::move(parent)) {}

  // ---- the primitives ----------------------------------------------------------------------------------------

  Block allocate(std::size_t n, Site site = Site::current()) noexcept {
    const Block r = parent_.allocate(n);
    after_allocate<Options::num_allocate, Options::num_allocate_ok>(n, r, site);
    return r;
  }

  Block aligned_allocate(std::size_t n, std::size_t al, Site site = Site::current()) noexcept
    requires has_aligned_allocate<A>
  {
    const Block r = parent_.aligned_allocate(n, al);
    after_allocate<Options::num_aligned_allocate, Options::num_aligned_allocate_ok>(n, r, site);
    return r;
  }

  Block allocate_all(Site site = Site::current()) noexcept
    requires has_allocate_all<A>
  {
    const Block r = parent_.allocate_all();
    // "the size asked" is whatever it returns; a failure is not OK (SIZE_MAX was not given)
    after_allocate<Options::num_allocate, Options::num_allocate_ok>(r ? r.size : SIZE_MAX, r, site);
    return r;
  }

  Block allocate_fresh(std::size_t n, Site site = Site::current()) noexcept
    requires has_allocate_fresh<A>
  {
    const Block r = parent_.allocate_fresh(n);
    after_allocate<Options::num_allocate, Options::num_allocate_ok>(n, r, site);
    return r;
  }

  bool expand(Block& b, std::size_t delta, Site site = Site::current()) noexcept
    requires has_expand<A>
  {
    up<Options::num_expand>(1);
    const std::int64_t slack_before = slack(b);
    const bool ok = parent_.expand(b, delta);
    const std::uint64_t d = ok ? delta : 0;
    if (ok) {
      up<Options::num_expand_ok>(1);
      add_used(static_cast<std::int64_t>(delta));
      up<Options::bytes_allocated>(delta);
      up<Options::bytes_expanded>(delta);
      up<Options::bytes_slack>(static_cast<std::uint64_t>(slack(b) - slack_before));
      if constexpr (has_snapshots) top().bytes += static_cast<std::int64_t>(delta);
    }
    per_site(site, {{Options::num_expand, 1}, {Options::num_expand_ok, ok}, {Options::bytes_expanded, d},
                    {Options::bytes_allocated, d}});
    return ok;
  }

  bool reallocate(Block& b, std::size_t n, Site site = Site::current()) noexcept
    requires has_reallocate<A>
  {
    up<Options::num_reallocate>(1);
    const Block old = b;
    const std::int64_t slack_before = slack(b);
    const bool ok = parent_.reallocate(b, n);
    bool in_place = false;
    std::uint64_t grown = 0, shrunk = 0, moved = 0, kept = 0;
    if (ok) {
      up<Options::num_reallocate_ok>(1);
      up<Options::bytes_slack>(static_cast<std::uint64_t>(slack(b) - slack_before));
      add_used(static_cast<std::int64_t>(b.size) - static_cast<std::int64_t>(old.size));
      if (old.ptr == b.ptr) {  // in place (D's test: the same address)
        in_place = true;
        kept = old.size;
        if (b.size >= old.size) grown = b.size - old.size;
        else shrunk = old.size - b.size;
        up<Options::num_reallocate_in_place>(1);
        up<Options::bytes_not_moved>(kept);
        up<Options::bytes_allocated>(grown);
        up<Options::bytes_expanded>(grown);
        up<Options::bytes_contracted>(shrunk);
      } else {
        moved = old.size;
        up<Options::bytes_allocated>(b.size);
        up<Options::bytes_moved>(moved);
      }
      if constexpr (has_snapshots) {
        const std::int64_t delta = static_cast<std::int64_t>(b.size) - static_cast<std::int64_t>(old.size);
        if (delta >= 0) top().bytes += delta;
        else top().bytes -= -delta;
        if (!old && b) top().allocations += 1;
        if (old && !b) top().allocations -= 1;
      }
    }
    per_site(site, {{Options::num_reallocate, 1}, {Options::num_reallocate_ok, ok},
                    {Options::num_reallocate_in_place, in_place}, {Options::bytes_not_moved, kept},
                    {Options::bytes_expanded, grown}, {Options::bytes_contracted, shrunk},
                    {Options::bytes_moved, moved}});
    return ok;
  }

  bool deallocate(Block b, Site site = Site::current()) noexcept
    requires has_deallocate<A>
  {
    up<Options::num_deallocate>(1);
    const std::int64_t s = slack(b);
    const bool ok = parent_.deallocate(b);
    if (ok && b) {
      add_used(-static_cast<std::int64_t>(b.size));
      up<Options::bytes_slack>(static_cast<std::uint64_t>(-s));
      if constexpr (has_snapshots) {
        top().bytes -= static_cast<std::int64_t>(b.size);
        top().allocations -= 1;
      }
    }
    per_site(site, {{Options::num_deallocate, 1}, {Options::bytes_contracted, ok ? b.size : 0}});
    return ok;
  }

  bool deallocate_all(Site site = Site::current()) noexcept
    requires has_deallocate_all<A>
  {
    up<Options::num_deallocate_all>(1);
    per_site(site, {{Options::num_deallocate_all, 1}});
    const bool ok = parent_.deallocate_all();
    if (ok) {
      if constexpr (on<Options::bytes_used>) counters_[index<Options::bytes_used>] = 0;
      if constexpr (on<Options::bytes_slack>) counters_[index<Options::bytes_slack>] = 0;
      if constexpr (has_snapshots)
        for (auto& f : frames_) f.bytes.value = f.allocations.value = 0;
    }
    return ok;
  }

  Ternary owns(Block b, Site site = Site::current()) noexcept
    requires has_owns<A>
  {
    up<Options::num_owns>(1);
    per_site(site, {{Options::num_owns, 1}});
    return parent_.owns(b);
  }

  Ternary empty() noexcept
    requires(on<Options::bytes_used> || has_empty<A>)
  {
    if constexpr (on<Options::bytes_used>) return to_ternary(counters_[index<Options::bytes_used>] == 0);
    else return parent_.empty();
  }

  std::size_t good_alloc_size(std::size_t n) noexcept
    requires has_good_alloc_size<A>
  {
    return parent_.good_alloc_size(n);
  }
  Ternary resolve_internal_pointer(const void* p, Block& r) noexcept
    requires has_resolve_internal_pointer<A>
  {
    return parent_.resolve_internal_pointer(p, r);
  }
  bool copy(void* dst, const void* src, std::size_t n, stream_view s) noexcept
    requires has_copy<A>
  {
    return parent_.copy(dst, src, n, s);
  }

  // ---- the statistics ------------------------------------------------------------------------------------------

#define ALLOY_STATS_ACCESSOR(name)                                   \
  std::uint64_t name() const noexcept                                \
    requires on<Options::name>                                       \
  {                                                                  \
    return counters_[index<Options::name>];                          \
  }
  ALLOY_STATS_ACCESSOR(num_owns)
  ALLOY_STATS_ACCESSOR(num_allocate)
  ALLOY_STATS_ACCESSOR(num_allocate_ok)
  ALLOY_STATS_ACCESSOR(num_expand)
  ALLOY_STATS_ACCESSOR(num_expand_ok)
  ALLOY_STATS_ACCESSOR(num_reallocate)
  ALLOY_STATS_ACCESSOR(num_reallocate_ok)
  ALLOY_STATS_ACCESSOR(num_reallocate_in_place)
  ALLOY_STATS_ACCESSOR(num_deallocate)
  ALLOY_STATS_ACCESSOR(num_deallocate_all)
  ALLOY_STATS_ACCESSOR(num_aligned_allocate)
  ALLOY_STATS_ACCESSOR(num_aligned_allocate_ok)
  ALLOY_STATS_ACCESSOR(bytes_used)
  ALLOY_STATS_ACCESSOR(bytes_allocated)
  ALLOY_STATS_ACCESSOR(bytes_expanded)
  ALLOY_STATS_ACCESSOR(bytes_contracted)
  ALLOY_STATS_ACCESSOR(bytes_moved)
  ALLOY_STATS_ACCESSOR(bytes_not_moved)
  ALLOY_STATS_ACCESSOR(bytes_slack)
  ALLOY_STATS_ACCESSOR(bytes_high_tide)
#undef ALLOY_STATS_ACCESSOR

  /// The value of one option (0 when Flags does not keep it).
  std::uint64_t statistic(Options o) const noexcept {
    const auto v = static_cast<std::uint64_t>(o);
    if (!std::has_single_bit(v) || !(flags & v) || v >= (1u << 20)) return 0;
    return counters_[std::popcount(flags & (v - 1))];
  }

  /// D's reportStatistics: one `name:value` line per statistic kept, to anything with `out << ...`.
  template <class Out>
  void report_statistics(Out& out) const {
    for (std::uint64_t bit = 1; bit < (1u << 20); bit <<= 1)
      if (flags & bit) out << alloy::to_string(static_cast<Options>(bit)) << ':' << statistic(static_cast<Options>(bit)) << '\n';
  }

  /// The call sites seen, in the order of their first call (D's byFileLine lists the newest first).
  std::vector<PerCallStatistics> by_file_line() const
    requires per_call
  {
    return sites_;
  }
  /// D's reportPerCallStatistics: a header line, then one line per site.
  template <class Out>
  void report_per_call_statistics(Out& out) const
    requires per_call
  {
    out << "Stats for: StatsCollector\n";
    for (const auto& s : sites_) out << s.to_string() << '\n';
  }
  /// Call sites that could not be recorded (the table could not grow).
  std::size_t dropped_call_sites() const noexcept
    requires per_call
  {
    return dropped_;
  }

  /// RMM's push_counters: a new scope with zeroed counters; returns the counters of the scope it enters from.
  StatsSnapshot push_counters()
    requires has_snapshots
  {
    const StatsSnapshot r = top();
    frames_.push_back({});
    return r;
  }
  /// RMM's pop_counters: ends the current scope, folds it into the enclosing one and returns it. Popping the
  /// outermost scope is a broken precondition (RMM throws): asserted, and then nothing changes.
  StatsSnapshot pop_counters() noexcept
    requires has_snapshots
  {
    ALLOY_ASSERT(frames_.size() > 1, "StatsCollector::pop_counters: no scope was pushed");
    const StatsSnapshot r = top();
    if (frames_.size() < 2) return r;
    frames_.pop_back();
    top().bytes.add_nested(r.bytes);
    top().allocations.add_nested(r.allocations);
    return r;
  }
  StatsCounter bytes_counter() const noexcept
    requires has_snapshots
  {
    return frames_.back().bytes;
  }
  StatsCounter allocations_counter() const noexcept
    requires has_snapshots
  {
    return frames_.back().allocations;
  }

  A& parent() noexcept { return parent_; }
  const A& parent() const noexcept { return parent_; }

 private:
  template <Options O>
  void up(std::uint64_t v) noexcept {
    if constexpr (on<O>) counters_[index<O>] += v;
  }
  void add_used(std::int64_t d) noexcept {
    if constexpr (on<Options::bytes_used>) {
      auto& u = counters_[index<Options::bytes_used>];
      u += static_cast<std::uint64_t>(d);
      if constexpr (on<Options::bytes_high_tide>) {
        auto& h = counters_[index<Options::bytes_high_tide>];
        if (u > h) h = u;
      }
    }
  }
  // good_alloc_size(b.size) - b.size: what the block reserves beyond its size (0 for the empty block).
  std::int64_t slack(Block b) noexcept {
    if constexpr (on<Options::bytes_slack>) {
      if (!b) return 0;
      const std::size_t g = alloy::good_alloc_size(parent_, b.size);
      return g > b.size ? static_cast<std::int64_t>(g - b.size) : 0;
    } else {
      (void)b;
      return 0;
    }
  }
  template <Options Num, Options NumOk>
  void after_allocate(std::size_t n, Block r, Site site) noexcept {
    up<Num>(1);
    up<NumOk>(r.size == n);
    if (r) {
      add_used(static_cast<std::int64_t>(r.size));
      up<Options::bytes_allocated>(r.size);
      up<Options::bytes_slack>(static_cast<std::uint64_t>(slack(r)));
      if constexpr (has_snapshots) {
        top().bytes += static_cast<std::int64_t>(r.size);
        top().allocations += 1;
      }
    }
    per_site(site, {{Num, 1}, {NumOk, r.size == n}, {Options::bytes_allocated, r.size}});
  }

  struct Add {
    Options o;
    std::uint64_t v;
  };
  void per_site(Site site, std::initializer_list<Add> adds) noexcept {
    if constexpr (per_call) {
      bool any_on = false;
      for (const Add& a : adds) any_on |= (per_call_flags & static_cast<std::uint64_t>(a.o)) != 0;
      if (!any_on) return;
      PerCallStatistics* s = find_site(site);
      if (!s) return;
      for (const Add& a : adds) {
        const auto bit = static_cast<std::uint64_t>(a.o);
        if (per_call_flags & bit) s->values[std::popcount(per_call_flags & (bit - 1))] += a.v;
      }
    } else {
      (void)site, (void)adds;
    }
  }
  PerCallStatistics* find_site(const detail::source_location& site) noexcept {
    const Key k{site.file_name(), site.line()};
    if (auto it = index_.find(k); it != index_.end()) return &sites_[it->second];
    try {
      sites_.push_back(PerCallStatistics{site.file_name(), site.function_name(), site.line(), site.column(), {}});
      try {
        index_.emplace(k, sites_.size() - 1);
      } catch (...) {
        sites_.pop_back();
        throw;
      }
      return &sites_.back();
    } catch (...) {
      ++dropped_;
      return nullptr;
    }
  }
  StatsSnapshot& top() noexcept { return frames_.back(); }
  const StatsSnapshot& top() const noexcept { return frames_.back(); }

  using Key = std::pair<std::string_view, std::uint_least32_t>;  // D's key: file and line
  [[no_unique_address]] A parent_{};
  std::uint64_t counters_[counter_count == 0 ? 1 : counter_count] = {};
  [[no_unique_address]] std::conditional_t<has_snapshots, std::vector<StatsSnapshot>, detail::NoStorage<0>> frames_ =
      make_frames();
  [[no_unique_address]] std::conditional_t<per_call, std::vector<PerCallStatistics>, detail::NoStorage<1>> sites_{};
  [[no_unique_address]] std::conditional_t<per_call, std::map<Key, std::size_t>, detail::NoStorage<2>> index_{};
  [[no_unique_address]] std::conditional_t<per_call, std::size_t, detail::NoStorage<3>> dropped_{};

  static auto make_frames() {
    if constexpr (has_snapshots) return std::vector<StatsSnapshot>(1);
    else return detail::NoStorage<0>{};
  }
};

}  // namespace alloy
