#pragma once
// The one driver of the fuzzers in tests/fuzz/ (libFuzzer). A fuzzer names its stack and calls
// alloy::fuzz::run(a, model, config, input): the input is read as a sequence of operations on up to 32 slots, each
// operation one of the primitives the allocator declares (found with the has_x concepts), with sizes, deltas and
// alignments drawn from a set that includes 0, 1, SIZE_MAX, SIZE_MAX - k, the arena size +- 1, multiples of the
// block size +- 1 and non-powers of two. The live blocks are checked: exact size, alignment, inside the memory the
// config names, no two overlap, and their contents (a pattern derived from the block's id, written when it is made
// or grown) survive every later operation, expand and reallocate included: the edges of every live block after every
// step, the whole block (sampled above 1 KiB) whenever an operation touches it. owns,
// resolve_internal_pointer, empty and good_alloc_size are checked against the live set, and every primitive the
// model declares is called in lockstep and must give the same answer (the models of tests/support).
// Misuse operations (a double free, a foreign block, a wrong size) run only where the config says the block refuses
// them (docs/primitives.md, "Misuse"), and must be refused with nothing changed.
// A broken check prints what broke and the operation's index, and aborts: libFuzzer keeps the input.
// No doctest and nothing heavy: each fuzzer is one light translation unit.
#include <alloy/common.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

namespace alloy::fuzz {

/// The fuzzer's bytes, read front to back; past the end every read is 0.
class Input {
 public:
  Input(const std::uint8_t* p, std::size_t n) noexcept : p_(p), n_(n) {}
  bool done() const noexcept { return i_ >= n_; }
  std::uint8_t u8() noexcept { return i_ < n_ ? p_[i_++] : 0; }
  std::uint16_t u16() noexcept { return static_cast<std::uint16_t>(u8() | (u8() << 8)); }
  std::uint32_t u32() noexcept { return static_cast<std::uint32_t>(u16()) | (static_cast<std::uint32_t>(u16()) << 16); }

 private:
  const std::uint8_t* p_;
  std::size_t n_, i_ = 0;
};

struct NoModel {};

struct Config {
  std::size_t arena = 4096;        // the memory's size: requests of arena - 1, arena, arena + 1
  std::size_t granule = 16;        // the block's unit (a BitmappedBlock's block size): its multiples +- 1
  const void* lo = nullptr;        // every block lies in [lo, lo + span) (span 0: anywhere)
  std::size_t span = 0;
  bool contents = true;            // write and check patterns (false over memory the host may not touch)
  bool deallocate_may_refuse = false;  // deallocate of a live block may answer false (Region: only the last one)
  bool owns_live_yes = true;       // owns(live block) is yes (else: not no)
  bool empty_exact = true;         // empty() is never unknown
  bool padding_stays = false;      // with nothing live, empty() may be no: alignment padding stays taken (Region)
  // Misuse, where the block promises to refuse it (run with ALLOY_ASSERT off; in debug builds it aborts instead):
  bool refuses_double_free = false;  // a freed block, nothing live near it: deallocate is false, nothing changes
  bool refuses_foreign = false;      // a block outside the memory: deallocate is false
  bool refuses_wrong_size = false;   // a live block with another size or an interior pointer: false, no change
};

namespace detail {

inline std::uint8_t pattern(std::uint64_t id, std::size_t i) noexcept {
  const std::uint64_t x = (id + 1) * 0x9E3779B97F4A7C15ull ^ (static_cast<std::uint64_t>(i) * 0xBF58476D1CE4E5B9ull);
  return static_cast<std::uint8_t>((x ^ (x >> 29)) >> 24);
}
// The byte offsets of a block of n bytes that are checked (every byte is written), ascending: all of them up to
// 1024; else the first 512, every 509th and the last 256.
template <class F>
void visit(std::size_t n, F f) noexcept {
  if (n <= 1024) {
    for (std::size_t i = 0; i < n; ++i) f(i);
    return;
  }
  for (std::size_t i = 0; i < 512; ++i) f(i);
  for (std::size_t i = 512; i < n - 256; i += 509) f(i);
  for (std::size_t i = n - 256; i < n; ++i) f(i);
}

[[noreturn]] inline void fail(const char* what, const char* file, int line, std::size_t op) noexcept {
  std::fprintf(stderr, "%s:%d: alloy fuzz: check failed at operation %zu: %s\n", file, line, op, what);
  std::fflush(stderr);
  std::abort();
}

struct Slot {
  Block b{};
  std::uint64_t id = 0;
};

}  // namespace detail

#define ALLOY_FUZZ_CHECK(cond) ((cond) ? static_cast<void>(0) : ::alloy::fuzz::detail::fail(#cond, __FILE__, __LINE__, op))

template <class A, class Model = NoModel>
class Driver {
 public:
  static constexpr std::size_t slots = 32;
  static constexpr bool host = host_accessible<A>;

