#pragma once
// The replay engine of alloy-replay (docs/replay.md), usable as a library: prepare a parsed trace, then replay it on
// a stack descriptor (stacks.hpp) or on every stack of an Mp11 list.
//
// A stack descriptor D has `static constexpr const char* name` and `static std::unique_ptr<T> make(const TraceStats&)`
// where the target T has:
//   Block allocate(size_t n, size_t alignment) noexcept;
//   bool deallocate(Block b, size_t alignment) noexcept;
//   bool reallocate(Block& b, size_t n, size_t alignment) noexcept;   // b unchanged on failure
//   size_t held() const noexcept;                                     // bytes held from the parent now
// AlloyTarget<A> adapts any alloy allocator; CountingMallocator is the parent that counts what a stack holds.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <memory_resource>
#include <type_traits>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>
#include <malloc.h>

#include <alloy/aligned_mallocator.hpp>
#include <alloy/common.hpp>

#include "trace.hpp"

namespace alloy::replay {

/// What the replay engine needs to know about a trace before it runs it.
struct TraceStats {
  std::size_t events = 0, allocations = 0, deallocations = 0, reallocations = 0;
  std::size_t threads = 0;                  // distinct thread numbers
  std::size_t peak_live_bytes = 0;          // max over time of the sum of live block sizes
  std::size_t peak_live_blocks = 0;
  std::size_t total_requested_bytes = 0;    // sum of every a size and every r size
  std::size_t max_size = 0, max_alignment = 1;
  std::size_t live_at_end = 0;              // blocks the trace never frees
};

/// One step of a prepared trace: ids are replaced by dense slot numbers (one per block lifetime).
struct Step {
  TraceEvent::Op op;
  std::uint32_t slot;
  std::size_t size;
  std::size_t alignment;
};

struct PreparedTrace {
  std::vector<Step> steps;
  std::size_t slots = 0;
  std::vector<std::size_t> slot_alignment;  // each block's alignment (fixed by its `a` line)
  TraceStats stats;
};

/// Maps ids to slots and computes the statistics. Precondition: `events` passed parse_trace's checks.
/// A block keeps the alignment of its `a` line: `d` and `r` steps use it (so a pmr resource is given back the same
/// alignment). An `r` that asks for a larger alignment becomes an `a` of a new block and a `d` of the old one (one
/// step more), which is what any allocator does for it.
inline PreparedTrace prepare(const std::vector<TraceEvent>& events) {
  PreparedTrace p;
  p.steps.reserve(events.size());
  std::unordered_map<std::uint64_t, std::uint32_t> slot_of;
  std::vector<std::size_t> size_of;
  std::vector<std::uint32_t> threads;
  std::size_t live = 0, live_blocks = 0;
  TraceStats& s = p.stats;
  for (const TraceEvent& e : events) {
    if (std::find(threads.begin(), threads.end(), e.thread) == threads.end()) threads.push_back(e.thread);
    auto new_slot = [&](std::size_t size, std::size_t al) {
      const auto slot = static_cast<std::uint32_t>(size_of.size());
      slot_of[e.id] = slot;
      size_of.push_back(size);
      p.slot_alignment.push_back(al);
      return slot;
    };
    switch (e.op) {
      case TraceEvent::Op::allocate: {
        const std::uint32_t slot = new_slot(e.size, e.alignment);
        p.steps.push_back({e.op, slot, e.size, e.alignment});
        live += e.size;
        ++live_blocks;
        ++s.allocations;
        s.total_requested_bytes += e.size;
        break;
      }
      case TraceEvent::Op::deallocate: {
        const std::uint32_t slot = slot_of.at(e.id);
        p.steps.push_back({e.op, slot, size_of[slot], p.slot_alignment[slot]});
        slot_of.erase(e.id);
        live -= size_of[slot];
        --live_blocks;
        ++s.deallocations;
        break;
      }
      case TraceEvent::Op::reallocate: {
        const std::uint32_t slot = slot_of.at(e.id);
        const std::size_t old_size = size_of[slot];
        if (e.alignment > p.slot_alignment[slot]) {
          const std::uint32_t ns = new_slot(e.size, e.alignment);
          p.steps.push_back({TraceEvent::Op::allocate, ns, e.size, e.alignment});
          p.steps.push_back({TraceEvent::Op::deallocate, slot, old_size, p.slot_alignment[slot]});
        } else {
          p.steps.push_back({e.op, slot, e.size, p.slot_alignment[slot]});
          size_of[slot] = e.size;
        }
        live = live - old_size + e.size;
        ++s.reallocations;
        s.total_requested_bytes += e.size;
        break;
      }
    }
    s.peak_live_bytes = std::max(s.peak_live_bytes, live);
    s.peak_live_blocks = std::max(s.peak_live_blocks, live_blocks);
    s.max_size = std::max(s.max_size, e.size);
    s.max_alignment = std::max(s.max_alignment, e.alignment);
  }
  s.events = events.size();
  s.threads = threads.size();
  s.live_at_end = live_blocks;
  p.slots = size_of.size();
  return p;
}

// ---------------------------------------------------------------------------------------------------------------
// Counting parents and targets

/// The bytes a stack currently holds from its parent, and the most it ever held. One global pair: the replay is
/// serial and measures one stack at a time.
struct HeldCounter {
  static inline std::size_t held = 0;
  static inline std::size_t peak = 0;
  static void reset() noexcept { held = peak = 0; }
  static void add(std::size_t n) noexcept {
    held += n;
    peak = std::max(peak, held);
  }
  static void sub(std::size_t n) noexcept { held -= n; }
};

/// AlignedMallocator that counts every byte it hands out in HeldCounter: the parent of alloy stacks under replay.
/// Stateless, so any factory can make it.
struct CountingMallocator {
  static constexpr std::size_t alignment = platform_alignment;
  Block allocate(std::size_t n) noexcept { return count(AlignedMallocator::instance.allocate(n)); }
  Block aligned_allocate(std::size_t n, std::size_t a) noexcept {
    return count(AlignedMallocator::instance.aligned_allocate(n, a));
  }
  bool deallocate(Block b) noexcept {
    HeldCounter::sub(b.size);
    return AlignedMallocator::instance.deallocate(b);
  }
  bool reallocate(Block& b, std::size_t n) noexcept {
    const std::size_t old = b.size;
    if (!AlignedMallocator::instance.reallocate(b, n)) return false;
    HeldCounter::sub(old);
    HeldCounter::add(b.size);
    return true;
  }
  bool aligned_reallocate(Block& b, std::size_t n, std::size_t a) noexcept {
    const std::size_t old = b.size;
    if (!AlignedMallocator::instance.aligned_reallocate(b, n, a)) return false;
    HeldCounter::sub(old);
    HeldCounter::add(b.size);
    return true;
  }

