#pragma once
/// \file alloy/detail/start_bits.hpp
/// The start bits of BitmappedBlockWithInternalPointers (Phobos wraps a heap plus an `_allocStart` bitmap): a second
/// bitmap beside the control bitmap ("allocated"), one bit per block, that marks where each allocation starts, so
/// that a pointer into a block finds its allocation and deallocate tells a whole allocation from a part of one.
/// Functions over the caller's start words `st` (the words after the control bitmap: bitmap_layout.hpp's second
/// map); the control words are read through the caller's `word(wi)`, since BitmappedBlock keeps its hint word in the
/// object between calls (word_now). Internal: no API promise. Tested alone by tests/start_bits.cpp, against a model
/// of the live allocations.
///
/// Invariant, between the calls of its owner: for every live allocation of blocks [s, s + k), start bit s is set and
/// start bits s + 1 to s + k - 1 are clear. The start bits of free blocks mean nothing (a free leaves them, a shrink
/// too); the bits past the last block are clear. Hence:
///   * the allocation that contains a live block b starts at the last start bit at or before b, and ends at the first
///     block after b that is free or has its start bit set, or at the last block's end (allocation_of);
///   * live blocks [i, i + k) are exactly one allocation iff start bit i is set, start bits i + 1 to i + k - 1 are
///     clear, and block i + k is past the end, free, or a start (is_whole).
/// Upkeep: mark(i, k) after every allocation of [i, i + k) (the fast single-block paths too), clear(i, k) when blocks
/// [i, i + k) join the allocation before them (expand). A free needs none.
#include <bit>
#include <cstddef>
#include <cstdint>

#include <alloy/detail/bitmap.hpp>

namespace alloy::detail::start_bits {

/// Blocks [i, i + k) were allocated (k >= 1): bit i set, bits i + 1 to i + k - 1 cleared.
inline void mark(std::uint64_t* st, std::size_t i, std::size_t k) noexcept {
  st[i / 64] |= std::uint64_t{1} << (i % 64);
  if (k > 1) bitmap::clear_range(st, i + 1, k - 1);
}

/// Blocks [i, i + k) joined the allocation that ends at block i (expand): their bits cleared.
inline void clear(std::uint64_t* st, std::size_t i, std::size_t k) noexcept { bitmap::clear_range(st, i, k); }

/// Whether live blocks [i, i + k) (k >= 1; every one allocated, which the caller has checked) are exactly one
/// allocation, of `blocks` blocks in all; word(wi) is control word wi as it is now.
template <class Word>
bool is_whole(const std::uint64_t* st, std::size_t blocks, std::size_t i, std::size_t k, Word&& word) noexcept {
  const std::size_t e = i + k;
  return bitmap::test(st, i) && (k == 1 || bitmap::range_is(st, i + 1, k - 1, false)) &&
         (e >= blocks || bitmap::test(st, e) || !((word(e / 64) >> (e % 64)) & 1u));
}

/// The blocks [first, end) of one allocation.
struct Allocation {
  std::size_t first = bitmap::npos;
  std::size_t end = 0;
};

/// The allocation that contains live block blk (blk < blocks; word(wi) is control word wi as it is now); first is
/// npos when no start bit lies at or before blk (a broken invariant).
template <class Word>
Allocation allocation_of(const std::uint64_t* st, std::size_t blocks, std::size_t blk, Word&& word) noexcept {
  const std::size_t s = bitmap::find_set_backward(st, blk);
  if (s == bitmap::npos) return {};
  // It ends at the next start bit or the next free block.
  std::size_t e = blk + 1;
  while (e < blocks) {
    const std::size_t wi = e / 64;
    const unsigned b = static_cast<unsigned>(e % 64);
    const std::uint64_t stop = (st[wi] | ~word(wi)) & (bitmap::all_ones << b);
    if (stop) {
      e = wi * 64 + static_cast<unsigned>(std::countr_zero(stop));
      break;
    }
    e = (wi + 1) * 64;
  }
  if (e > blocks) e = blocks;
  return {s, e};
}

}  // namespace alloy::detail::start_bits
