#pragma once
// The brute-force model of a bitmap of blocks (bit set: taken) shared by tests/bitmap_summary.cpp and
// tests/bitmap_search.cpp: the longest free run that starts in a word, and the summary invariants of
// alloy/detail/bitmap_summary.hpp's header checked against it.
#include <alloy/detail/bitmap_summary.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace alloy::test::bitmap_model {

inline bool taken(const std::vector<std::uint64_t>& bits, std::size_t b) { return (bits[b / 64] >> (b % 64)) & 1u; }

/// The longest free run that starts in word w (its free tail continued into the following words), capped at 64.
inline unsigned longest_from(const std::vector<std::uint64_t>& bits, std::size_t w) {
  unsigned best = 0, run = 0;
  for (std::size_t b = w * 64; b < bits.size() * 64 && best < 64; ++b) {
    if (taken(bits, b)) {
      if (b / 64 > w) break;  // the runs that start in w have ended
      run = 0;
    } else {
      if (run == 0 && b / 64 > w) break;  // a run that starts past w does not count
      best = std::max(best, ++run);
    }
  }
  return std::min(best, 64u);
}

/// The summary's invariants (bitmap_summary.hpp's header); empty when they hold: every byte at most 64 and at least
/// the longest run that starts in its word (the hint word's byte counts as 64 while its snapshot shows blocks freed
/// since, as refresh leaves it), and the tail bytes past the bitmap zero.
template <class Summary>
std::string check_summary(const Summary& s, const std::vector<std::uint64_t>& bits, std::size_t hint) {
  const unsigned char* sum = s.bytes();
  for (std::size_t w = 0; w < bits.size(); ++w) {
    unsigned byte = sum[w];
    if (byte > 64) return "byte " + std::to_string(w) + " above 64";
    if (w == hint && (s.snapshot() & ~bits[w])) byte = 64;
    if (byte < longest_from(bits, w))
      return "byte " + std::to_string(w) + " is " + std::to_string(sum[w]) + ", below the run of " +
             std::to_string(longest_from(bits, w)) + " that starts there";
  }
  for (std::size_t x = bits.size(); x < bits.size() + 64; ++x)
    if (sum[x] != 0) return "tail byte " + std::to_string(x) + " not zero";
  return {};
}

}  // namespace alloy::test::bitmap_model
