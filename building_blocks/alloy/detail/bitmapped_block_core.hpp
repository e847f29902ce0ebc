#pragma once
/// \file alloy/detail/bitmapped_block_core.hpp
/// The single-threaded engine of BitmappedBlock (and, over two bitmaps and wrapped with start bits, of
/// BitmappedBlockWithInternalPointers: detail/bitmapped_block_internal_pointers.hpp): every allocation primitive over
/// a plain bitmap and its indexes, the search hint with its word's bits kept in the object (detail/hint_cache.hpp)
/// and, multiblock, the fresh cursor and the summary index (detail/bitmap_summary.hpp) that the exact first fit reads
/// (detail/bitmap_search.hpp). This header has the class, its state and its primitives with the single-block fast
/// paths; detail/bitmapped_block_core_paths.hpp (included at the end) defines its index-level paths: the upkeep of the
/// indexes and the taking and freeing of blocks [i, i + k). Its base, detail/bitmapped_block_base.hpp, has what every
/// mode shares; detail/bitmapped_block_impl.hpp builds the block over it. Internal: use <alloy/bitmapped_block.hpp>.
///
/// Invariants, between the calls of its owner (tests/support/bitmapped_block_invariants.hpp checks each after every
/// operation of the randomized tests):
///   * the bitmap (BitmapLayout's bits_): bit j of word i is block 64 i + j, set iff allocated; the padding bits past
///     the last block are set;
///   * the search hint hint_.start_: every word before it is full; the cache's rule and invariants (hint_cache.hpp):
///     between calls hint_.bits_ is the true hint word and every other word of the bitmap is current;
///   * multiblock: no block at or past the fresh cursor fresh_ has been allocated (deallocate_all keeps the cursor,
///     as D), and the cache's `end` is the cursor (Multiblock::no: the block count);
///   * summarized (multiblock with a Bookkeeping allocator): every summary byte bounds the longest free run that
///     starts in its word, the hint word's through its snapshot (bitmap_summary.hpp).
/// Every path but the fast paths of allocate and deallocate runs inside a HintSync (on the plain bitmap), except
/// where it provably does not touch the hint word (said where it does). The fast paths read and write hint_.bits_
/// only, but for two frees that leave the indexes true: one block in a word other than the hint word (its bit in the
/// bitmap, its two summary bytes, and the hint moved back under a HintSync), and a run inside one word at least two
/// words past the hint (its bits and that word's bytes; the hint stays). A refused call changes nothing.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include <alloy/common.hpp>
#include <alloy/detail/bitmap.hpp>
#include <alloy/detail/bitmap_search.hpp>
#include <alloy/detail/bitmap_summary.hpp>
#include <alloy/detail/bitmapped_block_base.hpp>
#include <alloy/detail/hint_cache.hpp>

namespace alloy::detail {

template <std::size_t BlockSize, std::size_t Alignment, class Parent, Multiblock M, class Bookkeeping,
          std::size_t Maps = 1>
class BitmappedBlockCore : public BitmappedBlockBase<BlockSize, Alignment, Parent, M, Bookkeeping, Maps> {
  friend struct BitmappedBlockInspector;
  using Base = BitmappedBlockBase<BlockSize, Alignment, Parent, M, Bookkeeping, Maps>;

 protected:
  using Base::Base;
  using typename Base::Layout;
  using Base::all_ones;
  using Base::aligned_run_blocks;
  using Base::aligned_spot;
  using Base::bits_;
  using Base::blocks_;
  using Base::blocks_for;
  using Base::bs;
  using Base::check_deallocatable;
  using Base::check_owned;
  using Base::expand_bounds;
  using Base::maps;
  using Base::multi;
  using Base::npos;
  using Base::offset_from;
  using Base::offset_of;
  using Base::pad_mask;
  using Base::payload_;
  using Base::payload_bytes;
  using Base::shrink_range;
  using Base::single_block;
  using Base::words_;
  // The summary index (multiblock; detail/bitmap_summary.hpp states its rules): one byte per word, an upper bound of
  // the longest free run that starts there, so that searches skip the words that cannot hold a run of k. The hint
  // word is its exception: the fast single-block free does not raise its byte, and the summary's snapshot of the
  // word restores the bound (refresh) before a search reads the byte or the hint moves back. Bookkeeping =
  // NullAllocator: no memory outside the block's own, hence no summary (D's word-by-word search from the hint).
  static constexpr bool summarized = multi && !std::is_same_v<Bookkeeping, NullAllocator>;
  // Multiblock: the hint cache's mask of the hint word's blocks below the fresh cursor; its word shows the others as
  // taken (HintCache::logical).
  static constexpr bool fresh_masked = multi;

