#pragma once
/// \file benchmarks/w3_floor.hpp
/// W3's design floor: exact first fit over 64-byte blocks with BitmappedBlock's search structure (one summary byte
/// per bitmap word, an upper bound of the longest free run starting there; 64 bytes compared per SSE2 step) and
/// nothing else: no fresh cursor, no hint-word fast paths or snapshot, no ownership checks, no size dispatch, no
/// request above 8 blocks. It hands out the same offsets as BitmappedBlock<64, 64, Mallocator> on W3 (tests/
/// w3_floor.cpp runs both in lockstep). What BitmappedBlock costs beyond this row is its extras; what this row costs
/// beyond glibc malloc is the design's own (docs/design_notes.md, "The bounds that show W3's limit").
/// No Google Benchmark here: the test includes this header too.
#include <alloy/block.hpp>
#include <alloy/detail/bitmap.hpp>
#include <alloy/detail/bitmap_summary.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <utility>


namespace alloy_bench {

namespace bitmap = alloy::detail::bitmap;

class SummaryFirstFitFloor {
 public:
  static constexpr std::size_t alignment = 64;

  /// capacity / 64 blocks (rounded down to whole words of 64 blocks), from malloc as BitmappedBlock<64, 64,
  /// Mallocator>'s payload is; the bitmap and the summary beside them.
  explicit SummaryFirstFitFloor(std::size_t capacity) noexcept : words_(capacity / (64 * 64)) {
    payload_ = static_cast<std::byte*>(std::aligned_alloc(64, words_ * 64 * 64 + 64));
    bits_ = static_cast<std::uint64_t*>(std::calloc(words_ + 1, sizeof(std::uint64_t)));
    sum_ = static_cast<unsigned char*>(std::calloc(words_ + 64, 1));  // 64 zero bytes after the last word's
    if (!payload_ || !bits_ || !sum_) std::abort();
    std::memset(sum_, 64, words_);
  }
  SummaryFirstFitFloor(SummaryFirstFitFloor&& o) noexcept
      : bits_(std::exchange(o.bits_, nullptr)), sum_(std::exchange(o.sum_, nullptr)),
        payload_(std::exchange(o.payload_, nullptr)), words_(std::exchange(o.words_, 0)), start_(o.start_) {}
  SummaryFirstFitFloor(const SummaryFirstFitFloor&) = delete;
  SummaryFirstFitFloor& operator=(const SummaryFirstFitFloor&) = delete;
  SummaryFirstFitFloor& operator=(SummaryFirstFitFloor&&) = delete;
  ~SummaryFirstFitFloor() {
    std::free(payload_);
    std::free(bits_);
    std::free(sum_);
  }

  [[nodiscard]] std::byte* payload() const noexcept { return payload_; }

  /// 1 to 512 bytes (1 to 8 blocks): the lowest-addressed run of ceil(n / 64) free blocks.
  alloy::Block allocate(std::size_t n) noexcept {
    if (n - 1 >= 512) return {};
    const unsigned k = static_cast<unsigned>((n + 63) >> 6);
    const std::size_t words = words_;  // a local: the word stores below may alias the member
    for (std::size_t i = start_;; ++i) {
      i = bitmap::first_at_least(sum_, i, words, k);
      if (i >= words) return {};
      const std::uint64_t w = bits_[i];
      const unsigned j = k == 1 ? static_cast<unsigned>(std::countr_one(w)) : bitmap::find_run_upto8(~w, k);
      std::size_t idx;
      if (j < 64) {
        bits_[i] = w | (bitmap::low_mask(k) << j);
        idx = i * 64 + j;
      } else {  // the free tail of word i and the free head of word i + 1, or nothing: lower the byte below k
        const unsigned tail = static_cast<unsigned>(std::countl_zero(w));
        const unsigned cross =
            tail && i + 1 < words ? tail + static_cast<unsigned>(std::countr_zero(bits_[i + 1])) : 0u;
        if (cross < k) {
          sum_[i] = static_cast<unsigned char>(std::min(k - 1, std::max(cross, bitmap::longest_run_bound8(~w))));
          continue;
        }
        bits_[i] = w | bitmap::mask(64 - tail, tail);
        bits_[i + 1] |= bitmap::mask(0, k - tail);
        idx = i * 64 + 64 - tail;
      }
      after_take(i, words);
      return {payload_ + idx * 64, n};
    }
  }

