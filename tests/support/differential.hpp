#pragma once
// run_differential(a, model, options): a long random sequence of operations on allocator `a`, checked against
//   * invariants that hold for every allocator: exact sizes, alignment, no two live blocks overlap, contents survive
//     (written and read back where the host may touch the memory, through `copy` where it may not), owns(live) is
//     yes, resolve_internal_pointer(inside a live block) finds it, empty() agrees with the live set;
//   * and, when a model is given, the model's answers: every primitive the model declares is called in lockstep and
//     its result must equal the allocator's (same Block, same bool, same Ternary). A model is a plain, obviously
//     correct re-implementation (a std::vector<bool> bitmap, a bump pointer over the same addresses, ...).
// Ops pick a slot (as W3); an empty slot is allocated (allocate / aligned_allocate / allocate_fresh), a full one is
// deallocated, expanded, reallocated or queried. Seeds are fixed, so a failure replays.
#include <alloy/common.hpp>

#include <cstdint>
#include <concepts>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include <doctest/doctest.h>

#include "support/patterns.hpp"
#include "support/rng.hpp"

namespace alloy::test {

struct NoModel {};

struct DiffOptions {
  std::uint64_t seed = 0x9E3779B97F4A7C15ull;
  std::size_t ops = 100'000;
  std::size_t min_size = 1;
  std::size_t max_size = 512;
  std::size_t slots = 256;           // at most this many live blocks
  std::size_t max_alignment = 4096;  // aligned_allocate draws powers of two up to this
  bool aligned_allocate = true;      // use each primitive when the allocator has it
  bool allocate_fresh = true;
  bool expand = true;
  bool reallocate = true;
  bool aligned_reallocate = true;
  bool deallocate_all = true;        // about once every `deallocate_all_every` ops
  std::size_t deallocate_all_every = 20'000;
  // With a model that has allocate_all: right after every deallocate_all (half the time) and about once every
  // `allocate_all_every` ops (where it mostly fails: the allocator is seldom empty); a success goes into a slot and
  // is deallocated, expanded, reallocated and queried like any other block.
  bool allocate_all = true;
  std::size_t allocate_all_every = 5'000;
  bool contents = true;              // write and check patterns
  bool expect_allocations = true;    // the run is vacuous unless some allocation succeeded
  // When `check_invariants(a)` exists (found by argument-dependent lookup; it returns "" or what is broken): called
  // before every `invariants_every`-th operation and after the last (0: never).
  std::size_t invariants_every = 1;
};

struct DiffStats {
  std::size_t ops = 0, allocations = 0, failures = 0, deallocations = 0, refused_deallocations = 0, expansions = 0,
              failed_expansions = 0, reallocations = 0, failed_reallocations = 0, deallocate_alls = 0,
              allocate_alls = 0;
  std::size_t peak_live = 0, peak_live_bytes = 0;
};

namespace detail {
struct Slot {
  Block b{};
  std::uint64_t seed = 0;
  std::size_t written = 0;  // size when the pattern was written
};
}  // namespace detail

#define ALLOY_DIFF_CHECK(cond)                                                          \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      ++errors;                                                                         \
      FAIL_CHECK("differential: " #cond " failed at op " << i << " (seed " << o.seed << ")"); \
      if (errors > 20) return st;                                                       \
    }                                                                                   \
  } while (0)

template <class A, class Model = NoModel>
  requires(!std::is_same_v<std::remove_cv_t<Model>, DiffOptions>)  // run_differential(a, options) is the other one