 private:
  static Block count(Block b) noexcept {
    if (b) HeldCounter::add(b.size);
    return b;
  }
};

/// Adapts an alloy allocator to the replay: alignments above A::alignment go to aligned_allocate /
/// aligned_reallocate when A has them, and fail otherwise; reallocate is alloy::reallocate (A's own, or expand, or
/// allocate + copy + deallocate). held() reads HeldCounter, so A must draw from CountingMallocator.
template <allocator A>
class AlloyTarget {
 public:
  template <class... Args>
  explicit AlloyTarget(Args&&... args) : a_(std::forward<Args>(args)...) {}
  Block allocate(std::size_t n, std::size_t al) noexcept {
    if (al <= A::alignment) return a_.allocate(n);
    if constexpr (has_aligned_allocate<A>) return a_.aligned_allocate(n, al);
    else return {};
  }
  bool deallocate(Block b, std::size_t) noexcept { return alloy::deallocate(a_, b); }
  bool reallocate(Block& b, std::size_t n, std::size_t al) noexcept {
    if (al <= A::alignment) return alloy::reallocate(a_, b, n);
    if constexpr (has_aligned_allocate<A>) return alloy::aligned_reallocate(a_, b, n, al);
    else return false;
  }
  [[nodiscard]] std::size_t held() const noexcept { return HeldCounter::held; }
  A& get() noexcept { return a_; }