  Driver(A& a, Model& m, const Config& c) noexcept : a_(a), m_(m), c_(c) {}

  void run(Input& in) noexcept {
    while (!in.done() && op < 4096) {
      step(in);
      check_all();
      ++op;
    }
    // Give everything back: the allocator must take every live block (or deallocate_all), and end empty.
    for (auto& s : s_) {
      if (!s.b) continue;
      if constexpr (has_deallocate<A>) {
        const bool r = a_.deallocate(s.b);
        if constexpr (requires { m_.deallocate(s.b); }) ALLOY_FUZZ_CHECK(r == m_.deallocate(s.b));
        if (r) s = {};
      }
    }
    if constexpr (has_deallocate_all<A>) {
      ALLOY_FUZZ_CHECK(a_.deallocate_all());
      if constexpr (requires { m_.deallocate_all(); }) m_.deallocate_all();
      for (auto& s : s_) s = {};
    }
    if constexpr (has_empty<A>) {
      if (live_count() == 0) ALLOY_FUZZ_CHECK(a_.empty() != Ternary::no);
    }
  }

  std::size_t op = 0;

 private:
  A& a_;
  Model& m_;
  Config c_;
  detail::Slot s_[slots];
  Block freed_[8] = {};  // blocks freed lately (double-free candidates)
  std::size_t freed_next_ = 0;
  std::uint64_t next_id_ = 1;
  alignas(64) static inline std::byte foreign_[256];  // memory no allocator handed out

  // ---- draws
  std::size_t draw_size(Input& in) noexcept {
    const std::uint8_t c = in.u8();
    switch (c % 16) {
      case 0: return 0;
      case 1: return 1;
      case 2: return SIZE_MAX;
      case 3: return SIZE_MAX - in.u8();
      case 4: return c_.arena - 1;
      case 5: return c_.arena;
      case 6: return c_.arena + 1;
      case 7: return c_.granule * (1 + in.u8() % 8) + in.u8() % 3 - 1;
      case 8: return (SIZE_MAX >> 1) + in.u8() - 128;  // around PTRDIFF_MAX
      case 9: case 10: case 11: return 1 + in.u8();
      case 12: case 13: return 1 + in.u16() % (c_.arena + 1);
      case 14: return 1 + in.u8() % (c_.granule + 1);
      default: return in.u16();
    }
  }
  std::size_t draw_align(Input& in) noexcept {
    const std::uint8_t c = in.u8();
    switch (c % 20) {
      case 0: return 0;
      case 1: return 3;
      case 2: return 24;
      case 3: return 48;
      case 4: return SIZE_MAX;
      case 5: return std::size_t{1} << 63;
      case 6: return c_.granule * 2;
      default: return std::size_t{1} << (c % 20 - 7);  // 1 to 4096
    }
  }

