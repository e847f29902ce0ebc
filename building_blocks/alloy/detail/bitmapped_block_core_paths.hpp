#pragma once
/// \file alloy/detail/bitmapped_block_core_paths.hpp
/// The index-level paths of the single-threaded engine (BitmappedBlockCore, detail/bitmapped_block_core.hpp, whose
/// header states the invariants they keep and includes this one after the class): its life (init_bits, release,
/// take); the upkeep of the search hint, the fresh cursor and the summary index; taking blocks (the first free block,
/// the exact first fit of a run of k through the summary or word by word); freeing blocks [i, i + k) with the
/// summary's bounds raised. Defined out of the class so that the engine stays one class in two headers of readable
/// length: as a base class of the primitives, the same code cost W2 one instruction per free (docs/design_notes.md).
/// Internal: use <alloy/bitmapped_block.hpp>.
///
/// Every path here runs inside a HintSync (the bitmap current, the hint word included), except alloc_small, which
/// syncs only the probe that needs it, and the upkeep that deallocate's fast paths call outside one (lower_start under
/// its own HintSync, raise_one_word past the hint word); each leaves the invariants true. The attributes on the
/// declarations (noinline, always_inline) are measured choices, each comment says what the other way cost W3
/// (instructions per step); the definitions that are not noinline are declared inline, as in-class ones are.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include <alloy/common.hpp>
#include <alloy/detail/bitmap.hpp>
#include <alloy/detail/bitmap_search.hpp>
#include <alloy/detail/bitmap_summary.hpp>
#include <alloy/detail/bitmapped_block_core.hpp>
#include <alloy/detail/hint_cache.hpp>

