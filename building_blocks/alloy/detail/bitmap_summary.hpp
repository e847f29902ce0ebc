#pragma once
/// \file alloy/detail/bitmap_summary.hpp
/// The summary index of BitmappedBlock's multiblock search: one byte per bitmap word, an upper bound of the longest
/// free run that starts in that word, so that a search skips the words that cannot hold a run of k blocks, 64 bytes
/// per step. Internal: no API promise. The bitmap itself (bit j of word i is block 64 i + j, set = allocated) is the
/// caller's; the summary only reads it. Tested alone by tests/bitmap_summary.cpp, against a brute-force model.
///
/// Invariants, between the calls of its owner (tests/support/bitmapped_block_invariants.hpp checks them after every
/// operation of the randomized BitmappedBlock tests, tests/bitmap_summary.cpp after every step of its own):
///   * bound: for every word w, byte(w) >= L(w), the longest free run that starts in w (its in-word runs, and its
///     free tail continued into the following words' free heads), capped at 64. A search trusts it: a word whose
///     byte is below k holds no run of k, so skipping it keeps the exact first fit;
///   * the hint word h (its owner's search hint; every word before it is full) is the exception: a single-block free
///     in it stores nothing but the bitmap word (BitmappedBlock's fast free, W1's whole loop). The byte then bounds
///     the snapshot, the word as it was when its byte was last set for it: byte(h) >= L(h) holds once a block free
///     now but taken in the snapshot has raised the byte to 64, which refresh(h, word) does, and the owner calls it
///     before it reads byte(h), moves the hint back, or grows the run that enters h's free tail (raise_one_word and
///     raise_range do that themselves). When the hint moves, the new hint word's byte bounds it: the owner takes a
///     new snapshot (snap);
///   * every byte is at most 64 (first_at_least's signed byte compare is then exact), and the 64 bytes after the last
///     word's are zero (a search step reads 64 bytes).
/// Upkeep keeps bytes as exact as is cheap: a multi-block free raises the bytes of the one run that grew to its
/// length (so an exact byte stays exact), a single-block free raises two bytes to 64 (raise_pair), an allocation sets
/// its word's byte exactly below 8 (summary_byte) and a search that finds no run of k in a word lowers its byte below
/// k (lower). Why each rule is what it is, and what the cheaper ones cost: docs/design_notes.md, "W3".
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include <alloy/block.hpp>
#include <alloy/config.hpp>
#include <alloy/detail/bitmap.hpp>

#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
#include <emmintrin.h>
#define ALLOY_BITMAP_SSE2 1
#endif

namespace alloy::detail {

namespace bitmap {

/// The byte of word i of `bits` (n words; a set bit is an allocated block), whose value w the caller has at hand:
/// the exact longest free run below 8, 64 from 8 on (longest_run_bound8), and the free tail continued into word
/// i + 1's free head, capped at 64.
[[gnu::always_inline]] inline unsigned summary_byte(std::uint64_t w, const std::uint64_t* bits, std::size_t i,
                                                    std::size_t n) noexcept {
  ALLOY_ASSERT(bits[i] == w, "internal: bitmap::summary_byte: w must be word i");
  unsigned v = longest_run_bound8(~w);
  if (const unsigned t = static_cast<unsigned>(std::countl_zero(w)); t && i + 1 < n) {
    const unsigned c = t + static_cast<unsigned>(std::countr_zero(bits[i + 1]));
    v = v > c ? v : c;
  }
  return v < 64 ? v : 64;
}

#if ALLOY_BITMAP_SSE2
/// Bit j set iff byte p[j] > below's (16 bytes). A function, not a lambda in first_at_least: GCC 12 called the lambda
/// out of line in one translation unit (W6's), which cost that row 11% of its time.
[[gnu::always_inline]] inline std::uint64_t above16(const unsigned char* p, __m128i below) noexcept {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpgt_epi8(v, below))));
}
#endif

/// The first index at or after i (i <= n) whose byte in sum is at least k (1 <= k <= 64), or n when there is none.
/// sum must hold 64 readable bytes past sum[n - 1], all zero (each step reads 64 bytes, or 8 without SSE2), and
/// every byte must be at most 64 (a signed byte compare is then exact). The 8-byte step assumes little-endian loads.
[[gnu::always_inline]] inline std::size_t first_at_least(const unsigned char* sum, std::size_t i, std::size_t n,
                                                         unsigned k) noexcept {
  ALLOY_ASSERT(i <= n && k >= 1 && k <= 64, "internal: bitmap::first_at_least: needs i <= n and 1 <= k <= 64");
#if ALLOY_BITMAP_SSE2
  // 64 bytes per step (four 16-byte compares): most searches take one step, so the loop's exit branch is
  // mispredicted less often.
  const __m128i below = _mm_set1_epi8(static_cast<char>(k - 1));
  for (;;) {
    const unsigned char* const p = sum + i;
    const std::uint64_t hit =
        above16(p, below) | above16(p + 16, below) << 16 | above16(p + 32, below) << 32 | above16(p + 48, below) << 48;
    if (hit) return i + static_cast<unsigned>(std::countr_zero(hit));
    i += 64;
    if (i >= n) return n;
  }
#else
  const std::uint64_t add = (128u - k) * 0x0101010101010101ull;  // bit 7 of each byte: byte + 128 - k >= 128
  for (;;) {
    std::uint64_t x;
    std::memcpy(&x, sum + i, 8);
    const std::uint64_t hit = (x + add) & 0x8080808080808080ull;
    if (hit) return i + static_cast<unsigned>(std::countr_zero(hit)) / 8;
    i += 8;
    if (i >= n) return n;
  }
#endif
}

}  // namespace bitmap