 public:
  [[nodiscard]] Ternary empty() const noexcept {
    if (words_ == 0) return Ternary::yes;
    for (std::size_t i = 0; i + 1 < words_; ++i)
      if (word_now(i) != 0) return Ternary::no;
    return to_ternary(word_now(words_ - 1) == pad_mask());
  }

  Block allocate(std::size_t n) noexcept {
    // The single-block fast path: one word, the one at the search hint (every word before it is full).
    if (n - 1 < bs()) [[likely]] {
      // hint_.bits_ is the hint word (all ones when there is no block) and hint_.base_ the payload of its first block
      // (see sync_hint): no pointer and no index arithmetic. Multiblock: hint_.bits_ shows the blocks at or past the
      // fresh cursor as taken (HintCache::logical), so that this path never moves the cursor; the first free block at
      // or past it is taken by alloc1, which does. First fit still holds: when the lowest free block is at or past
      // the cursor, nothing is left here and alloc1 finds it.
      std::byte* const base = hint_.base_;
      const std::uint64_t w = hint_.bits_;
      const std::uint64_t free = ~w;
      if (free) [[likely]] {
        const std::size_t j = count_trailing_zeros(free);
        hint_.bits_ = w | (std::uint64_t{1} << j);
        std::byte* const p = base + j * bs();
        // A free bit means there are blocks, so the payload is not null: telling the compiler lets a caller's
        // `if (!b)` after an inlined allocate fold away.
        if (p == nullptr) __builtin_unreachable();
        return {p, n};
      }
      const std::size_t idx = alloc1_synced();
      if (idx == npos) return {};
      return {payload_ + idx * bs(), n};
    }
    if constexpr (!multi) {
      return {};  // n == 0 or n > block size
    } else {
      const std::size_t k = blocks_for(n);
      if (k - 1 >= blocks_) return {};  // n == 0, or more blocks than exist
      // k >= 2: a single block took the fast path.
      std::size_t i;
      if (summarized && k <= 64) {
        i = alloc_small(static_cast<unsigned>(k));  // syncs the hint word itself, when it probes it
      } else {
        i = alloc_blocks_guarded(k);
      }
      if (i == npos) return {};
      return {payload_ + i * bs(), n};
    }
  }

  /// Like allocate, but only from blocks never allocated before (a cursor that only grows; deallocate_all does not
  /// reset it, as in D).
  Block allocate_fresh(std::size_t n) noexcept requires multi {
    const std::size_t k = blocks_for(n);
    if (k - 1 >= blocks_) return {};
    HintSync sync(this);
    const std::size_t f = fresh_;
    if (k > blocks_ - f) return {};
    bitmap::set_range(bits_, f, k);  // free: blocks at or past the cursor never were allocated
    set_fresh(f + k);
    after_claim(f, k);
    return {payload_ + f * bs(), n};
  }

  /// n bytes at an address aligned to a (a power of two). Above `alignment` (multiblock): allocates
  /// n + a - alignment bytes, then gives back the whole blocks before and after the aligned part (D's method).
  Block aligned_allocate(std::size_t n, std::size_t a) noexcept {
    if (!is_power_of_two(a)) return {};
    if (a <= Alignment) return allocate(n);
    if (n == 0) return {};
    if constexpr (!multi) {
      if (n > bs()) return {};
      return alloc1_aligned(n, a);
    } else {
      const std::size_t k = aligned_run_blocks(n, a);
      if (k == 0) return {};
      HintSync sync(this);
      const std::size_t i = k == 1 ? alloc1() : alloc_blocks(k);
      if (i == npos) return {};
      std::byte* const start = payload_ + i * bs();
      std::byte* const res = static_cast<std::byte*>(align_up(static_cast<void*>(start), a));
      const std::size_t lead = static_cast<std::size_t>(res - start) / bs();
      const std::size_t used_end = divide_round_up(static_cast<std::size_t>(res - payload_) + n, bs());
      if (lead) release_range(i, lead);
      if (i + k > used_end) release_range(used_end, i + k - used_end);
      return {res, n};
    }
  }

  /// When nothing is allocated: every block in one Block of block_count() * block_size() bytes.
  Block allocate_all() noexcept requires multi {
    HintSync sync(this);
    if (blocks_ == 0 || empty() != Ternary::yes) return {};
    bitmap::set_range(bits_, 0, blocks_);
    raise_fresh(blocks_);
    set_start(words_ - 1);
    return {payload_, payload_bytes()};
  }

