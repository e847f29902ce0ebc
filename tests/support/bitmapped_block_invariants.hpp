#pragma once
// White-box invariants of the BitmappedBlock family, checked by run_differential (support/differential.hpp) after
// every operation: it finds `check_invariants(a)` by argument-dependent lookup and fails the test with the message
// it returns. These catch a broken bound the moment it appears; the differential comparison with the model only
// sees it when a later search happens to rely on it (a stale hint-word byte is such a case). One check per engine:
// check_core for the single-threaded one (detail/bitmapped_block_core.hpp states its invariants; with or without start
// bits), check_shared for SharedBitmappedBlock's (detail/shared_bitmapped_block.hpp).
//   * the bitmap: ceil(blocks / 64) words, the padding bits past the last block set;
//   * the search hint and its cache (detail/hint_cache.hpp states these): every word before the hint is full; the
//     cached word and base address follow the hint;
//   * the fresh cursor (multiblock): no block at or past it is allocated; the cache's mask covers exactly the hint
//     word's blocks below it, and its span exactly the hint word's blocks below the cursor (Multiblock::no: that
//     exist);
//   * the summary (single-threaded multiblock; detail/bitmap_summary.hpp states these): every byte bounds the longest
//     free run that starts in its word (its free tail continued into the next words' heads, capped at 64), the hint
//     word's byte as its snapshot's refresh would leave it; bytes are at most 64 and the 64 bytes after the last
//     word's are zero;
//   * SharedBitmappedBlock: the lock is free between calls.
#include <alloy/bitmapped_block.hpp>

#include <bit>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace alloy::detail {

struct BitmappedBlockInspector {
  // The longest free run that starts in word w (a run from its free tail continues into the next words), capped 64.
  static unsigned longest_from(const std::uint64_t* bits, std::size_t words, std::size_t w) {
    unsigned best = 0;
    std::uint64_t f = ~bits[w];
    while (f) {
      const unsigned s = static_cast<unsigned>(std::countr_zero(f));
      const unsigned len = static_cast<unsigned>(std::countr_one(f >> s));
      unsigned run = len;
      if (s + len == 64)  // the free tail: on into the following words
        for (std::size_t x = w + 1; x < words && run < 64; ++x) {
          const unsigned h = static_cast<unsigned>(std::countr_zero(bits[x]));
          run += h;
          if (h < 64) break;
        }
      best = std::max(best, std::min(run, 64u));
      if (s + len == 64) break;
      f &= ~bitmap::mask(s, len);
    }
    return best;
  }

  // The single-threaded engine (detail/bitmapped_block_core.hpp states its invariants), with or without start bits.
  template <class A>
  static std::string check_core(const A& a) {
    std::ostringstream err;
    const std::size_t words = a.words_, blocks = a.blocks_;
    if (words == 0 && (a.hint_.word_ != &a.hint_.bits_ || a.hint_.bits_ != bitmap::all_ones))
      err << "no blocks, but the hint word is not the object's own full word; ";
    if (words == 0) return check_words(a, err, nullptr);
    // The bitmap as the block sees it: the hint word is the cache's between calls (its bitmap word may be older).
    std::vector<std::uint64_t> logical(a.bits_, a.bits_ + words);
    if (a.hint_.start_ < words) logical[a.hint_.start_] = a.hint_.logical();
    if constexpr (A::fresh_masked) {
      if ((a.hint_.bits_ | a.hint_.fresh_mask_) != bitmap::all_ones)
        err << "the cached hint word does not show the hint word's blocks at or past the fresh cursor as taken; ";
    }
    const std::uint64_t* bits = logical.data();
    check_words(a, err, bits);
    if (a.hint_.start_ >= words) err << "start " << a.hint_.start_ << " >= words " << words << "; ";
    for (std::size_t w = 0; w < a.hint_.start_ && w < words; ++w)
      if (bits[w] != bitmap::all_ones) {
        err << "word " << w << " before the hint (" << a.hint_.start_ << ") is not full; ";
        break;
      }
    if (a.hint_.word_ != a.bits_ + a.hint_.start_) err << "the cached hint word pointer is not bits_ + start; ";
    if (a.hint_.base_ != a.payload_ + a.hint_.start_ * 64 * a.bs()) err << "the cached base does not follow the hint; ";
    std::size_t end = blocks;
    if constexpr (A::multi) end = a.fresh_;
    const std::size_t first = a.hint_.start_ * 64;
    const std::size_t want = (end <= first ? 0 : std::min<std::size_t>(end - first, 64)) * a.bs();
    if (a.hint_.span_ != want) err << "the cached span does not cover exactly the hint word's blocks below the cursor; ";
    if constexpr (A::fresh_masked) {
      if (a.hint_.fresh_mask_ != fresh_below(a.fresh_, first))
        err << "the cached fresh mask does not mask the hint word's blocks below the cursor; ";
    }
    if constexpr (A::summarized) {
      const unsigned char* sum = a.summary_.bytes();
      for (std::size_t w = 0; w < words; ++w) {
        unsigned byte = sum[w];
        if (byte > 64) err << "byte " << w << " is " << byte << "; ";
        if (w == a.hint_.start_ && (a.summary_.snapshot() & ~bits[w])) byte = 64;  // refresh raises it before any read
        const unsigned need = longest_from(bits, words, w);
        if (byte < need) {
          err << "summary byte of word " << w << " is " << unsigned{sum[w]} << " but a free run of " << need
              << " starts there; ";
          break;
        }
      }
      for (std::size_t x = words; x < words + 64; ++x)
        if (sum[x] != 0) {
          err << "summary padding byte " << x << " is not zero; ";
          break;
        }
    }
    return err.str();
  }

