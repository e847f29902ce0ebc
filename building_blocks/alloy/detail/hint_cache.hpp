#pragma once
/// \file alloy/detail/hint_cache.hpp
/// The single-threaded BitmappedBlock's hint-word cache: the search hint (every bitmap word before it is full) and,
/// kept in the object as in the one-word floor, that word's bits and the addresses the single-block fast paths need,
/// so that they read and write one member with no pointer to load and no index arithmetic (W1). Internal: no API
/// promise. Tested alone by tests/hint_cache.cpp, against a model bitmap. SharedBitmappedBlock has none
/// (NoHintCache): its single-block paths claim by CAS from a per-thread word (atomic_bitmap.hpp).
///
/// The rule: between the calls of its owner, bits_ is the true hint word and bitmap word start_ may be stale. The fast
/// paths read and write bits_ only. Every other path works on the bitmap inside a HintSync (its owner's RAII pair of
/// calls): flush() writes the true word back into the bitmap first, load() reloads bits_ from it at the end, so that
/// everything else sees one plain bitmap. Queries outside a HintSync read word_now(). HintSyncs do not nest, and no
/// fast path runs inside one.
///
/// Invariants, between the calls of its owner (tests/support/bitmapped_block_invariants.hpp checks them after every
/// operation of the randomized BitmappedBlock tests, tests/hint_cache.cpp after every step of its own):
///   * `end` is the first block the fast paths may not touch: the fresh cursor (multiblock: blocks at or past it were
///     never allocated; the slower path that takes one moves the cursor) or the block count (Multiblock::no). The
///     owner keeps start_ at a word whose predecessors are all full and calls sync() whenever start_, the bitmap, the
///     payload or `end` changes;
///   * word_ is bits + start_ and base_ the payload of the hint word's first block (payload + 64 start_ block_size);
///     without blocks word_ is &bits_ and bits_ all ones, so that flush() writes nowhere else and the fast allocate
///     finds nothing;
///   * FreshMasked (multiblock): bit j of fresh_mask_ is set iff block 64 start_ + j lies below `end`, and bits_ has
///     every bit outside the mask set (the fast allocate needs no mask); the true bits there, 0 for never-used blocks
///     and 1 for the padding past the last block, are the bitmap word's, which only a HintSync writes (logical());
///   * span_ is the size in bytes of the hint word's blocks below `end`, those whose bits in bits_ are true: the
///     fast free frees a block at an offset from base_ below span_ with no other check.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <alloy/detail/bitmap.hpp>

namespace alloy::detail {

struct NoMask {};  // the absent fresh mask (Multiblock::no)

template <bool FreshMasked>
class HintCache {
 public:
  constexpr HintCache() noexcept = default;
  HintCache(const HintCache&) = delete;
  HintCache& operator=(const HintCache&) = delete;

  // The state, read and written directly by the owner's inlined fast paths (see the file comment). constexpr: a
  // namespace-scope block is constant-initialized (usable from other translation units' static initializers).
  std::size_t start_ = 0;                  // the hint word
  std::uint64_t* word_ = &bits_;           // bits + start_, or &bits_ without blocks
  std::byte* base_ = nullptr;              // the payload of the hint word's first block
  std::uint64_t bits_ = bitmap::all_ones;  // the true hint word between calls (FreshMasked: blocks at or past end set)
  [[no_unique_address]] std::conditional_t<FreshMasked, std::uint64_t, NoMask> fresh_mask_{};
  std::size_t span_ = 0;  // bytes from base_ that the fast free may free

  /// The hint word as it is, outside a HintSync.
  [[nodiscard]] std::uint64_t logical() const noexcept {
    if constexpr (FreshMasked) return (bits_ & fresh_mask_) | (*word_ & ~fresh_mask_);
    else return bits_;
  }
  /// Word i of `bits` as it is now, outside a HintSync (the hint word from bits_). `bits` by reference to the owner's
  /// member, so that a loop of calls reads it where it is used: taken by value, it was loaded ahead of the owner's
  /// loop into a saved register of its own (W3 +0.15 instructions per step).
  [[nodiscard]] std::uint64_t word_now(std::uint64_t* const& bits, std::size_t i) const noexcept {
    if (i == start_) return logical();
    return bits[i];
  }
  /// The hint word in the bitmap brought up to date from bits_ (a HintSync starts; the owner pins bits_ first).
  void flush() noexcept { *word_ = logical(); }
  /// bits_ reloaded from the bitmap (a HintSync ends; the owner pins bits_ after).
  void load() noexcept {
    bits_ = *word_;
    if constexpr (FreshMasked) bits_ |= ~fresh_mask_;  // blocks at or past end show as taken
  }

  /// The addresses, the span and the mask brought up to date with start_, the bitmap (`words` words at bits), the
  /// payload and `end`.
  void sync(std::uint64_t* bits, std::size_t words, std::byte* payload, std::size_t block_size,
            std::size_t end) noexcept {
    word_ = words ? bits + start_ : &bits_;
    base_ = payload + start_ * 64 * block_size;
    span_ = blocks_below(end) * block_size;
    if constexpr (FreshMasked) fresh_mask_ = bitmap::mask(0, static_cast<unsigned>(blocks_below(end)));
  }
  /// `end` rose (the fresh cursor) from where it left the mask `old` (fresh_mask_ before the owner's sync): the hint
  /// word's blocks it brought below end, never used, become free in bits_ too. (Inside a HintSync the reload
  /// overwrites this; outside one it keeps the rule without the owner's help.)
  void end_raised(std::uint64_t old) noexcept requires FreshMasked { bits_ &= ~(fresh_mask_ & ~old); }
  /// No blocks (the owner syncs next).
  void reset() noexcept {
    start_ = 0;
    bits_ = bitmap::all_ones;
  }
  /// Takes o's hint; o has none (both owners sync next).
  void take(HintCache& o) noexcept {
    start_ = std::exchange(o.start_, 0);
    bits_ = std::exchange(o.bits_, bitmap::all_ones);
  }

  /// How many of the hint word's blocks lie below block `end` (0 to 64).
  [[nodiscard]] std::size_t blocks_below(std::size_t end) const noexcept {
    const std::size_t first = start_ * 64;
    return end <= first ? 0 : std::min<std::size_t>(end - first, 64);
  }
};

/// No instruction: tells the compiler that the cached word `b` (an owner's hint_.bits_) may change here. The fast
/// paths and the slower paths both read and write it; GCC hoisted the reads above deallocate's fast-path test and
/// merged the writes below it, which split the fast free's `and` into a load and a store (one more instruction per
/// W1 pair). Its owner calls it before flush() and after load(), on its own member: inside a HintCache function,
/// GCC kept the cache's address in a saved register of its own for the asm operand (W3 +0.3 instructions per step).
[[gnu::always_inline]] inline void pin_hint_word(std::uint64_t& b) noexcept {
#if defined(__GNUC__)
  __asm__("" : "+m"(b));
#else
  (void)b;
#endif
}

/// SharedBitmappedBlock's: no hint, nothing to bring up to date.
struct NoHintCache {};

}  // namespace alloy::detail