  // ---- the live set
  std::size_t live_count() const noexcept {
    std::size_t k = 0;
    for (const auto& s : s_) k += s.b ? 1 : 0;
    return k;
  }
  bool overlaps_live(Block b, std::size_t self) const noexcept {
    for (std::size_t i = 0; i < slots; ++i)
      if (i != self && s_[i].b && address_of(s_[i].b.ptr) < b.end_address() && address_of(b.ptr) < s_[i].b.end_address())
        return true;
    return false;
  }
  bool inside(Block b) const noexcept { return c_.span == 0 || block_within(b, c_.lo, c_.span); }
  std::size_t free_slot(std::size_t from) const noexcept {
    for (std::size_t k = 0; k < slots; ++k)
      if (!s_[(from + k) % slots].b) return (from + k) % slots;
    return slots;
  }
  // The first address of the unit (granule, counted from lo) that holds address x.
  std::uintptr_t unit_start(std::uintptr_t x) const noexcept {
    const std::uintptr_t base = address_of(c_.lo);
    return x - (x - base) % c_.granule;
  }
  void remember_freed(Block b) noexcept {
    freed_[freed_next_++ % 8] = b;
  }

  // ---- contents
  void fill(const detail::Slot& s, std::size_t from) noexcept {
    if constexpr (host) {
      if (!c_.contents) return;
      auto* p = static_cast<std::uint8_t*>(s.b.ptr);
      for (std::size_t i = from; i < s.b.size; ++i) p[i] = detail::pattern(s.id, i);  // all of it: any may be read
    } else {
      (void)s, (void)from;
    }
  }
  // Whether b holds slot s's pattern in its first n bytes.
  bool holds(Block b, std::uint64_t id, std::size_t n) const noexcept {
    if constexpr (host) {
      if (!c_.contents) return true;
      const auto* p = static_cast<const std::uint8_t*>(b.ptr);
      bool ok = true;
      detail::visit(n, [&](std::size_t i) { ok = ok && p[i] == detail::pattern(id, i); });
      return ok;
    } else {
      (void)b, (void)id, (void)n;
      return true;
    }
  }
  // A block the allocator just handed out: exact size, aligned, inside, overlapping nothing live.
  void check_new(Block b, std::size_t n, std::size_t al, std::size_t self) noexcept {
    ALLOY_FUZZ_CHECK(b.size == n);
    ALLOY_FUZZ_CHECK(is_aligned(b.ptr, al));
    ALLOY_FUZZ_CHECK(inside(b));
    ALLOY_FUZZ_CHECK(!overlaps_live(b, self));
  }
  void take(std::size_t slot, Block b) noexcept {
    s_[slot] = {b, next_id_++};
    fill(s_[slot], 0);
  }

  // Whether b's first and last 16 bytes hold its pattern (where bookkeeping written into a wrong block lands).
  bool edges_hold(Block b, std::uint64_t id) const noexcept {
    if constexpr (host) {
      if (!c_.contents) return true;
      const auto* p = static_cast<const std::uint8_t*>(b.ptr);
      const std::size_t head = b.size < 16 ? b.size : 16;
      for (std::size_t i = 0; i < head; ++i)
        if (p[i] != detail::pattern(id, i)) return false;
      for (std::size_t i = b.size - head; i < b.size; ++i)
        if (p[i] != detail::pattern(id, i)) return false;
      return true;
    } else {
      (void)b, (void)id;
      return true;
    }
  }
  // After every step: every live block inside the memory with its edges intact (the whole block, sampled, is
  // checked by the operations that touch it: deallocate, expand, reallocate, owns).
  void check_all() noexcept {
    for (std::size_t i = 0; i < slots; ++i) {
      const Block b = s_[i].b;
      if (!b) continue;
      ALLOY_FUZZ_CHECK(inside(b));
      ALLOY_FUZZ_CHECK(edges_hold(b, s_[i].id));
    }
    if constexpr (has_empty<A>) {
      const Ternary e = a_.empty();
      ALLOY_FUZZ_CHECK(!c_.empty_exact || e != Ternary::unknown);
      const std::size_t live = live_count();
      ALLOY_FUZZ_CHECK(e == Ternary::unknown || e == to_ternary(live == 0) || (live == 0 && c_.padding_stays));
      if constexpr (requires { m_.empty(); }) ALLOY_FUZZ_CHECK(e == m_.empty());
    }
  }