  // SharedBitmappedBlock's engine (detail/shared_bitmapped_block.hpp): the bitmap and the fresh cursor.
  template <class A>
  static std::string check_shared(const A& a) {
    std::ostringstream err;
    if (a.lock_.locked()) err << "the lock is held between calls; ";
    return check_words(a, err, a.words_ ? a.bits_ : nullptr);
  }

 private:
  // What every engine keeps (bits: the bitmap as the block sees it; null without blocks): the word count, the padding
  // bits, and (multiblock) no block allocated at or past the fresh cursor.
  template <class A>
  static std::string check_words(const A& a, std::ostringstream& err, const std::uint64_t* bits) {
    const std::size_t words = a.words_, blocks = a.blocks_;
    if (words != (blocks + 63) / 64) err << "words " << words << " for " << blocks << " blocks; ";
    if (words == 0 || bits == nullptr) return err.str();
    if ((bits[words - 1] & a.pad_mask()) != a.pad_mask()) err << "padding bits clear; ";
    if constexpr (A::multi) {
      const std::size_t fresh = a.fresh_;
      if (fresh > blocks) err << "fresh cursor " << fresh << " past " << blocks << " blocks; ";
      for (std::size_t w = fresh / 64; fresh < blocks && w < words; ++w) {  // word by word, the padding aside
        std::uint64_t m = w == words - 1 ? ~a.pad_mask() : bitmap::all_ones;
        if (w == fresh / 64) m &= bitmap::all_ones << (fresh % 64);
        if (bits[w] & m) {
          err << "block " << w * 64 + static_cast<unsigned>(std::countr_zero(bits[w] & m))
              << " allocated at or past the fresh cursor " << fresh << "; ";
          break;
        }
      }
    }
    return err.str();
  }
  static std::uint64_t fresh_below(std::size_t fresh, std::size_t first) {
    if (fresh <= first) return 0;
    return fresh - first >= 64 ? bitmap::all_ones : bitmap::mask(0, static_cast<unsigned>(fresh - first));
  }
};

/// Found by run_differential through argument-dependent lookup (the blocks derive from these engines).
template <std::size_t BlockSize, std::size_t Alignment, class Parent, Multiblock M, class Bookkeeping, std::size_t Maps>
std::string check_invariants(const BitmappedBlockCore<BlockSize, Alignment, Parent, M, Bookkeeping, Maps>& a) {
  return BitmappedBlockInspector::check_core(a);
}
template <std::size_t BlockSize, std::size_t Alignment, class Parent, Multiblock M, class Bookkeeping>
std::string check_invariants(const SharedBitmappedBlockCore<BlockSize, Alignment, Parent, M, Bookkeeping>& a) {
  return BitmappedBlockInspector::check_shared(a);
}

}  // namespace alloy::detail
