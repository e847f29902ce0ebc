#pragma once
/// \file alloy/detail/bitmap_search.hpp
/// BitmappedBlock's multiblock search: the exact first fit of a run of k free blocks in a bitmap of `words` words
/// (bit j of word i is block 64 i + j, set = allocated), word by word as D's, or through the summary index
/// (detail/bitmap_summary.hpp) where the block keeps one. Functions over the caller's words; the search hint, the
/// fresh cursor and the start bits stay with the caller. Internal: no API promise. Tested alone by
/// tests/bitmap_search.cpp, against a brute-force first fit on random bitmaps.
///
/// Rules (BitmappedBlock relies on each):
///   * first fit: every search from word `from` returns the lowest block b >= 64 from such that blocks [b, b + k) are
///     all free and lie in the bitmap (the padding bits past the last block are set, so no run reaches past it), or
///     npos. A search only reads the words; take_small also takes the run it finds;
///   * the summary stays a bound: with a summary (every byte >= the longest free run that starts in its word, the
///     hint word's byte as its snapshot's refresh would leave it; bitmap_summary.hpp), a search skips the words
///     whose byte is below k and lowers a byte only to a bound of its word as it is now (the exact longest run below
///     k for a word where no run of k starts), so that skipping keeps the first fit. `hint` is the caller's hint
///     word, whose snapshot a lowered byte updates; the hint word must be current in `bits` (the single-threaded
///     block's HintSync);
///   * Atomic (SharedBitmappedBlock, whose lock-free single-block paths CAS the words meanwhile): every word is read
///     with a relaxed atomic load, and a result is a first fit of the words as they were read: the caller claims it
///     by CAS and searches again when a claim fails. Shared blocks keep no summary.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <alloy/config.hpp>
#include <alloy/detail/atomic_bitmap.hpp>
#include <alloy/detail/bitmap.hpp>
#include <alloy/detail/bitmap_summary.hpp>

