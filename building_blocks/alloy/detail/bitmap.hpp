#pragma once
/// \file alloy/detail/bitmap.hpp
/// Word-level bit operations for the BitmappedBlock family: one bit per block, bit j of word i is block 64 i + j
/// (least significant bit first), a set bit means "allocated". Internal: no API promise.
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <alloy/config.hpp>

namespace alloy::detail::bitmap {

inline constexpr std::size_t npos = SIZE_MAX;
inline constexpr std::uint64_t all_ones = ~std::uint64_t{0};
/// The bitmap of a block allocator that has no block: full words, read and never written, so that the single-block
/// fast path needs no null check. Const (read-only memory): a foreign block freed into an allocator without blocks
/// (a broken precondition, caught by ALLOY_ASSERT in debug builds) faults there instead of corrupting the words
/// that every empty allocator in the process reads.
inline constexpr std::uint64_t full_sentinel[2] = {all_ones, all_ones};
/// full_sentinel as the bitmap pointer of an allocator without blocks (never written through).
constexpr std::uint64_t* sentinel() noexcept { return const_cast<std::uint64_t*>(full_sentinel); }

/// n bits (1..64) starting at bit lo (lo + n <= 64).
constexpr std::uint64_t mask(unsigned lo, unsigned n) noexcept {
  return (n >= 64 ? all_ones : ((std::uint64_t{1} << n) - 1)) << lo;
}

/// The k low bits set, 1 <= k <= 64 (one shift, no compare: two shifts of a 64-bit mask).
constexpr std::uint64_t low_mask(unsigned k) noexcept {
  ALLOY_ASSERT(k >= 1 && k <= 64, "internal: bitmap::low_mask: k must be 1 to 64");
  return all_ones >> (64 - k);
}

/// Lowest j such that bits j .. j + k - 1 of `x` are all set (1 <= k <= 64), or 64 when there is none.
/// log2(k) shift-and steps (each step doubles the run length that a set bit certifies).
constexpr unsigned find_run(std::uint64_t x, unsigned k) noexcept {
  unsigned len = 1;
  while (len < k && x) {
    const unsigned s = len < k - len ? len : k - len;
    x &= x >> s;
    len += s;
  }
  return x ? static_cast<unsigned>(std::countr_zero(x)) : 64u;
}

/// find_run for 2 <= k <= 8 without a loop or a branch: runs of 2 and of 4, then one shift-and that joins two
/// overlapping runs (of 2 for k <= 3, of 4 for k >= 4) k - 2 or k - 4 apart.
/// Always inlined, as longest_run_bound8: in a large translation unit (W3's benchmark, with the showcase's stacks)
/// GCC 12 stopped inlining them, which cost the W3 search 13 instructions per step.
[[gnu::always_inline]] constexpr unsigned find_run_upto8(std::uint64_t x, unsigned k) noexcept {
  ALLOY_ASSERT(k >= 2 && k <= 8, "internal: bitmap::find_run_upto8: k must be 2 to 8");
  const std::uint64_t x2 = x & (x >> 1);    // bit j: j .. j + 1 set
  const std::uint64_t x4 = x2 & (x2 >> 2);  // bit j: j .. j + 3 set
  // The choice between x2 and x4 is a mask, not ?: (GCC made that a branch, which a random k mispredicts: W3 lost
  // about 0.3 mispredictions per search to it).
  const std::uint64_t lt4 = std::uint64_t{0} - std::uint64_t{k < 4};
  const std::uint64_t base = (x2 & lt4) | (x4 & ~lt4);
  const unsigned sh = k - 4u + (static_cast<unsigned>(lt4) & 2u);
  const std::uint64_t r = base & (base >> sh);
  return static_cast<unsigned>(std::countr_zero(r));  // 64 when r == 0
}

/// An upper bound of longest_run(x) without a loop or a branch: exact below 8, 64 from 8 on (enough for the
/// summary bytes that searches for up to 8 blocks compare against). Each term is "some run of at least L exists".
[[gnu::always_inline]] constexpr unsigned longest_run_bound8(std::uint64_t x) noexcept {
  const std::uint64_t x2 = x & (x >> 1), x3 = x2 & (x >> 2), x4 = x2 & (x2 >> 2);
  const std::uint64_t x5 = x4 & (x >> 4), x6 = x4 & (x2 >> 4), x7 = x4 & (x4 >> 3), x8 = x4 & (x4 >> 4);
  const unsigned n = unsigned{x != 0} + unsigned{x2 != 0} + unsigned{x3 != 0} + unsigned{x4 != 0} +
                     unsigned{x5 != 0} + unsigned{x6 != 0} + unsigned{x7 != 0};
  return x8 ? 64u : n;
}

/// Length of the longest run of set bits in x: doubling steps, then a binary refinement (about 12 steps).
constexpr unsigned longest_run(std::uint64_t x) noexcept {
  if (x == all_ones) return 64;
  if (!x) return 0;
  // y[m]: bits that start a run of at least 2^m.
  std::uint64_t y[7];
  y[0] = x;
  unsigned m = 0;
  while (m < 6) {
    const std::uint64_t z = y[m] & (y[m] >> (1u << m));
    if (!z) break;
    y[++m] = z;
  }
  // A run of 2^m exists, none of 2^(m+1): add lower powers while a longer run still exists.
  std::uint64_t cur = y[m];
  unsigned len = 1u << m;
  for (unsigned p = m; p-- > 0;) {
    const std::uint64_t z = cur & (y[p] >> len);
    if (z) {
      cur = z;
      len += 1u << p;
    }
  }
  return len;
}

// The summary index built on these (summary_byte, first_at_least, its upkeep): alloy/detail/bitmap_summary.hpp.

// ------------------------------------------------------------------------------------------------------------
// Ranges over a plain word array (single-threaded).

/// Calls f(word index, mask of the range's bits in that word) for each word that bits [i, i + k) touch, in order;
/// stops and returns false as soon as f returns false. The one walk over a range of bits that every range
/// operation (plain or atomic) uses.
template <class F>
inline bool for_each_word(std::size_t i, std::size_t k, F&& f) noexcept {
  std::size_t wi = i / 64;
  unsigned b = static_cast<unsigned>(i % 64);
  while (k) {
    const unsigned n = static_cast<unsigned>(k < 64 - b ? k : 64 - b);
    if (!f(wi, mask(b, n))) return false;
    k -= n;
    ++wi;
    b = 0;
  }
  return true;
}

/// Sets bits [i, i + k).
inline void set_range(std::uint64_t* w, std::size_t i, std::size_t k) noexcept {
  for_each_word(i, k, [w](std::size_t wi, std::uint64_t m) { return (w[wi] |= m, true); });
}
/// Clears bits [i, i + k).
inline void clear_range(std::uint64_t* w, std::size_t i, std::size_t k) noexcept {
  for_each_word(i, k, [w](std::size_t wi, std::uint64_t m) { return (w[wi] &= ~m, true); });
}
/// Whether bits [i, i + k) are all set (want = true) or all clear (want = false).
inline bool range_is(const std::uint64_t* w, std::size_t i, std::size_t k, bool want) noexcept {
  return for_each_word(i, k, [w, want](std::size_t wi, std::uint64_t m) { return (w[wi] & m) == (want ? m : 0); });
}
inline bool test(const std::uint64_t* w, std::size_t i) noexcept { return (w[i / 64] >> (i % 64)) & 1u; }

/// Index of the last set bit at or before i in w, or npos.
inline std::size_t find_set_backward(const std::uint64_t* w, std::size_t i) noexcept {
  std::size_t wi = i / 64;
  const unsigned b = static_cast<unsigned>(i % 64);
  std::uint64_t x = w[wi] & (b == 63 ? all_ones : ((std::uint64_t{2} << b) - 1));
  for (;;) {
    if (x) return wi * 64 + 63 - static_cast<unsigned>(std::countl_zero(x));
    if (wi == 0) return npos;
    x = w[--wi];
  }
}

}  // namespace alloy::detail::bitmap