  bool deallocate(alloy::Block b) noexcept {
    const std::size_t off = static_cast<std::size_t>(static_cast<std::byte*>(b.ptr) - payload_), i = off >> 6;
    const std::size_t k = ((off + b.size + 63) >> 6) - i, wf = i / 64;
    const unsigned p = static_cast<unsigned>(i % 64);
    if (p + k <= 64) [[likely]] {  // raise the byte of the run that grew to its exact length (and the tail before)
      const std::uint64_t nw = bits_[wf] &= ~(bitmap::low_mask(static_cast<unsigned>(k)) << p);
      const unsigned down = p + static_cast<unsigned>(std::countl_zero(nw & ((std::uint64_t{1} << p) - 1))) - 64;
      const std::uint64_t hi = nw >> p;
      const unsigned up = hi ? static_cast<unsigned>(std::countr_zero(hi)) : 64 - p;
      unsigned len = down + up;
      if (p + up == 64 && wf + 1 < words_) len += static_cast<unsigned>(std::countr_zero(bits_[wf + 1]));
      raise(wf, len);
      if (down == p && wf > 0)
        if (const unsigned t = static_cast<unsigned>(std::countl_zero(bits_[wf - 1]))) raise(wf - 1, t + len);
    } else {  // across two words: upper bounds
      bits_[wf] &= ~(bitmap::all_ones << p);
      bits_[wf + 1] &= ~bitmap::low_mask(static_cast<unsigned>(p + k - 64));
      sum_[wf] = sum_[wf + 1] = 64;
      if (wf > 0) sum_[wf - 1] = 64;
    }
    if (wf < start_) start_ = wf;
    return true;
  }

  /// The state, for tests: one word per 64 blocks, one summary byte per word.
  [[nodiscard]] std::span<const std::uint64_t> bitmap() const noexcept { return {bits_, words_}; }
  [[nodiscard]] std::span<const unsigned char> summary() const noexcept { return {sum_, words_}; }

 protected:
  // After blocks were taken in word i: its exact byte, and the hint past the full words.
  void after_take(std::size_t i, std::size_t words) noexcept {
    sum_[i] = static_cast<unsigned char>(bitmap::summary_byte(bits_[i], bits_, i, words));
    if (i == start_)
      while (start_ + 1 < words && bits_[start_] == bitmap::all_ones) ++start_;
  }
  void raise(std::size_t w, unsigned v) noexcept {
    sum_[w] = static_cast<unsigned char>(std::max<unsigned>(sum_[w], std::min(v, 64u)));
  }
  std::uint64_t* bits_ = nullptr;
  unsigned char* sum_ = nullptr;
  std::byte* payload_ = nullptr;
  std::size_t words_ = 0;
  std::size_t start_ = 0;  // every word before it is full
};

/// W3's bounds: the floor with every first fit given in advance (`fits`: the block index of each allocation in order,
/// `no_fit` for a failure, as the floor answered them on the same W3 sequence), so that neither the summary search
/// nor the in-word run finder runs. `Upkeep::summary` keeps the bitmap, the summary bytes and the hint exactly as the
/// floor does (tests/w3_floor.cpp compares the state in lockstep); `Upkeep::bits` keeps the bitmap alone. What the
/// floor costs beyond the first is its search; what the first costs beyond the second is the summary's upkeep; no
/// allocator that keeps such a summary can be faster than the first (docs/design_notes.md, "The bounds that show
/// W3's limit").
enum class Upkeep { summary, bits };
template <Upkeep U>
class GivenFitsBound : public SummaryFirstFitFloor {
 public:
  static constexpr std::uint32_t no_fit = UINT32_MAX;
  GivenFitsBound(std::size_t capacity, const std::uint32_t* fits) noexcept
      : SummaryFirstFitFloor(capacity), fit_(fits) {}

  alloy::Block allocate(std::size_t n) noexcept {
    const std::uint32_t idx = *fit_++;
    if (idx == no_fit) return {};
    const unsigned k = static_cast<unsigned>((n + 63) >> 6);
    const std::size_t i = idx / 64;
    const unsigned j = idx % 64;
    if (j + k <= 64) {
      bits_[i] |= bitmap::low_mask(k) << j;
    } else {
      bits_[i] |= bitmap::mask(j, 64 - j);
      bits_[i + 1] |= bitmap::mask(0, j + k - 64);
    }
    if constexpr (U == Upkeep::summary) after_take(i, words_);
    return {payload_ + std::size_t{idx} * 64, n};
  }
  bool deallocate(alloy::Block b) noexcept {
    if constexpr (U == Upkeep::summary) {
      return SummaryFirstFitFloor::deallocate(b);
    } else {
      const std::size_t off = static_cast<std::size_t>(static_cast<std::byte*>(b.ptr) - payload_), i = off >> 6;
      const std::size_t k = ((off + b.size + 63) >> 6) - i, wf = i / 64;
      const unsigned p = static_cast<unsigned>(i % 64);
      if (p + k <= 64) {
        bits_[wf] &= ~(bitmap::low_mask(static_cast<unsigned>(k)) << p);
      } else {
        bits_[wf] &= ~(bitmap::all_ones << p);
        bits_[wf + 1] &= ~bitmap::low_mask(static_cast<unsigned>(p + k - 64));
      }
      return true;
    }
  }

 private:
  const std::uint32_t* fit_;
};

}  // namespace alloy_bench