  // ---- operations
  void step(Input& in) noexcept {
    const std::uint8_t what = in.u8();
    const std::size_t slot = in.u8() % slots;
    switch (what % 17) {
      case 0: case 1: case 2: return do_allocate(in, slot);
      case 3: return do_aligned_allocate(in, slot);
      case 4: return do_allocate_all(slot);
      case 5: case 6: return do_deallocate(slot);
      case 7: return do_deallocate_all(in);
      case 8: return do_expand(in, slot);
      case 9: return do_reallocate(in, slot, false);
      case 10: return do_reallocate(in, slot, true);
      case 11: return do_owns(in, slot);
      case 12: return do_resolve(in, slot);
      case 13: return do_good_alloc_size(in);
      case 14: return do_allocate_fresh(in, slot);
      case 15: return do_misuse(in, slot);
      default: return do_deallocate(slot);
    }
  }

  void do_allocate(Input& in, std::size_t from) noexcept {
    const std::size_t n = draw_size(in), slot = free_slot(from);
    if (slot == slots) return;
    const Block b = a_.allocate(n);
    if constexpr (requires { m_.allocate(n); }) ALLOY_FUZZ_CHECK(b == m_.allocate(n));
    if (n == 0) ALLOY_FUZZ_CHECK(!b);
    if (!b) return;
    check_new(b, n, A::alignment, slot);
    take(slot, b);
  }
  void do_aligned_allocate(Input& in, std::size_t from) noexcept {
    if constexpr (has_aligned_allocate<A>) {
      const std::size_t n = draw_size(in), al = draw_align(in), slot = free_slot(from);
      if (slot == slots) return;
      const Block b = a_.aligned_allocate(n, al);
      if constexpr (requires { m_.aligned_allocate(n, al); }) ALLOY_FUZZ_CHECK(b == m_.aligned_allocate(n, al));
      if (n == 0 || !is_power_of_two(al)) ALLOY_FUZZ_CHECK(!b);
      if (!b) return;
      check_new(b, n, al, slot);
      take(slot, b);
    } else {
      do_allocate(in, from);
    }
  }
  void do_allocate_fresh(Input& in, std::size_t from) noexcept {
    if constexpr (has_allocate_fresh<A>) {
      const std::size_t n = draw_size(in), slot = free_slot(from);
      if (slot == slots) return;
      const Block b = a_.allocate_fresh(n);
      if constexpr (requires { m_.allocate_fresh(n); }) ALLOY_FUZZ_CHECK(b == m_.allocate_fresh(n));
      if (n == 0) ALLOY_FUZZ_CHECK(!b);
      if (!b) return;
      check_new(b, n, A::alignment, slot);
      take(slot, b);
    } else {
      do_allocate(in, from);
    }
  }
  void do_allocate_all(std::size_t from) noexcept {
    if constexpr (has_allocate_all<A>) {
      const std::size_t slot = free_slot(from);
      if (slot == slots) return;
      // A model without allocate_all would lose step with a success.
      if constexpr (!std::is_same_v<Model, NoModel> && !requires { m_.allocate_all(); }) return;
      const Block b = a_.allocate_all();
      if constexpr (requires { m_.allocate_all(); }) ALLOY_FUZZ_CHECK(b == m_.allocate_all());
      if (!b) return;
      check_new(b, b.size, A::alignment, slot);
      take(slot, b);
    }
  }
  void do_deallocate(std::size_t slot) noexcept {
    if constexpr (has_deallocate<A>) {
      const Block b = s_[slot].b;
      if (b) ALLOY_FUZZ_CHECK(holds(b, s_[slot].id, b.size));
      const bool r = a_.deallocate(b);
      if constexpr (requires { m_.deallocate(b); }) {
        ALLOY_FUZZ_CHECK(r == m_.deallocate(b));
      } else {
        ALLOY_FUZZ_CHECK(r || (b && c_.deallocate_may_refuse));
      }
      if (!b) ALLOY_FUZZ_CHECK(r);
      if (r && b) {
        remember_freed(b);
        s_[slot] = {};
      }
    } else {
      (void)slot;
    }
  }
  void do_deallocate_all(Input& in) noexcept {
    if constexpr (has_deallocate_all<A>) {
      if (in.u8() % 4 != 0) return;  // rarely: it empties everything
      const bool r = a_.deallocate_all();
      if constexpr (requires { m_.deallocate_all(); }) ALLOY_FUZZ_CHECK(r == m_.deallocate_all());
      ALLOY_FUZZ_CHECK(r);
      for (auto& s : s_) {
        if (s.b) remember_freed(s.b);
        s = {};
      }
      if constexpr (has_empty<A>) ALLOY_FUZZ_CHECK(a_.empty() == Ternary::yes);
    } else {
      (void)in;
    }
  }
  void do_expand(Input& in, std::size_t slot) noexcept {
    if constexpr (has_expand<A>) {
      const std::size_t d = in.u8() & 1 ? in.u8() : draw_size(in);
      Block b = s_[slot].b, bm = b;
      if (b) ALLOY_FUZZ_CHECK(holds(b, s_[slot].id, b.size));
      const bool r = a_.expand(b, d);
      if constexpr (requires { m_.expand(bm, d); }) {
        ALLOY_FUZZ_CHECK(r == m_.expand(bm, d));
        ALLOY_FUZZ_CHECK(b == bm);
      }
      if (d == 0) ALLOY_FUZZ_CHECK(r && b == s_[slot].b);
      if (!s_[slot].b) {
        ALLOY_FUZZ_CHECK(!b);
        if (d != 0) ALLOY_FUZZ_CHECK(!r);
        return;
      }
      if (!r) {
        ALLOY_FUZZ_CHECK(b == s_[slot].b);
        return;
      }
      const std::size_t old = s_[slot].b.size;
      ALLOY_FUZZ_CHECK(b.ptr == s_[slot].b.ptr && old <= SIZE_MAX - d && b.size == old + d);
      ALLOY_FUZZ_CHECK(inside(b));
      ALLOY_FUZZ_CHECK(!overlaps_live(b, slot));
      s_[slot].b = b;
      fill(s_[slot], old);
    } else {
      (void)in, (void)slot;
    }
  }
  void do_reallocate(Input& in, std::size_t slot, bool aligned) noexcept {
    if constexpr (has_reallocate<A> || has_aligned_reallocate<A>) {
      const std::size_t n = in.u8() & 1 ? s_[slot].b.size + in.u8() % 3 - 1 : draw_size(in);
      std::size_t al = A::alignment;
      Block b = s_[slot].b, bm = b;
      if (b) ALLOY_FUZZ_CHECK(holds(b, s_[slot].id, b.size));
      bool r = false;
      if (aligned || !has_reallocate<A>) {
        if constexpr (has_aligned_reallocate<A>) {
          al = draw_align(in);
          r = a_.aligned_reallocate(b, n, al);
          if constexpr (requires { m_.aligned_reallocate(bm, n, al); }) {
            ALLOY_FUZZ_CHECK(r == m_.aligned_reallocate(bm, n, al));
            ALLOY_FUZZ_CHECK(b == bm);
          }
          if (!is_power_of_two(al)) ALLOY_FUZZ_CHECK(!r);
        } else {
          return;
        }
      } else {
        if constexpr (has_reallocate<A>) {
          r = a_.reallocate(b, n);
          if constexpr (requires { m_.reallocate(bm, n); }) {
            ALLOY_FUZZ_CHECK(r == m_.reallocate(bm, n));
            ALLOY_FUZZ_CHECK(b == bm);
          }
        }
      }
      const Block old = s_[slot].b;
      if (!r) {
        ALLOY_FUZZ_CHECK(b == old);
        return;
      }
      if (old && n == old.size && is_aligned(old.ptr, al)) ALLOY_FUZZ_CHECK(b == old);  // a no-op
      if (n == 0) {
        ALLOY_FUZZ_CHECK(!b);
        if (old) remember_freed(old);
        s_[slot] = {};
        return;
      }
      ALLOY_FUZZ_CHECK(b);
      check_new(b, n, al, slot);
      if (!old) {
        take(slot, b);
        return;
      }
      ALLOY_FUZZ_CHECK(holds(b, s_[slot].id, old.size < n ? old.size : n));
      if (b.ptr != old.ptr) remember_freed(old);
      s_[slot].b = b;
      if (n > old.size) fill(s_[slot], old.size);
    } else {
      (void)in, (void)slot, (void)aligned;
    }
  }
  void do_owns(Input& in, std::size_t slot) noexcept {
    if constexpr (has_owns<A>) {
      ALLOY_FUZZ_CHECK(a_.owns(Block{}) == Ternary::no);
      ALLOY_FUZZ_CHECK(a_.owns(Block{foreign_ + in.u8() % 128, std::size_t{1} + in.u8() % 128}) == Ternary::no);
      if (const Block b = s_[slot].b) {
        ALLOY_FUZZ_CHECK(holds(b, s_[slot].id, b.size));
        const Ternary t = a_.owns(b);
        ALLOY_FUZZ_CHECK(c_.owns_live_yes ? t == Ternary::yes : t != Ternary::no);
        if constexpr (requires { m_.owns(b); }) ALLOY_FUZZ_CHECK(t == m_.owns(b));
      }
      if constexpr (requires { m_.owns(Block{}); }) {
        if (c_.span) {  // anywhere in the memory and a little past it, live or not
          const std::size_t off = in.u32() % (c_.span + 64);
          const Block q{to_pointer(address_of(c_.lo) + off), draw_size(in)};
          if (q.size) ALLOY_FUZZ_CHECK(a_.owns(q) == m_.owns(q));
        }
      }
    } else {
      (void)in, (void)slot;
    }
  }
  void do_resolve(Input& in, std::size_t slot) noexcept {
    if constexpr (has_resolve_internal_pointer<A>) {
      Block r{};
      ALLOY_FUZZ_CHECK(a_.resolve_internal_pointer(foreign_ + in.u8() % 128, r) == Ternary::no);
      if (const Block b = s_[slot].b) {
        const auto* p = static_cast<const std::byte*>(b.ptr) + in.u32() % b.size;
        r = {};
        ALLOY_FUZZ_CHECK(a_.resolve_internal_pointer(p, r) == Ternary::yes);
        ALLOY_FUZZ_CHECK(address_of(r.ptr) <= address_of(b.ptr) && r.end_address() >= b.end_address());
        ALLOY_FUZZ_CHECK(!overlaps_live(r, slot));
        if constexpr (requires { m_.resolve_internal_pointer(p, r); }) {
          Block rm{};
          ALLOY_FUZZ_CHECK(m_.resolve_internal_pointer(p, rm) == Ternary::yes && rm == r);
        }
      }
      if (c_.span) {  // any address of the memory, live or free
        const auto* p = static_cast<const std::byte*>(c_.lo) + in.u32() % (c_.span + 16);
        r = {};
        const Ternary t = a_.resolve_internal_pointer(p, r);
        if constexpr (requires { m_.resolve_internal_pointer(p, r); }) {
          Block rm{};
          ALLOY_FUZZ_CHECK(t == m_.resolve_internal_pointer(p, rm));
          if (t == Ternary::yes) ALLOY_FUZZ_CHECK(r == rm);
        }
        bool in_live = false;
        for (const auto& s : s_)
          in_live = in_live || (s.b && address_of(p) >= address_of(s.b.ptr) && address_of(p) < s.b.end_address());
        if (in_live) ALLOY_FUZZ_CHECK(t == Ternary::yes);
        if (t == Ternary::yes) {
          ALLOY_FUZZ_CHECK(address_of(r.ptr) <= address_of(p) && address_of(p) < r.end_address());
          bool holds_live = false;
          for (const auto& s : s_)
            holds_live = holds_live || (s.b && address_of(s.b.ptr) >= address_of(r.ptr) &&
                                        s.b.end_address() <= r.end_address());
          ALLOY_FUZZ_CHECK(holds_live);
        }
      }
    } else {
      (void)in, (void)slot;
    }
  }
  void do_good_alloc_size(Input& in) noexcept {
    if constexpr (has_good_alloc_size<A>) {
      const std::size_t n = draw_size(in);
      const std::size_t g = a_.good_alloc_size(n);
      std::size_t r = 0;
      if (round_up_checked(n, A::alignment, r) && n <= static_cast<std::size_t>(PTRDIFF_MAX))
        ALLOY_FUZZ_CHECK(g >= r);
      else
        ALLOY_FUZZ_CHECK(g == 0 || g >= n);
    } else {
      (void)in;
    }
  }
  void do_misuse(Input& in, std::size_t slot) noexcept {
    if constexpr (has_deallocate<A>) {
      const std::uint8_t kind = in.u8() % 3;
      if (kind == 0 && c_.refuses_double_free) {
        const Block f = freed_[in.u8() % 8];
        if (!f) return;
        // Only a true double free: nothing live in the units the block covered (another block there may be the
        // same memory handed out again, which the allocator cannot tell apart).
        const std::uintptr_t lo = unit_start(address_of(f.ptr)), hi = unit_start(f.end_address() - 1) + c_.granule;
        for (const auto& s : s_)
          if (s.b && address_of(s.b.ptr) < hi && lo < s.b.end_address()) return;
        ALLOY_FUZZ_CHECK(!a_.deallocate(f));
      } else if (kind == 1 && c_.refuses_foreign) {
        ALLOY_FUZZ_CHECK(!a_.deallocate(Block{foreign_ + 16 * (in.u8() % 8), std::size_t{1} + in.u8() % 128}));
      } else if (kind == 2 && c_.refuses_wrong_size) {
        const Block b = s_[slot].b;
        if (!b) return;
        const std::uint8_t how = in.u8();
        Block w = b;
        switch (how % 4) {
          case 0: w.size = b.size - 1 - (how >> 2) % b.size; break;  // smaller (0 included)
          case 1: w.size = b.size + c_.granule * (1 + (how >> 2) % 4); break;  // larger by whole units
          case 2: {  // an interior pointer
            if (b.size < 2) return;
            const std::size_t d = 1 + (how >> 2) % (b.size - 1);
            w = Block{static_cast<std::byte*>(b.ptr) + d, b.size - d};
            break;
          }
          default: w.size = SIZE_MAX - (how >> 2); break;
        }
        if (w.size != 0 && unit_start(address_of(w.ptr)) == unit_start(address_of(b.ptr)) &&
            unit_start(w.end_address() - 1) == unit_start(b.end_address() - 1))
          return;  // the same units: not a wrong size to this allocator
        ALLOY_FUZZ_CHECK(!a_.deallocate(w));
      }
    } else {
      (void)in, (void)slot;
    }
  }
};

/// Runs the input against `a` (and `model` in lockstep, when given).
template <class A, class Model>
void run(A& a, Model& model, const Config& c, Input& in) noexcept {
  Driver<A, Model> d(a, model, c);
  d.run(in);
}
template <class A>
void run(A& a, const Config& c, Input& in) noexcept {
  NoModel m;
  run(a, m, c, in);
}

}  // namespace alloy::fuzz

/// The fuzzer's entry point: ALLOY_FUZZ(in) { ...; alloy::fuzz::run(a, config, in); }. Requests above what
/// AddressSanitizer's malloc serves (1 TiB) come back null instead of stopping the run: the parents must fail them.
#define ALLOY_FUZZ(in)                                                                   \
  extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; } \
  static void alloy_fuzz_one(::alloy::fuzz::Input& in) noexcept;                          \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {    \
    ::alloy::fuzz::Input input(data, size);                                               \
    alloy_fuzz_one(input);                                                                \
    return 0;                                                                             \
  }                                                                                       \
  static void alloy_fuzz_one(::alloy::fuzz::Input& in) noexcept