  /// Grows b in place into the blocks that follow it, when they are free.
  bool expand(Block& b, std::size_t delta) noexcept {
    if (delta == 0) return true;
    std::size_t old_blk = 0, new_blk = 0;
    if (!expand_bounds(b, delta, old_blk, new_blk)) return false;
    if constexpr (multi) {
      if (new_blk > old_blk) {
        HintSync sync(this);
        if (!bitmap::range_free<false>(bits_, old_blk, new_blk - old_blk)) return false;
        bitmap::set_range(bits_, old_blk, new_blk - old_blk);
        raise_fresh(new_blk);
        after_claim(old_blk, new_blk - old_blk);
      }
    }
    b.size += delta;
    return true;
  }

  bool deallocate(Block b) noexcept {
    if (!b) return true;
    // The single-block fast paths (one test of the size first: W3 frees blocks of 1 to 8 blocks at random; a Block of
    // size 0 is not a single block). A foreign block or a double free is refused (false, nothing changed), after
    // ALLOY_ASSERT in debug builds.
    if (single_block(b)) {
      // Debug builds: the full checks first, so that a misuse is named exactly.
      if constexpr (ALLOY_ENABLE_ASSERTS) {
        if (!check_deallocatable(b)) return false;
      }
      // A block of the hint word (W1's whole loop): its offset from hint_.base_, no index arithmetic, and no hint or
      // summary work (a stale summary byte is found later through the summary's snapshot, refresh_hint_byte). The
      // bound hint_.span_ covers only blocks of the payload whose bits in hint_.bits_ are true, so the release checks
      // cost nothing here: a pointer past it takes the range test below, and a double free clears a bit that is
      // already clear (nothing changes; the answer is false). No branch on the bit: W1 ignores the answer.
      const std::size_t d = offset_from(hint_.base_, b.ptr);
      if (d < hint_.span_) [[likely]] {
        const std::size_t j = d / bs();
        const bool live = (hint_.bits_ >> j) & 1u;
        ALLOY_ASSERT(live, "BitmappedBlock::deallocate: double free (the block is not allocated)");
        hint_.bits_ &= std::rotl(~std::uint64_t{1}, static_cast<int>(j));  // one rotate, no shift + not
        return live;
      }
      const std::size_t off = offset_of(b.ptr);
      if constexpr (!ALLOY_ENABLE_ASSERTS) {
        // Release ownership: the address in the payload is enough for a single block (it lies in the block of that
        // address, single_block; an address that is not a block boundary, when BlockSize == Alignment, frees its
        // block as D does, after ALLOY_ASSERT in debug builds).
        if (off >= payload_bytes()) [[unlikely]] return false;
      }
      // Not a block below hint_.span_: in another word, so bits_[wi] is current (hint_.bits_ only goes back to bits_
      // when the hint moves back to wi; W2's shuffled drain frees here, mostly after the hint), or a block of the
      // hint word at or past the fresh cursor (multiblock), never allocated: its bit in the bitmap word is clear (the
      // fast allocate never takes one), so it is refused as a double free. No branch on the bit, as above: clearing
      // a clear bit changes nothing, no word before the hint has one (they are full), and raising a summary byte
      // only loosens a bound.
      const std::size_t i = off / bs(), wi = i / 64;
      std::uint64_t* const bits = bits_;
      const bool live = (bits[wi] >> (i % 64)) & 1u;
      ALLOY_ASSERT(live, "BitmappedBlock::deallocate: double free (the block is not allocated)");
      bits[wi] &= std::rotl(~std::uint64_t{1}, static_cast<int>(i % 64));
      if (wi < hint_.start_) {
        HintSync sync(this);
        lower_start(wi);
      }
      // Its byte and the previous word's to 64 (a bound; wi - 1 may be the hint word). The exact raise
      // (raise_one_word, as multi-block frees do) cost W2's shuffled drain about 1.5 ns per free and bought W3 under
      // 2% (docs/design_notes.md).
      if constexpr (summarized) summary_.raise_pair(wi);
      return live;
    }
    // Not a single block: a size of 0 (refused here), more than one block (multiblock), or more than a block
    // (Multiblock::no: refused here).
    if constexpr (!multi) {
      ALLOY_ASSERT(b.size <= bs(), "BitmappedBlock::deallocate: a Block larger than one block was never handed out "
                                   "(Multiblock::no); give back the Block that allocate returned");
      (void)check_deallocatable(b);  // names a size of 0 in debug builds
      return false;
    } else {
      if (!check_deallocatable(b)) return false;  // size 0, or foreign
      const std::size_t off = offset_of(b.ptr);
      const std::size_t i = off / bs();
      const std::size_t k = divide_round_up(off + b.size, bs()) - i;  // b.size > 0: refused above
      // Every block of it allocated (else a double free, or a size larger than allocated into free blocks: refused,
      // nothing changed). The in-word path past the hint tests its one word itself; the others call check_live.
      if constexpr (summarized) {
        // Most multi-block frees stay inside one word: cleared and summarized here, with no further call (W3).
        // release_in_word reads and writes words wf - 1 to wf + 1 only, and moves the hint only back to wf: past the
        // hint's next word none of them is the hint word, so hint_.bits_ needs no round trip through bits_.
        if (const unsigned p = static_cast<unsigned>(i % 64); k <= 64 - p) [[likely]] {
          const std::size_t wf = i / 64;
          if (wf > hint_.start_ + 1) [[likely]] {
            const std::uint64_t m = bitmap::low_mask(static_cast<unsigned>(k)) << p;
            const bool live = (bits_[wf] & m) == m;
            ALLOY_ASSERT(live, "BitmappedBlock::deallocate: double free (a block is not allocated)");
            if (!live) [[unlikely]] return false;
            clear_in_word(wf, p, static_cast<unsigned>(k));  // past the hint: it does not move
            raise_one_word(wf, p);
            return true;
          }
        }
      }
      return release_checked(i, k);
    }
  }