 private:
  A a_;
};

/// glibc malloc itself: malloc / realloc / free, posix_memalign above 16. held() is an estimate from mallinfo2,
/// taken against a baseline read at construction (the replay tool shares glibc's heap): the growth of the bytes in
/// use (the blocks with their chunk headers and rounding) + the growth of the free bytes inside the heap (holes the
/// workload left, when positive) + the growth of the mmapped chunks. It charges glibc for its headers and holes, which
/// is what fragmentation means for it; holes left by the tool itself before the replay are reused for free.
class GlibcTarget {
 public:
  GlibcTarget() noexcept {
    ::malloc_trim(0);
    base_ = ::mallinfo2();
  }
  Block allocate(std::size_t n, std::size_t al) noexcept {
    if (al <= platform_alignment) {
      void* p = std::malloc(n);
      return p ? Block{p, n} : Block{};
    }
    void* p = nullptr;
    return ::posix_memalign(&p, al, n) == 0 ? Block{p, n} : Block{};
  }
  bool deallocate(Block b, std::size_t) noexcept {
    std::free(b.ptr);
    return true;
  }
  bool reallocate(Block& b, std::size_t n, std::size_t al) noexcept {
    if (al <= platform_alignment) {
      void* p = std::realloc(b.ptr, n);
      if (!p) return false;
      b = {p, n};
      return true;
    }
    Block nb = allocate(n, al);
    if (!nb) return false;
    if (b) std::memcpy(nb.ptr, b.ptr, std::min(n, b.size));
    std::free(b.ptr);
    b = nb;
    return true;
  }
  [[nodiscard]] std::size_t held() const noexcept {
    const struct mallinfo2 now = ::mallinfo2();
    auto growth = [](std::size_t x, std::size_t base) { return x > base ? x - base : 0; };
    return growth(now.uordblks, base_.uordblks) + growth(now.fordblks, base_.fordblks) + growth(now.hblkhd, base_.hblkhd);
  }

 private:
  struct mallinfo2 base_ {};
};

/// A std::pmr upstream that counts in HeldCounter and forwards to new/delete.
class CountingResource final : public std::pmr::memory_resource {
  void* do_allocate(std::size_t n, std::size_t al) override {
    void* p = std::pmr::new_delete_resource()->allocate(n, al);
    HeldCounter::add(n);
    return p;
  }
  void do_deallocate(void* p, std::size_t n, std::size_t al) override {
    HeldCounter::sub(n);
    std::pmr::new_delete_resource()->deallocate(p, n, al);
  }
  bool do_is_equal(const std::pmr::memory_resource& o) const noexcept override { return this == &o; }
};

/// Any std::pmr resource R built over a CountingResource (R's constructor takes the upstream last).
/// libstdc++ 12's pool resources return a block aligned only to its size class when the size is not a multiple of
/// the alignment (allocate(100, 32) gives a 16-aligned block, allocate(8, 16) an 8-aligned one; clang's UBSan
/// reports the broken alignment assumption), so the pools are asked for the size rounded up to the alignment, which
/// they then align (checked on 45,045 requests of sizes 1-5000 and alignments 8-512).
template <class R>
class PmrTarget {
  static constexpr bool misaligns = std::is_same_v<R, std::pmr::unsynchronized_pool_resource> ||
                                    std::is_same_v<R, std::pmr::synchronized_pool_resource>;
  static std::size_t asked(std::size_t n, std::size_t al) noexcept {
    if constexpr (misaligns) return alloy::round_up(n, al);
    return n;
  }

 public:
  template <class... Args>
  explicit PmrTarget(Args&&... args) : r_(std::forward<Args>(args)..., &upstream_) {}
  Block allocate(std::size_t n, std::size_t al) noexcept {
    al = std::max(al, platform_alignment);
    if (n > SIZE_MAX - al) return {};
    try {
      return {r_.allocate(asked(n, al), al), n};
    } catch (...) {
      return {};
    }
  }
  bool deallocate(Block b, std::size_t al) noexcept {
    al = std::max(al, platform_alignment);
    r_.deallocate(b.ptr, asked(b.size, al), al);
    return true;
  }
  bool reallocate(Block& b, std::size_t n, std::size_t al) noexcept {
    Block nb = allocate(n, al);
    if (!nb) return false;
    if (b) {
      std::memcpy(nb.ptr, b.ptr, std::min(n, b.size));
      deallocate(b, al);
    }
    b = nb;
    return true;
  }
  [[nodiscard]] std::size_t held() const noexcept { return HeldCounter::held; }