DiffStats run_differential(A& a, Model& model, const DiffOptions& o = {}) {
  static_assert(allocator<A>);
  // The model's primitives are found with `requires`: one misspelt would silently never be compared. A model has
  // allocate at least.
  static_assert(std::is_same_v<Model, NoModel> || requires { model.allocate(std::size_t{1}); },
                "run_differential: the model must have allocate(n)");
  DiffStats st;
  Rng rng{o.seed};
  std::vector<detail::Slot> slots(o.slots);
  std::map<std::uintptr_t, std::size_t> live;  // address -> slot
  std::size_t live_bytes = 0, errors = 0, i = 0;
  std::uint64_t next_seed = 1;

  // Whether b meets a live block other than slot `self`'s: every live block that starts before b's end, from the
  // one before b's start on (only the neighbours when the allocator is right).
  auto overlaps_live = [&](Block b, std::size_t self) {
    const std::uintptr_t p = address_of(b.ptr), e = b.end_address();
    auto it = live.upper_bound(p);
    if (it != live.begin()) --it;
    for (; it != live.end() && it->first < e; ++it)
      if (it->second != self && slots[it->second].b.end_address() > p) return true;
    return false;
  };
  auto forget = [&](std::size_t s) {
    live.erase(address_of(slots[s].b.ptr));
    live_bytes -= slots[s].b.size;
    slots[s] = {};
  };
  auto remember = [&](std::size_t s, Block b) {
    slots[s].b = b;
    live.emplace(address_of(b.ptr), s);
    live_bytes += b.size;
    st.peak_live = std::max(st.peak_live, live.size());
    st.peak_live_bytes = std::max(st.peak_live_bytes, live_bytes);
    if (o.contents) {
      slots[s].seed = next_seed++;
      slots[s].written = b.size;
      write_pattern(a, b, slots[s].seed);
    }
  };
  auto contents_ok = [&](std::size_t s, Block now) {
    return !o.contents || check_pattern(a, now, slots[s].seed, slots[s].written);
  };

  // Without a model too (its result must still not overlap a live block); a model that lacks it would lose step.
  [[maybe_unused]] constexpr bool lockstep_allocate_all =
      has_allocate_all<A> && (std::is_same_v<Model, NoModel> || requires { model.allocate_all(); });
  // allocate_all into slot s (empty), in lockstep with the model.
  auto try_allocate_all = [&](std::size_t s) {
    if constexpr (lockstep_allocate_all) {
      const Block b = a.allocate_all();
      if constexpr (requires { model.allocate_all(); }) {
        if (!(b == model.allocate_all())) return false;
      }
      if (b) {
        ++st.allocations;
        ++st.allocate_alls;
        if (overlaps_live(b, s)) return false;
        remember(s, b);
      }
    } else {
      (void)s;
    }
    return true;
  };
  auto invariants = [&]() -> std::string {
    if constexpr (requires { { check_invariants(a) } -> std::convertible_to<std::string>; }) return check_invariants(a);
    else return {};
  };
  for (i = 0; i < o.ops; ++i, ++st.ops) {
    if (o.invariants_every && i % o.invariants_every == 0) {
      if (const std::string broken = invariants(); !broken.empty()) {
        FAIL_CHECK("invariants broken before op " << i << " (seed " << o.seed << "): " << broken);
        return st;
      }
    }
    if constexpr (has_deallocate_all<A>) {
      if (o.deallocate_all && o.deallocate_all_every && rng.below(o.deallocate_all_every) == 0) {
        const bool r = a.deallocate_all();
        if constexpr (requires { model.deallocate_all(); }) ALLOY_DIFF_CHECK(r == model.deallocate_all());
        ALLOY_DIFF_CHECK(r);
        for (std::size_t s = 0; s < slots.size(); ++s)
          if (slots[s].b) forget(s);
        ++st.deallocate_alls;
        if constexpr (has_empty<A>) ALLOY_DIFF_CHECK(a.empty() == Ternary::yes);
        if constexpr (lockstep_allocate_all) {
          if (o.allocate_all && rng.below(2)) ALLOY_DIFF_CHECK(try_allocate_all(rng.below(slots.size())));
        }
        continue;
      }
    }
    if constexpr (lockstep_allocate_all) {
      if (o.allocate_all && o.allocate_all_every && rng.below(o.allocate_all_every) == 0) {
        if (const std::size_t s = rng.below(slots.size()); !slots[s].b) {
          ALLOY_DIFF_CHECK(try_allocate_all(s));
          continue;
        }
      }
    }
    const std::size_t s = rng.below(slots.size());
    auto& slot = slots[s];
    if (!slot.b) {
      const std::size_t n = o.min_size + rng.below(o.max_size - o.min_size + 1);
      const unsigned how = static_cast<unsigned>(rng.below(10));
      Block b{};
      std::size_t align = A::alignment;
      if (has_aligned_allocate<A> && o.aligned_allocate && how < 2) {
        if constexpr (has_aligned_allocate<A>) {
          align = std::size_t{1} << rng.below(log2_exact(o.max_alignment) + 1);
          b = a.aligned_allocate(n, align);
          if constexpr (requires { model.aligned_allocate(n, align); }) ALLOY_DIFF_CHECK(b == model.aligned_allocate(n, align));
        }
      } else if (has_allocate_fresh<A> && o.allocate_fresh && how == 2) {
        if constexpr (has_allocate_fresh<A>) {
          b = a.allocate_fresh(n);
          if constexpr (requires { model.allocate_fresh(n); }) ALLOY_DIFF_CHECK(b == model.allocate_fresh(n));
        }
      } else {
        b = a.allocate(n);
        if constexpr (requires { model.allocate(n); }) ALLOY_DIFF_CHECK(b == model.allocate(n));
      }
      if (!b) {
        ++st.failures;
        continue;
      }
      ++st.allocations;
      ALLOY_DIFF_CHECK(b.size == n);
      ALLOY_DIFF_CHECK(is_aligned(b.ptr, align));
      ALLOY_DIFF_CHECK(!overlaps_live(b, s));
      remember(s, b);
      continue;
    }
    // A live block: query it, then deallocate, expand or reallocate it.
    ALLOY_DIFF_CHECK(contents_ok(s, slot.b));
    if constexpr (has_owns<A>) {
      const Ternary t = a.owns(slot.b);
      ALLOY_DIFF_CHECK(t == Ternary::yes);
      if constexpr (requires { model.owns(slot.b); }) {
        ALLOY_DIFF_CHECK(t == model.owns(slot.b));
        // and blocks around it, live or not, inside or past the memory: owns is more than "yes for live blocks"
        const std::uintptr_t q = address_of(slot.b.ptr) + rng.below(4 * o.max_size) - std::min<std::uintptr_t>(address_of(slot.b.ptr) - 1, 2 * o.max_size);
        const Block near{to_pointer(q), 1 + rng.below(2 * o.max_size)};
        ALLOY_DIFF_CHECK(a.owns(near) == model.owns(near));
      }
    }
    if constexpr (has_resolve_internal_pointer<A>) {
      const auto* p = static_cast<const unsigned char*>(slot.b.ptr) + rng.below(slot.b.size);
      Block r{};
      const Ternary t = a.resolve_internal_pointer(p, r);
      ALLOY_DIFF_CHECK(t == Ternary::yes);
      ALLOY_DIFF_CHECK(address_of(r.ptr) <= address_of(slot.b.ptr) && r.end_address() >= slot.b.end_address());
      ALLOY_DIFF_CHECK(!overlaps_live(r, s));
      if constexpr (requires { model.resolve_internal_pointer(p, r); }) {
        Block rm{};
        ALLOY_DIFF_CHECK(t == model.resolve_internal_pointer(p, rm));
        ALLOY_DIFF_CHECK(r == rm);
      }
      // And anywhere in the payload and one block past it: free blocks, the slack past a block's size, the end.
      if constexpr (requires { model.resolve_internal_pointer(p, r); a.payload(); a.block_count(); a.block_size(); }) {
        if (a.payload()) {
          const auto* q = static_cast<const unsigned char*>(
              to_pointer(address_of(a.payload()) + rng.below((a.block_count() + 1) * a.block_size())));
          Block ra{}, rm{};
          const Ternary ta = a.resolve_internal_pointer(q, ra);
          ALLOY_DIFF_CHECK(ta == model.resolve_internal_pointer(q, rm));
          if (ta == Ternary::yes) ALLOY_DIFF_CHECK(ra == rm);
        }
      }
    }
    const unsigned what = static_cast<unsigned>(rng.below(10));
    if (what < 2 && o.expand) {
      if constexpr (has_expand<A>) {
        const std::size_t d = rng.below(o.max_size);
        Block b = slot.b, bm = slot.b;
        const bool r = a.expand(b, d);
        if constexpr (requires { model.expand(bm, d); }) {
          ALLOY_DIFF_CHECK(r == model.expand(bm, d));
          ALLOY_DIFF_CHECK(b == bm);
        }
        if (r) {
          ++st.expansions;
          ALLOY_DIFF_CHECK(b.ptr == slot.b.ptr && b.size == slot.b.size + d);
          live_bytes += d;
          slot.b = b;
          ALLOY_DIFF_CHECK(!overlaps_live(b, s));
          ALLOY_DIFF_CHECK(contents_ok(s, b));
        } else {
          ++st.failed_expansions;
          ALLOY_DIFF_CHECK(b == slot.b);
        }
        continue;
      }
    }
    if (what >= 2 && what < 4 && o.reallocate) {
      if constexpr (has_reallocate<A> || has_aligned_reallocate<A>) {
        const std::size_t n = o.min_size + rng.below(o.max_size - o.min_size + 1);
        Block b = slot.b, bm = slot.b;
        bool r = false;
        std::size_t align = A::alignment;
        if (has_aligned_reallocate<A> && o.aligned_reallocate && (what == 3 || !has_reallocate<A>)) {
          if constexpr (has_aligned_reallocate<A>) {
            align = std::size_t{1} << rng.below(log2_exact(o.max_alignment) + 1);
            r = a.aligned_reallocate(b, n, align);
            if constexpr (requires { model.aligned_reallocate(bm, n, align); }) {
              ALLOY_DIFF_CHECK(r == model.aligned_reallocate(bm, n, align));
              ALLOY_DIFF_CHECK(b == bm);
            }
          }
        } else {
          if constexpr (has_reallocate<A>) {
            r = a.reallocate(b, n);
            if constexpr (requires { model.reallocate(bm, n); }) {
              ALLOY_DIFF_CHECK(r == model.reallocate(bm, n));
              ALLOY_DIFF_CHECK(b == bm);
            }
          }
        }
        if (r) {
          ++st.reallocations;
          ALLOY_DIFF_CHECK(b.size == n);
          ALLOY_DIFF_CHECK(is_aligned(b.ptr, align));
          live.erase(address_of(slot.b.ptr));
          live_bytes -= slot.b.size;
          ALLOY_DIFF_CHECK(!overlaps_live(b, s));
          ALLOY_DIFF_CHECK(contents_ok(s, b));
          slot.b = b;
          live.emplace(address_of(b.ptr), s);
          live_bytes += b.size;
          if (o.contents) {  // the old pattern's tail may be gone: write a fresh one for the new size
            slot.seed = next_seed++;
            slot.written = b.size;
            write_pattern(a, b, slot.seed);
          }
        } else {
          ++st.failed_reallocations;
          ALLOY_DIFF_CHECK(b == slot.b);
        }
        continue;
      }
    }
    if constexpr (has_deallocate<A>) {
      const bool r = a.deallocate(slot.b);
      if constexpr (requires { model.deallocate(slot.b); }) {
        ALLOY_DIFF_CHECK(r == model.deallocate(slot.b));
      } else {
        ALLOY_DIFF_CHECK(r);
      }
      if (r) {
        ++st.deallocations;
        forget(s);
      } else {
        ++st.refused_deallocations;
      }
    }
    if constexpr (has_empty<A>) {
      if ((i & 63) == 0) {
        const Ternary e = a.empty();
        ALLOY_DIFF_CHECK(e == Ternary::unknown || e == to_ternary(live.empty()));
        if constexpr (requires { model.empty(); }) ALLOY_DIFF_CHECK(e == model.empty());
      }
    }
  }
  // Give everything back so the allocator ends empty.
  for (std::size_t s = 0; s < slots.size(); ++s) {
    if (!slots[s].b) continue;
    ALLOY_DIFF_CHECK(contents_ok(s, slots[s].b));
    if constexpr (has_deallocate<A>) {
      const bool r = a.deallocate(slots[s].b);
      if constexpr (requires { model.deallocate(slots[s].b); }) ALLOY_DIFF_CHECK(r == model.deallocate(slots[s].b));
      if (r) forget(s);
    }
  }
  if constexpr (has_deallocate_all<A>) {
    if (!live.empty()) {
      ALLOY_DIFF_CHECK(a.deallocate_all());
      if constexpr (requires { model.deallocate_all(); }) model.deallocate_all();
      live.clear();
    }
  }
  if constexpr (has_empty<A>) {
    if (live.empty()) ALLOY_DIFF_CHECK(a.empty() != Ternary::no);
  }
  if (o.expect_allocations) ALLOY_DIFF_CHECK(st.allocations > 0);
  if (o.invariants_every) {
    if (const std::string broken = invariants(); !broken.empty()) FAIL_CHECK("invariants broken at the end: " << broken);
  }
  return st;
}
#undef ALLOY_DIFF_CHECK

template <class A>
DiffStats run_differential(A& a, const DiffOptions& o = {}) {
  NoModel m;
  return run_differential(a, m, o);
}

}  // namespace alloy::test