  /// Frees every block.
  bool deallocate_all() noexcept {
    HintSync sync(this);
    for (std::size_t i = 0; i < words_; ++i) bits_[i] = 0;
    if (words_) bits_[words_ - 1] = pad_mask();
    set_start(0);
    reset_snap();
    if constexpr (summarized) summary_.reset(words_);
    return true;
  }

 protected:
  // ----------------------------------------------------------------------------------------------------------
  // Life (detail/bitmapped_block_impl.hpp calls init_bits once the layout is set, release before it goes, take when
  // it moves), and what reallocate and the start-bit wrapper use.

  void init_bits() noexcept;  // defined in detail/bitmapped_block_core_paths.hpp, with release and take
  void release() noexcept;
  void take(BitmappedBlockCore& o) noexcept;
  // Gives back the whole blocks of b past its first n bytes (n < b.size; reallocate's shrink).
  void shrink(Block& b, std::size_t n) noexcept {
    if constexpr (multi) {
      std::size_t keep = 0, had = 0;
      shrink_range(b, n, keep, had);
      if (had > keep) {
        HintSync sync(this);
        release_range(keep, had - keep);
      }
    }
    b.size = n;
  }
  // Word i of the bitmap as it is now (the hint word from the cache).
  [[nodiscard]] std::uint64_t word_now(std::size_t i) const noexcept { return hint_.word_now(bits_, i); }
  // Whether blocks [i, i + k) are all allocated; ALLOY_ASSERT in debug builds (a double free: some are free).
  bool check_live(std::size_t i, std::size_t k) const noexcept {
    const bool live =
        bitmap::for_each_word(i, k, [this](std::size_t wi, std::uint64_t m) { return (word_now(wi) & m) == m; });
    ALLOY_ASSERT(live, "BitmappedBlock::deallocate: double free (a block is not allocated)");
    return live;
  }

 private:
  // ----------------------------------------------------------------------------------------------------------
  // State, after the base's (Layout: parent_, bits_, payload_, blocks_, words_, mem_): the search hint and its word's
  // bits with what the fast paths need (detail/hint_cache.hpp); multiblock, the fresh cursor (blocks at and after it
  // were never allocated) and the summary index with the hint word's snapshot.
  HintCache<fresh_masked> hint_{};
  [[no_unique_address]] std::conditional_t<multi, std::size_t, Absent<3>> fresh_{};
  [[no_unique_address]] std::conditional_t<summarized, BitmapSummary<Bookkeeping>, NoSummary> summary_{};

  // Between its construction and its destruction, the bitmap is current, the hint word included: flush_hint writes
  // hint_.bits_ back, load_hint reloads it (detail/hint_cache.hpp's rule). It holds the block, not the cache: a
  // reference to the cache took a saved register of its own in every out-of-line path that syncs (W3 +0.3
  // instructions per step).
  struct HintSync {
    BitmappedBlockCore* self;
    explicit HintSync(BitmappedBlockCore* s) noexcept : self(s) { self->flush_hint(); }
    ~HintSync() { self->load_hint(); }
    HintSync(const HintSync&) = delete;
    HintSync& operator=(const HintSync&) = delete;
  };