/// The summary bytes of a bitmap of `words` words and the hint word's snapshot (see the file comment). Storage from
/// Bookkeeping (stateless): [one spare byte][one byte per word][64 zero bytes]; the spare byte lets raise_pair
/// store word 0's byte and the one before it as one 2-byte store. Not copyable; moved by its owner (take).
/// Every function that reads the bitmap takes it (`bits`, `words`) and the owner's hint word `hint`, by reference
/// to the owner's own members, so that an inlined call reads each where it is used, as the owner's code did: taken
/// by value, they were all loaded up front and kept in saved registers (W3 +4 instructions per step). In them
/// bits[hint] must be the hint word as it is now. The upkeep is always inlined: its owner decides what stays out of
/// line (BitmappedBlock keeps the raises behind calls of two arguments, see raise_one_word there).
template <class Bookkeeping>
class BitmapSummary {
 public:
  constexpr BitmapSummary() noexcept = default;
  BitmapSummary(const BitmapSummary&) = delete;
  BitmapSummary& operator=(const BitmapSummary&) = delete;

  static constexpr std::size_t bytes_for(std::size_t words) noexcept { return words + 65; }

  /// Takes the bytes for `words` words, every byte 64 (a bound of anything) and the tail zero; false (and none)
  /// when Bookkeeping has no memory.
  bool init(std::size_t words) noexcept {
    const Block b = Bookkeeping{}.allocate(bytes_for(words));
    if (!b) return false;
    sum_ = static_cast<unsigned char*>(b.ptr) + 1;
    std::memset(sum_ - 1, 0, bytes_for(words));
    std::memset(sum_, 64, words);
    return true;
  }
  /// Gives the bytes back (words: as at init).
  void release(std::size_t words) noexcept {
    if (sum_) Bookkeeping{}.deallocate({sum_ - 1, bytes_for(words)});
    sum_ = nullptr;
  }
  /// Takes o's bytes and snapshot; o is left with none.
  void take(BitmapSummary& o) noexcept {
    sum_ = std::exchange(o.sum_, nullptr);
    snap_ = o.snap_;
  }
  /// Every byte 64 again (the bitmap was cleared): bounds of anything.
  void reset(std::size_t words) noexcept {
    if (words) std::memset(sum_, 64, words);
  }

  [[nodiscard]] const unsigned char* bytes() const noexcept { return sum_; }
  [[nodiscard]] std::uint64_t snapshot() const noexcept { return snap_; }

  /// The first word at or after i (<= words) whose byte is at least k (1 to 64), or words.
  [[gnu::always_inline]] std::size_t first_at_least(std::size_t i, std::size_t words, unsigned k) const noexcept {
    return bitmap::first_at_least(sum_, i, words, k);
  }

  // ----------------------------------------------------------------------------------------------------------
  // The snapshot rule (the hint word's byte)

  /// The hint word's byte as a bound of its content w now: raised to 64 when a block free in w was taken in the
  /// snapshot, and w the new snapshot. Called before the byte is read or the hint moves back.
  void refresh(const std::size_t& hint, std::uint64_t w) noexcept {
    if (snap_ & ~w) sum_[hint] = 64;
    snap_ = w;
  }
  /// The hint word, content w, whose byte bounds it (a new hint word, or a fresh summary) becomes the snapshot.
  void snap(std::uint64_t w) noexcept { snap_ = w; }

  // ----------------------------------------------------------------------------------------------------------
  // Lowering: a byte set for word i's content w (the hint word's becomes the snapshot).

  /// After an allocation in word i, content w: its byte exact below 8 (summary_byte). Always inlined, as the code
  /// it replaced in BitmappedBlock's probe_small was: GCC 12 called it out of line, W3 +12 instructions per step.
  [[gnu::always_inline]] void set_exact(std::size_t i, std::uint64_t w, std::uint64_t* const& bits,
                                        const std::size_t& words, const std::size_t& hint) noexcept {
    set(i, bitmap::summary_byte(w, bits, i, words), w, hint);
  }
  /// Word i, content w, holds no run of k: its byte v, a bound below k (cross: its free tail into the next word's
  /// head).
  [[gnu::always_inline]] void set(std::size_t i, unsigned v, std::uint64_t w, const std::size_t& hint) noexcept {
    sum_[i] = static_cast<unsigned char>(v);
    if (i == hint) snap_ = w;
  }