 private:
  CountingResource upstream_;  // declared first: built before r_, destroyed after it
  R r_;
};

// ---------------------------------------------------------------------------------------------------------------
// The engine

struct ReplayOptions {
  std::size_t repetitions = 5;  // timed passes; ns/op is their median
  bool touch = true;            // write one byte into every block (keeps the optimizer honest)
};

struct StackResult {
  std::string name;
  std::size_t ops = 0;                  // trace events replayed per pass
  double ns_per_op = 0;                 // median over the timed passes
  std::size_t failures = 0;             // allocate / reallocate that failed (measurement pass)
  std::size_t refused_frees = 0;        // deallocate that returned false
  std::size_t peak_held = 0;            // most bytes held from the parent at any time
  std::size_t peak_live = 0;            // most bytes live (what the trace asked for and got) at any time
  std::size_t held_at_peak_live = 0;    // bytes held at the moment live bytes peaked
  double fragmentation = 0;             // held_at_peak_live / peak_live (0 when nothing was live)
  std::size_t held_after = 0;           // bytes still held from the parent after the stack was destroyed (a leak)
};

namespace detail {
inline std::uintptr_t touch_sink = 0;

template <class T>
std::size_t run_pass(T& t, const PreparedTrace& p, std::vector<Block>& slots, const ReplayOptions& o, StackResult* r) {
  std::size_t failures = 0, refused = 0, live = 0;
  std::uintptr_t sink = 0;
  for (const Step& s : p.steps) {
    Block& b = slots[s.slot];
    switch (s.op) {
      case TraceEvent::Op::allocate:
        b = t.allocate(s.size, s.alignment);
        if (!b) ++failures;
        else if (o.touch) *static_cast<unsigned char*>(b.ptr) = 1;
        sink += address_of(b.ptr);
        if (r && b) live += b.size;
        break;
      case TraceEvent::Op::deallocate:
        if (b) {
          if (r) live -= b.size;
          if (!t.deallocate(b, s.alignment)) ++refused;
          b = {};
        }
        break;
      case TraceEvent::Op::reallocate: {
        const std::size_t before = b.size;
        if (!t.reallocate(b, s.size, s.alignment)) ++failures;
        else if (o.touch) *static_cast<unsigned char*>(b.ptr) = 2;
        sink += address_of(b.ptr);
        if (r) live = live - before + b.size;
        break;
      }
    }
    if (r && s.op != TraceEvent::Op::deallocate) {
      const std::size_t h = t.held();
      r->peak_held = std::max(r->peak_held, h);
      if (live > r->peak_live) {
        r->peak_live = live;
        r->held_at_peak_live = h;
      }
    }
  }
  touch_sink += sink;
  if (r) {
    r->failures = failures;
    r->refused_frees = refused;
  }
  return failures;
}

template <class T>
void free_survivors(T& t, const PreparedTrace& p, std::vector<Block>& slots) {
  // Free in reverse order of allocation (stack-friendly for Region-like stacks).
  for (std::size_t i = slots.size(); i-- > 0;) {
    if (slots[i]) t.deallocate(slots[i], p.slot_alignment[i]);
    slots[i] = {};
  }
}
}  // namespace detail

/// Replays `p` on stack D: `o.repetitions` timed passes on fresh stacks (construction, destruction and freeing the
/// blocks the trace leaves live are not timed), then one measurement pass that tracks live and held bytes.
template <class D>
StackResult replay_stack(const PreparedTrace& p, const ReplayOptions& o = {}) {
  StackResult r;
  r.name = D::name;
  r.ops = p.steps.size();
  std::vector<Block> slots(p.slots);
  std::vector<double> times;
  for (std::size_t rep = 0; rep < o.repetitions; ++rep) {
    HeldCounter::reset();
    auto t = D::make(p.stats);
    const auto t0 = std::chrono::steady_clock::now();
    detail::run_pass(*t, p, slots, o, nullptr);
    const auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
    detail::free_survivors(*t, p, slots);
  }
  if (!times.empty() && r.ops) {
    std::sort(times.begin(), times.end());
    r.ns_per_op = times[times.size() / 2] / static_cast<double>(r.ops);
  }
  HeldCounter::reset();
  {
    auto t = D::make(p.stats);
    detail::run_pass(*t, p, slots, o, &r);
    detail::free_survivors(*t, p, slots);
  }
  r.held_after = HeldCounter::held;
  r.fragmentation = r.peak_live ? static_cast<double>(r.held_at_peak_live) / static_cast<double>(r.peak_live) : 0;
  return r;
}

/// Replays `p` on every stack of the Mp11 list `Stacks` whose name contains `filter` (all when empty).
/// `progress(name)` is called before each stack.
template <class Stacks, class Progress>
std::vector<StackResult> replay_all(const PreparedTrace& p, const ReplayOptions& o, const std::string& filter,
                                    Progress progress) {
  std::vector<StackResult> out;
  boost::mp11::mp_for_each<boost::mp11::mp_transform<boost::mp11::mp_identity, Stacks>>([&](auto t) {
    using D = typename decltype(t)::type;
    if (!filter.empty() && std::string(D::name).find(filter) == std::string::npos) return;
    progress(D::name);
    out.push_back(replay_stack<D>(p, o));
  });
  return out;
}
template <class Stacks>
std::vector<StackResult> replay_all(const PreparedTrace& p, const ReplayOptions& o = {}, const std::string& filter = {}) {
  return replay_all<Stacks>(p, o, filter, [](const char*) {});
}

}  // namespace alloy::replay