  // std::countr_zero(x) for x != 0, as a 64-bit result: std::countr_zero returns int, and GCC sign-extends it before
  // it indexes (one instruction per allocation). On x86-64, tzcnt (bsf on CPUs without BMI: the same result for a
  // nonzero x) writes the 64-bit register itself.
  static std::size_t count_trailing_zeros(std::uint64_t x) noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    std::uint64_t r;
    __asm__("tzcnt %1, %0" : "=r"(r) : "rm"(x) : "cc");
    return r;
#else
    return static_cast<unsigned>(std::countr_zero(x));
#endif
  }
  // After any change of the hint, the bitmap, the payload or the cursor.
  void sync_hint() noexcept { hint_.sync(bits_, words_, payload_, bs(), hint_end()); }
  // The first block the fast paths may not touch (detail/hint_cache.hpp): the fresh cursor, or the block count.
  [[nodiscard]] std::size_t hint_end() const noexcept {
    if constexpr (multi) return fresh_;
    else return blocks_;
  }
  // The first word at or after i (<= words_) whose summary byte is at least k (1 to 64), or words_ (64 bytes per SSE2
  // step; the summary has 64 zero bytes after the last word's). Every summary search goes through it.
  [[gnu::always_inline]] std::size_t next_fit_word(std::size_t i, unsigned k) const noexcept requires summarized {
    return summary_.first_at_least(i, words_, k);
  }
  // Bits [p, p + k) of word wf cleared (p + k <= 64; the caller checked they were set in debug builds).
  [[gnu::always_inline]] void clear_in_word(std::size_t wf, unsigned p, unsigned k) noexcept requires summarized {
    ALLOY_ASSERT(bitmap::range_is(bits_, wf * 64 + p, k, true),
                 "BitmappedBlock::deallocate: double free (a block is not allocated)");
    bits_[wf] &= ~(bitmap::low_mask(k) << p);
  }

  // ----------------------------------------------------------------------------------------------------------
  // Index-level paths, defined in detail/bitmapped_block_core_paths.hpp (each with its comment there). Those marked
  // multi or summarized are called in that mode only (a trailing requires-clause on an out-of-class definition is
  // not found by clang 14's lookup).

  // The indexes' upkeep.
  void flush_hint() noexcept;
  void load_hint() noexcept;
  void set_start(std::size_t s) noexcept;
  void advance_start() noexcept;
  void lower_start(std::size_t wi) noexcept;
  void after_claim(std::size_t i, std::size_t k) noexcept;
  void set_fresh(std::size_t v) noexcept;    // multi
  void raise_fresh(std::size_t v) noexcept;  // multi
  void refresh_hint_byte() noexcept;
  void refresh_hint_byte(std::uint64_t w) noexcept;
  void reset_snap() noexcept;
  void raise_one_word(std::size_t wf, unsigned p) noexcept;          // summarized
  void raise_summary_range(std::size_t i, std::size_t k) noexcept;  // summarized
  // Taking blocks.
  [[gnu::noinline]] std::size_t alloc1_synced() noexcept;
  std::size_t alloc1() noexcept;
  Block alloc1_aligned(std::size_t n, std::size_t a) noexcept;
  [[gnu::noinline]] std::size_t alloc_blocks_guarded(std::size_t k) noexcept;  // multi
  std::size_t alloc_blocks(std::size_t k) noexcept;                            // multi
  std::size_t alloc_small(unsigned k) noexcept;
  [[gnu::noinline]] std::size_t alloc_small_from(std::size_t i, unsigned k) noexcept;  // summarized
  [[gnu::always_inline]] std::size_t probe_small(std::size_t i, unsigned k) noexcept;  // summarized
  // Freeing blocks.
  [[gnu::noinline]] bool release_checked(std::size_t i, std::size_t k) noexcept;                  // multi
  void release1(std::size_t i) noexcept;                                                          // not summarized
  [[gnu::noinline]] void release_small(std::size_t i, unsigned k) noexcept;                       // summarized
  [[gnu::noinline]] void release_in_word_synced(std::size_t wf, unsigned p, unsigned k) noexcept;  // summarized
  [[gnu::noinline]] void release_range(std::size_t i, std::size_t k) noexcept;
};

}  // namespace alloy::detail

#include <alloy/detail/bitmapped_block_core_paths.hpp>  // the definitions of the index-level paths