namespace alloy::detail {

// Every definition below is a member of BitmappedBlockCore<S, A, P, M, K, N>: BlockSize, Alignment, Parent, Multiblock,
// Bookkeeping and the number of bitmaps.

// ------------------------------------------------------------------------------------------------------------
// Life: detail/bitmapped_block_impl.hpp calls init_bits once the layout is set, release before it goes, take when it
// moves.

// The bitmap words of freshly laid-out blocks (Layout set bits_, payload_, blocks_, words_): all free, the padding
// past the last block taken; the hint, the cursor and the summary.
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline void BitmappedBlockCore<S, A, P, M, K, N>::init_bits() noexcept {
  std::memset(bits_, 0, words_ * maps * sizeof(std::uint64_t));
  if (words_) bits_[words_ - 1] = pad_mask();
  if constexpr (multi) fresh_ = 0;
  hint_.start_ = 0;
  sync_hint();  // new bits_, payload_ and cursor, whatever the hint was
  reset_snap();
  if constexpr (summarized) {
    if (!summary_.init(words_)) {  // no memory for the index: no blocks either (the search needs it)
      release();
      return;
    }
  }
  load_hint();
}

template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline void BitmappedBlockCore<S, A, P, M, K, N>::release() noexcept {
  if constexpr (summarized) summary_.release(words_);
  Layout::release();
  hint_.reset();
  if constexpr (multi) fresh_ = 0;
  sync_hint();
  reset_snap();
}

template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline void BitmappedBlockCore<S, A, P, M, K, N>::take(BitmappedBlockCore& o) noexcept {
  Layout::take(o);
  hint_.take(o.hint_);
  if constexpr (multi) fresh_ = std::exchange(o.fresh_, 0);
  if constexpr (summarized) summary_.take(o.summary_);
  sync_hint();
  o.sync_hint();
  o.reset_snap();
}

// ------------------------------------------------------------------------------------------------------------
// The indexes' upkeep

// A HintSync's two ends, with the cached word pinned (pin_hint_word) on this object's own member.
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline void BitmappedBlockCore<S, A, P, M, K, N>::flush_hint() noexcept {
  pin_hint_word(hint_.bits_);
  hint_.flush();
}

template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline void BitmappedBlockCore<S, A, P, M, K, N>::load_hint() noexcept {
  hint_.load();
  pin_hint_word(hint_.bits_);
}

// Nothing when the hint stays (W3's searches mostly end in the hint word): whatever else changed called sync_hint.
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline void BitmappedBlockCore<S, A, P, M, K, N>::set_start(std::size_t s) noexcept {
  if (s == hint_.start_) return;  // the same word keeps its snapshot
  hint_.start_ = s;
  sync_hint();
  reset_snap();  // a word that was not the hint: its byte bounds it
}

template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline void BitmappedBlockCore<S, A, P, M, K, N>::advance_start() noexcept {
  std::size_t s = hint_.start_;
  while (s + 1 < words_ && bits_[s] == all_ones) ++s;
  set_start(s);
}

// The search hint moves back to word wi (a block in it was freed; the caller raises wi's byte).
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline void BitmappedBlockCore<S, A, P, M, K, N>::lower_start(std::size_t wi) noexcept {
  if (wi < hint_.start_) {
    refresh_hint_byte();
    set_start(wi);
  }
}

// After blocks [i, i + k) were taken: the hint moves on when they filled its word.
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline void BitmappedBlockCore<S, A, P, M, K, N>::after_claim(std::size_t i, std::size_t k) noexcept {
  if (i / 64 <= hint_.start_ && hint_.start_ <= (i + k - 1) / 64) advance_start();
}

template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline void BitmappedBlockCore<S, A, P, M, K, N>::set_fresh(std::size_t v) noexcept {
  fresh_ = v;
  // Outside a HintSync only alloc_small's probe of a later word raises the cursor, and the summary sends a search
  // to the hint word first while it has never-used blocks (their run goes on into the next word, all free), so
  // today end_raised's clearing changes nothing; it keeps the rule local.
  const std::uint64_t old = hint_.fresh_mask_;
  sync_hint();
  hint_.end_raised(old);
}

template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline void BitmappedBlockCore<S, A, P, M, K, N>::raise_fresh(std::size_t v) noexcept {
  if (v > fresh_) set_fresh(v);
}

// The summary's snapshot rule for the hint word (BitmapSummary::refresh): called before the summary is read or the
// hint moves back. In a HintSync the hint word is *hint_.word_; outside one, hint_.bits_ (alloc_small).
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline void BitmappedBlockCore<S, A, P, M, K, N>::refresh_hint_byte() noexcept {
  if constexpr (summarized) refresh_hint_byte(*hint_.word_);
}

template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline void BitmappedBlockCore<S, A, P, M, K, N>::refresh_hint_byte(std::uint64_t w) noexcept {
  if constexpr (summarized) summary_.refresh(hint_.start_, w);
  else (void)w;
}

// the hint word's byte bounds it (a new hint word, a fresh or reset summary)
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline void BitmappedBlockCore<S, A, P, M, K, N>::reset_snap() noexcept {
  if constexpr (summarized) summary_.snap(*hint_.word_);
}

// The summary's raises after a free (BitmapSummary::raise_one_word, raise_range), as calls of two arguments: the
// summary's own five (bitmap, words, hint) are loaded inside. Called directly, they cost W3 5 instructions per step
// (the arguments set up at every call, in deallocate's inlined fast path too).
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline void BitmappedBlockCore<S, A, P, M, K, N>::raise_one_word(std::size_t wf, unsigned p) noexcept {
  summary_.raise_one_word(bits_, words_, wf, p, hint_.start_);
}

template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline void BitmappedBlockCore<S, A, P, M, K, N>::raise_summary_range(std::size_t i, std::size_t k) noexcept {
  summary_.raise_range(bits_, words_, i, k, hint_.start_);
}

// ------------------------------------------------------------------------------------------------------------
// Taking blocks

// The fast path's fallback, out of line (inlined, its HintSync made GCC stop inlining allocate into W3's loop).
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
std::size_t BitmappedBlockCore<S, A, P, M, K, N>::alloc1_synced() noexcept {
  HintSync sync(this);
  return alloc1();
}

// The first free block from the hint on, taken; npos when none is left.
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline std::size_t BitmappedBlockCore<S, A, P, M, K, N>::alloc1() noexcept {
  for (std::size_t i = hint_.start_; i < words_; ++i) {
    std::uint64_t w = bits_[i];
    if (w != all_ones) {
      const unsigned j = static_cast<unsigned>(std::countr_one(w));
      w |= std::uint64_t{1} << j;
      bits_[i] = w;
      set_start(i);
      const std::size_t idx = i * 64 + j;
      if constexpr (multi) {
        if (idx >= fresh_) set_fresh(idx + 1);
      }
      return idx;
    }
  }
  if (words_) set_start(words_ - 1);
  return npos;
}

// Multiblock::no aligned_allocate: the first free block in which an a-aligned address leaves room for n bytes.
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline Block BitmappedBlockCore<S, A, P, M, K, N>::alloc1_aligned(std::size_t n, std::size_t a) noexcept {
  HintSync sync(this);
  for (std::size_t i = hint_.start_; i < words_; ++i) {
    std::uint64_t free = ~bits_[i];
    while (free) {
      const unsigned j = static_cast<unsigned>(std::countr_zero(free));
      free &= free - 1;
      const std::size_t idx = i * 64 + j;
      if (const std::uintptr_t res = aligned_spot(idx, n, a)) {
        bitmap::set_range(bits_, idx, 1);
        if (i == hint_.start_ && bits_[i] == all_ones) advance_start();
        return {to_pointer(res), n};
      }
    }
  }
  return {};
}

// Out of line, so that allocate stays small enough for GCC to inline it into a caller's loop (W3).
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
std::size_t BitmappedBlockCore<S, A, P, M, K, N>::alloc_blocks_guarded(std::size_t k) noexcept {
  HintSync sync(this);
  return alloc_blocks(k);
}

// Any k >= 1: the first run of k free blocks from the hint on (exact first fit), taken; npos when none fits.
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline std::size_t BitmappedBlockCore<S, A, P, M, K, N>::alloc_blocks(std::size_t k) noexcept {
  refresh_hint_byte();
  const std::size_t i = bitmap::find_run<false>(bits_, words_, hint_.start_, k, summary_, hint_.start_);
  if (i == npos) return npos;
  bitmap::set_range(bits_, i, k);
  raise_fresh(i + k);
  after_claim(i, k);
  return i;
}

// 2 <= k <= 64, outside a HintSync: the summary finds a word, probe_small takes the run or lowers the word's byte,
// and the search goes on from the next word. The hint word is hint_.bits_: only a probe of the hint word itself
// needs it in bits_ (a probe of word i reads and writes words i and i + 1 and moves the hint only when i is the hint
// word).
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline std::size_t BitmappedBlockCore<S, A, P, M, K, N>::alloc_small(unsigned k) noexcept {
  if constexpr (summarized) {
    // The hint word without the padding bits of a last word (HintCache::logical without its load): a snapshot with
    // fewer blocks taken only makes the byte go to 64 sooner, never leaves it too low.
    refresh_hint_byte(hint_.bits_ & hint_.fresh_mask_);
    // Most searches end at the first word the first summary step finds: that step and that word here, with no
    // loop; the rest in alloc_small_from, out of line, so that this path keeps few registers live.
    const std::size_t i = next_fit_word(hint_.start_, k);
    if (i >= words_) return npos;
    std::size_t idx;
    if (i != hint_.start_) [[likely]] {
      idx = probe_small(i, k);
    } else {
      HintSync sync(this);
      idx = probe_small(i, k);
    }
    if (idx != npos) [[likely]]
      return idx;
    return alloc_small_from(i + 1, k);  // words past the hint only
  } else {
    (void)k;
    return npos;
  }
}

template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
std::size_t BitmappedBlockCore<S, A, P, M, K, N>::alloc_small_from(std::size_t i, unsigned k) noexcept {
  for (;;) {
    i = next_fit_word(i, k);
    if (i >= words_) return npos;
    const std::size_t idx = probe_small(i, k);
    if (idx != npos) return idx;
    ++i;
  }
}

// Word i (i < words_) for a run of k: in the word, or its free tail into the next word's free head. Takes it and
// returns its first block, or lowers the word's byte and returns npos (bitmap::take_small); then the hint and the
// fresh cursor follow.
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline std::size_t BitmappedBlockCore<S, A, P, M, K, N>::probe_small(std::size_t i, unsigned k) noexcept {
  const std::size_t idx = bitmap::take_small(bits_, words_, summary_, hint_.start_, i, k);
  if (idx != npos) {
    if (i == hint_.start_) advance_start();
    if (idx + k > fresh_) set_fresh(idx + k);
  }
  return idx;
}

// ------------------------------------------------------------------------------------------------------------
// Freeing blocks

// Blocks [i, i + k) (k >= 1, owned), outside a HintSync: refused when a block is free (a double free), else freed.
// Out of line: inlined, its calls gave every deallocate a stack frame and four saved registers (W3: 12 instructions
// per free).
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
bool BitmappedBlockCore<S, A, P, M, K, N>::release_checked(std::size_t i, std::size_t k) noexcept {
  if (!check_live(i, k)) return false;
  if constexpr (summarized) {
    if (const unsigned p = static_cast<unsigned>(i % 64); k <= 64 - p) {
      release_in_word_synced(i / 64, p, static_cast<unsigned>(k));
      return true;
    }
  }
  HintSync sync(this);
  if constexpr (summarized) {
    if (k <= 64) release_small(i, static_cast<unsigned>(k));  // across two words (one took the path above)
    else release_range(i, k);
  } else if (k == 1) {
    release1(i);
  } else {
    release_range(i, k);
  }
  return true;
}

// Block i (no summary), which is allocated.
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
inline void BitmappedBlockCore<S, A, P, M, K, N>::release1(std::size_t i) noexcept {
  bits_[i / 64] &= ~(std::uint64_t{1} << (i % 64));
  lower_start(i / 64);
}

// 2 <= k <= 64 blocks across two words (deallocate frees a run inside one word itself). Out of line, as
// release_range: inlined into deallocate, it gave every multi-block free a stack frame.
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
void BitmappedBlockCore<S, A, P, M, K, N>::release_small(std::size_t i, unsigned k) noexcept {
  std::uint64_t* const bits = bits_;
  const std::size_t e = i + k - 1, wf = i / 64, wl = e / 64;
  ALLOY_ASSERT(wl == wf + 1, "internal: release_small is for a run across two words");
  ALLOY_ASSERT(bitmap::range_is(bits, i, k, true),
               "BitmappedBlock::deallocate: double free (a block is not allocated)");
  bits[wf] &= ~(bitmap::all_ones << (i % 64));
  bits[wl] &= ~bitmap::mask(0, static_cast<unsigned>(e % 64) + 1);
  lower_start(wf);
  raise_summary_range(i, k);
}

// Bits [p, p + k) of word wf (p + k <= 64), then the bytes of the one run that grew, exactly. Out of line: inlined,
// its HintSync gave every multi-block free a stack frame (W3).
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
void BitmappedBlockCore<S, A, P, M, K, N>::release_in_word_synced(std::size_t wf, unsigned p, unsigned k) noexcept {
  HintSync sync(this);
  clear_in_word(wf, p, k);
  lower_start(wf);
  raise_one_word(wf, p);
}

// Clears bits [i, i + k), inside a HintSync; in debug builds, checks they were all set (a double free otherwise).
// Out of line: inlined into deallocate, its registers cost every multi-block free six pushes and pops (W3).
template <std::size_t S, std::size_t A, class P, Multiblock M, class K, std::size_t N>
void BitmappedBlockCore<S, A, P, M, K, N>::release_range(std::size_t i, std::size_t k) noexcept {
  ALLOY_ASSERT(bitmap::range_is(bits_, i, k, true),
               "BitmappedBlock::deallocate: double free (a block is not allocated)");
  bitmap::clear_range(bits_, i, k);
  lower_start(i / 64);
  if constexpr (summarized) raise_summary_range(i, k);
}

}  // namespace alloy::detail