namespace alloy::detail {

/// The absent summary index (SharedBitmappedBlock, Multiblock::no, Bookkeeping = NullAllocator): the searches walk
/// the words from their start, as D's.
struct NoSummary {};

namespace bitmap {

/// Word i of bits: a plain read, or a relaxed atomic one (Atomic: other threads CAS the words).
template <bool Atomic>
[[gnu::always_inline]] inline std::uint64_t load_word(const std::uint64_t* bits, std::size_t i) noexcept {
  if constexpr (Atomic) return atomic_bitmap::load(bits, i);
  else return bits[i];
}

/// k == 1: the first free block from word `from` on, or npos.
template <bool Atomic>
std::size_t find1(const std::uint64_t* bits, std::size_t words, std::size_t from) noexcept {
  for (std::size_t i = from; i < words; ++i) {
    const std::uint64_t w = load_word<Atomic>(bits, i);
    if (w != all_ones) return i * 64 + static_cast<unsigned>(std::countr_one(w));
  }
  return npos;
}

/// 2 <= k <= 64: the first run of k from word `from` on, inside one word, or the free tail of word i plus the free
/// head of word i + 1. With a summary, the words whose byte is below k are skipped, and a word where no run of k
/// starts gets the exact bound (below k) as its byte.
template <bool Atomic, class Summary>
std::size_t find_small(const std::uint64_t* bits, std::size_t words, std::size_t from, unsigned k, Summary& sum,
                       std::size_t hint) noexcept {
  constexpr bool summarized = !std::is_same_v<Summary, NoSummary>;
  ALLOY_ASSERT(k >= 2 && k <= 64, "internal: bitmap::find_small: k must be 2 to 64");
  for (std::size_t i = from; i < words; ++i) {
    if constexpr (summarized) {
      i = sum.first_at_least(i, words, k);
      if (i == words) break;
    }
    const std::uint64_t w = load_word<Atomic>(bits, i);
    unsigned cross = 0;
    if (w != all_ones) {
      const unsigned j = find_run(~w, k);
      if (j < 64) return i * 64 + j;
      const unsigned tail = static_cast<unsigned>(std::countl_zero(w));
      if (tail && i + 1 < words) {
        cross = tail + static_cast<unsigned>(std::countr_zero(load_word<Atomic>(bits, i + 1)));
        if (cross >= k) return i * 64 + 64 - tail;
      }
    }
    if constexpr (summarized) {  // no run of k starts here: record the exact bound (below k)
      sum.set(i, std::max(cross, longest_run(~w)), w, hint);
    } else {
      (void)sum, (void)hint;
    }
  }
  return npos;
}

/// k > 64: the first run that spans whole free words (a run of more than 64 blocks can only start in a word whose
/// summary byte is 64). Reads only, the summary too.
template <bool Atomic, class Summary>
std::size_t find_huge(const std::uint64_t* bits, std::size_t words, std::size_t from, std::size_t k,
                      const Summary& sum) noexcept {
  constexpr bool summarized = !std::is_same_v<Summary, NoSummary>;
  ALLOY_ASSERT(k > 64, "internal: bitmap::find_huge: k must be above 64");
  std::size_t run = 0, run_start = 0;
  for (std::size_t i = from; i < words; ++i) {
    if constexpr (summarized) {
      if (run == 0) {
        i = sum.first_at_least(i, words, 64);
        if (i == words) break;
      }
    } else {
      (void)sum;
    }
    const std::uint64_t w = load_word<Atomic>(bits, i);
    if (w == 0) {
      if (run == 0) run_start = i * 64;
      run += 64;
      if (run >= k) return run_start;
      continue;
    }
    if (run + static_cast<unsigned>(std::countr_zero(w)) >= k) return run_start;
    const unsigned tail = static_cast<unsigned>(std::countl_zero(w));
    run = tail;
    run_start = i * 64 + 64 - tail;
  }
  return npos;
}

/// Any k >= 1: the search for its size.
template <bool Atomic, class Summary>
std::size_t find_run(const std::uint64_t* bits, std::size_t words, std::size_t from, std::size_t k, Summary& sum,
                     std::size_t hint) noexcept {
  if (k == 1) return find1<Atomic>(bits, words, from);
  if (k <= 64) return find_small<Atomic>(bits, words, from, static_cast<unsigned>(k), sum, hint);
  return find_huge<Atomic>(bits, words, from, k, sum);
}

/// Whether blocks [i, i + k) are all free.
template <bool Atomic>
bool range_free(const std::uint64_t* bits, std::size_t i, std::size_t k) noexcept {
  return for_each_word(i, k,
                       [bits](std::size_t wi, std::uint64_t m) { return (load_word<Atomic>(bits, wi) & m) == 0; });
}

/// The single-threaded search's probe of one word for 2 <= k <= 64 (word i < words, one the summary found): the
/// first run of k that starts in it (inside it, or its free tail into word i + 1's free head) is taken (its bits
/// set, word i's byte exact again below 8, so that later searches for up to 8 blocks do not stop there in vain) and
/// its first block returned; or, when none starts there, word i's byte is lowered to a bound below k (the exact
/// longest run below 8, k - 1 above) and npos returned. bits, words and hint by reference to the owner's members, so
/// that an inlined call reads each where it is used (bitmap_summary.hpp says what taking them by value cost).
/// Always inlined: it is most of W3's allocation.
template <class Bookkeeping>
[[gnu::always_inline]] inline std::size_t take_small(std::uint64_t* const& bits_ref, const std::size_t& words_ref,
                                                     BitmapSummary<Bookkeeping>& sum, const std::size_t& hint,
                                                     std::size_t i, unsigned k) noexcept {
  std::uint64_t* const bits = bits_ref;
  const std::size_t words = words_ref;
  const std::uint64_t w = bits[i];
  std::size_t idx = npos;
  unsigned cross = 0;
  const unsigned j = k <= 8 ? find_run_upto8(~w, k) : find_run(~w, k);
  if (j < 64) {
    bits[i] = w | (low_mask(k) << j);
    idx = i * 64 + j;
  } else if (const unsigned tail = static_cast<unsigned>(std::countl_zero(w)); tail && i + 1 < words) {
    const std::uint64_t w2 = bits[i + 1];
    cross = tail + static_cast<unsigned>(std::countr_zero(w2));
    if (cross >= k) {
      bits[i] = w | mask(64 - tail, tail);
      bits[i + 1] = w2 | mask(0, k - tail);
      idx = i * 64 + 64 - tail;
    }
  }
  if (idx != npos) {
    sum.set_exact(i, bits[i], bits, words, hint);
    return idx;
  }
  // No run of k starts here: the exact bound below 8, k - 1 above.
  sum.set(i, std::min(k - 1, std::max(cross, longest_run_bound8(~w))), w, hint);
  return npos;
}

}  // namespace bitmap
}  // namespace alloy::detail