  // ----------------------------------------------------------------------------------------------------------
  // Raising: blocks were freed

  /// A single block of word wi was freed (wi not the hint word, or the hint moved back to it): the runs that start in
  /// wi and in wi - 1 may have grown: their bytes to 64 (one 2-byte store; wi - 1 may be the hint word).
  void raise_pair(std::size_t wi) noexcept {
    static constexpr unsigned char both[2] = {64, 64};
    std::memcpy((sum_ - 1) + wi, both, 2);
  }
  /// Bits from p of word wf were just freed (within that word): the bytes of the one run that grew, exactly (its
  /// part in wf continued into wf + 1's head; the free tail of wf - 1 continued into it).
  [[gnu::always_inline]] void raise_one_word(std::uint64_t* const& bits, const std::size_t& words, std::size_t wf,
                                             unsigned p, const std::size_t& hint) noexcept {
    const std::uint64_t nw = bits[wf];
    // The free run that now holds bit p: `down` free bits below p, `up` from p in this word.
    const unsigned down = p + static_cast<unsigned>(std::countl_zero(nw & ((std::uint64_t{1} << p) - 1))) - 64;
    const std::uint64_t hi = nw >> p;
    // [[likely]]: mostly a taken block lies above the run in this word (W3). Without the hint GCC 12 computed the
    // other case's 64 - p ahead of the test in every call (+1.2 instructions per W3 step).
    unsigned up = 64 - p;
    if (hi) [[likely]]
      up = static_cast<unsigned>(std::countr_zero(hi));
    unsigned len = down + up;
    if (p + up == 64 && wf + 1 < words) len += static_cast<unsigned>(std::countr_zero(bits[wf + 1]));
    raise_to(wf, len);
    if (down == p && wf > 0) {  // the run starts at bit 0: the previous word's free tail continues into it
      head_grew(bits, wf, hint);
      const unsigned t = static_cast<unsigned>(std::countl_zero(bits[wf - 1]));
      if (t) raise_to(wf - 1, t + len);
    }
  }
  /// Blocks [i, i + k) were just freed. The only runs that grew are the one that now contains them (its part in each
  /// word it touches) and, when that run reaches bit 0 of block i's word, the previous word's tail continued into
  /// it: those bytes go exactly to those lengths, so a byte that was exact stays exact.
  [[gnu::always_inline]] void raise_range(std::uint64_t* const& bits, const std::size_t& words, std::size_t i,
                                          std::size_t k, const std::size_t& hint) noexcept {
    const std::size_t wf = i / 64, wl = (i + k - 1) / 64;
    for (std::size_t w = wf + 1; w < wl; ++w) sum_[w] = 64;
    if (wl > wf) raise_to(wl, run_through(bits, words, wl, 0));
    raise_to(wf, run_through(bits, words, wf, static_cast<unsigned>(i % 64)));
    if (wf > 0 && static_cast<unsigned>(std::countr_zero(bits[wf])) > i % 64) {  // the run reaches bit 0 of wf
      head_grew(bits, wf, hint);
      const unsigned t = static_cast<unsigned>(std::countl_zero(bits[wf - 1]));
      if (t) raise_to(wf - 1, t + static_cast<unsigned>(std::countr_zero(bits[wf])));
    }
  }

 private:
  // Word wf's free head grew, so the run from word wf - 1's free tail did too. When wf - 1 is the hint word, its byte
  // may stand for its snapshot, whose free tail can be longer than the word's now (blocks taken since): refresh it
  // first, so that the snapshot is the word as it is now and the raise that follows (or none, for no free tail)
  // leaves a bound. (The test "the hint word's summary byte bounds its tail run..." replays the case.)
  void head_grew(std::uint64_t* const& bits, std::size_t wf, const std::size_t& hint) noexcept {
    if (wf - 1 == hint) refresh(hint, bits[hint]);
  }
  void raise_to(std::size_t w, unsigned v) noexcept {  // a max and a store
    sum_[w] = static_cast<unsigned char>(std::max<unsigned>(sum_[w], std::min(v, 64u)));
  }
  // Length of the free run through bit p of word w, from its first bit in w, continued into the next word's head.
  static unsigned run_through(std::uint64_t* const& bits, const std::size_t& words, std::size_t w,
                              unsigned p) noexcept {
    const std::uint64_t free = ~bits[w];
    const unsigned up = static_cast<unsigned>(std::countr_one(free >> p));
    const unsigned down = p ? static_cast<unsigned>(std::countl_one(free << (64 - p))) : 0u;
    unsigned len = down + up;
    if (p + up == 64 && w + 1 < words) len += static_cast<unsigned>(std::countr_zero(bits[w + 1]));
    return len;
  }

  unsigned char* sum_ = nullptr;  // word 0's byte
  std::uint64_t snap_ = 0;        // the hint word when its byte last bounded it
};

}  // namespace alloy::detail
