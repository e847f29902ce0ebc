// The summary index of BitmappedBlock's search (alloy/detail/bitmap_summary.hpp), alone: its search against a linear
// scan, its bytes against the longest free runs, and a randomized run of the protocol its owner follows (the hint
// word, the snapshot, every raise and lower), checked after every step against a brute-force model of "the longest
// free run that starts in word w" and a brute-force first fit (as foonathan/memory tests its free list alone).
#include <alloy/detail/bitmap_summary.hpp>
#include <alloy/mallocator.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "support/bitmap_model.hpp"
#include "support/test_length.hpp"

namespace {

namespace bm = alloy::detail::bitmap;
using alloy::test::bitmap_model::longest_from;
using Summary = alloy::detail::BitmapSummary<alloy::Mallocator>;
constexpr std::size_t npos = bm::npos;

// The model's first fit: the lowest run of k free blocks, or npos.
std::size_t first_fit(const std::vector<std::uint64_t>& bits, std::size_t k) {
  std::size_t run = 0;
  for (std::size_t b = 0; b < bits.size() * 64; ++b) {
    run = ((bits[b / 64] >> (b % 64)) & 1u) ? 0 : run + 1;
    if (run == k) return b + 1 - k;
  }
  return npos;
}
bool is_free(const std::vector<std::uint64_t>& bits, std::size_t i, std::size_t k) {
  for (std::size_t b = i; b < i + k; ++b)
    if ((bits[b / 64] >> (b % 64)) & 1u) return false;
  return true;
}
void set_bits(std::vector<std::uint64_t>& bits, std::size_t i, std::size_t k, bool on) {
  for (std::size_t b = i; b < i + k; ++b) {
    const std::uint64_t m = std::uint64_t{1} << (b % 64);
    bits[b / 64] = on ? bits[b / 64] | m : bits[b / 64] & ~m;
  }
}


// An owner of the summary that follows BitmappedBlock's protocol with none of its other state: a bitmap, a hint (every
// word before it is full), single blocks taken and freed in the hint word with no summary work (the fast paths),
// searches for runs of 2 to 64 through the summary, runs above 64 found by brute force (the summary is not lowered,
// as the block's claim), and frees that raise exactly what the block raises.
struct Owner {
  std::vector<std::uint64_t> bits;
  Summary s;
  std::size_t hint = 0;
  std::uint64_t pad_mask = 0;  // the last word's bits past the last block: set, as BitmappedBlock's padding

  Owner(std::size_t words, unsigned pad) : bits(words, 0) {
    if (pad) pad_mask = ~std::uint64_t{0} << (64 - pad);
    bits.back() = pad_mask;
    REQUIRE(s.init(words));
    s.snap(bits[0]);
  }
  ~Owner() { s.release(bits.size()); }
  Owner(const Owner&) = delete;
  Owner& operator=(const Owner&) = delete;

  std::size_t words() const { return bits.size(); }
  void set_hint(std::size_t h) {  // BitmappedBlockCore::set_start
    if (h == hint) return;
    hint = h;
    s.snap(bits[hint]);
  }
  void advance_hint() {
    std::size_t h = hint;
    while (h + 1 < words() && bits[h] == ~std::uint64_t{0}) ++h;
    set_hint(h);
  }
  void lower_hint(std::size_t w) {  // a block of word w was freed
    if (w < hint) {
      s.refresh(hint, bits[hint]);
      set_hint(w);
    }
  }

  std::size_t alloc1() {  // the fast path in the hint word, else the word walk: no summary work either way
    for (std::size_t w = hint; w < words(); ++w)
      if (bits[w] != ~std::uint64_t{0}) {
        const std::size_t i = w * 64 + static_cast<unsigned>(std::countr_one(bits[w]));
        set_bits(bits, i, 1, true);
        set_hint(w);
        return i;
      }
    return npos;
  }
  std::size_t alloc_small(unsigned k) {  // 2 <= k <= 64: BitmappedBlockCore::alloc_small and probe_small
    s.refresh(hint, bits[hint]);
    for (std::size_t i = hint;; ++i) {
      i = s.first_at_least(i, words(), k);
      if (i >= words()) return npos;
      const std::uint64_t w = bits[i];
      const unsigned j = k <= 8 ? bm::find_run_upto8(~w, k) : bm::find_run(~w, k);
      unsigned cross = 0;
      std::size_t idx = npos;
      if (j < 64) {
        idx = i * 64 + j;
      } else if (const unsigned tail = static_cast<unsigned>(std::countl_zero(w)); tail && i + 1 < words()) {
        cross = tail + static_cast<unsigned>(std::countr_zero(bits[i + 1]));
        if (cross >= k) idx = i * 64 + 64 - tail;
      }
      if (idx != npos) {
        set_bits(bits, idx, k, true);
        s.set_exact(i, bits[i], bits.data(), words(), hint);
        if (i == hint) advance_hint();
        return idx;
      }
      s.set(i, std::min(k - 1, std::max(cross, bm::longest_run_bound8(~w))), w, hint);
    }
  }
  std::size_t alloc_huge(std::size_t k) {  // k > 64: no summary work (a claim only lowers runs)
    const std::size_t i = first_fit(bits, k);
    if (i == npos) return npos;
    set_bits(bits, i, k, true);
    if (i / 64 <= hint && hint <= (i + k - 1) / 64) advance_hint();
    return i;
  }
  void release(std::size_t i, std::size_t k) {
    set_bits(bits, i, k, false);
    const std::size_t wf = i / 64;
    if (k == 1) {
      if (wf == hint) return;  // the fast free: the word only (the snapshot covers the byte)
      lower_hint(wf);
      s.raise_pair(wf);
    } else if (i % 64 + k <= 64) {
      lower_hint(wf);
      s.raise_one_word(bits.data(), words(), wf, static_cast<unsigned>(i % 64), hint);
    } else {
      lower_hint(wf);
      s.raise_range(bits.data(), words(), i, k, hint);
    }
  }
  void release_all() {
    std::fill(bits.begin(), bits.end(), 0);
    bits.back() = pad_mask;
    s.reset(words());
    hint = 0;
    s.snap(bits[0]);
  }
};

}  // namespace

TEST_CASE("bitmap summary: first_at_least finds the first byte of at least k, 64 bytes per step") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 2000; ++round) {
    const std::size_t n = 1 + rng() % 300;
    std::vector<unsigned char> sum(n + 64, 0);
    const unsigned top = 1 + static_cast<unsigned>(rng() % 64);  // few bytes reach k when top is small
    for (std::size_t w = 0; w < n; ++w) sum[w] = static_cast<unsigned char>(rng() % (top + 1));
    const std::size_t i = rng() % (n + 1);
    const unsigned k = 1 + static_cast<unsigned>(rng() % 64);
    std::size_t want = i;
    while (want < n && sum[want] < k) ++want;
    REQUIRE(bm::first_at_least(sum.data(), i, n, k) == want);
  }
}

TEST_CASE("bitmap summary: summary_byte bounds the runs from its word, exactly below 8") {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 20000; ++round) {
    std::vector<std::uint64_t> bits(2);
    for (auto& w : bits) {  // sparse, dense and runs of every length
      const int kind = static_cast<int>(rng() % 3);
      w = kind == 0 ? rng() : kind == 1 ? rng() | rng() | rng() : rng() & rng() & rng();
    }
    const unsigned in_word = bm::longest_run(~bits[0]);
    const unsigned cross = static_cast<unsigned>(std::countl_zero(bits[0])) +
                           (bits[0] >> 63 ? 0u : static_cast<unsigned>(std::countr_zero(bits[1])));
    const unsigned exact = std::min(64u, std::max(in_word, cross));
    const unsigned got = bm::summary_byte(bits[0], bits.data(), 0, 2);
    REQUIRE(got >= longest_from(bits, 0));
    REQUIRE(got <= 64);
    if (in_word < 8) REQUIRE(got == exact);
    else REQUIRE(got == 64);
  }
}

TEST_CASE("bitmap summary: its owner's protocol keeps every byte a bound, and the search finds the exact first fit") {
  const std::size_t steps = alloy::test::test_length(2'000'000);
  std::mt19937_64 rng(2024);
  std::size_t done = 0, found = 0, hint_frees = 0;
  for (std::uint64_t seed = 1; done < steps; ++seed) {
    rng.seed(seed);
    const std::size_t words = 1 + rng() % (seed % 4 == 0 ? 40 : 4);  // small arenas reach the word boundaries
    const unsigned pad = static_cast<unsigned>(rng() % 64);
    Owner o(words, pad);
    std::vector<std::pair<std::size_t, std::size_t>> live;
    const std::size_t len = 200 + rng() % 3000;
    for (std::size_t step = 0; step < len; ++step, ++done) {
      const unsigned r = static_cast<unsigned>(rng() % 100);
      if (r < 55 || live.empty()) {
        const unsigned sz = static_cast<unsigned>(rng() % 100);
        const std::size_t k = sz < 35 ? 1 : sz < 90 ? 2 + rng() % 7 : sz < 98 ? 9 + rng() % 56 : 65 + rng() % 100;
        const std::size_t want = first_fit(o.bits, k);
        const std::size_t got = k == 1    ? o.alloc1()
                                : k <= 64 ? o.alloc_small(static_cast<unsigned>(k))
                                          : o.alloc_huge(k);
        REQUIRE_MESSAGE(got == want, "seed " << seed << " step " << step << " k " << k);
        if (got != npos) {
          live.emplace_back(got, k);
          ++found;
        }
      } else if (r < 99) {
        const std::size_t x = rng() % live.size();
        const auto [i, k] = live[x];
        live[x] = live.back();
        live.pop_back();
        REQUIRE(!is_free(o.bits, i, 1));
        if (k == 1 && i / 64 == o.hint) ++hint_frees;
        o.release(i, k);
      } else {
        o.release_all();
        live.clear();
      }
      const std::string err = alloy::test::bitmap_model::check_summary(o.s, o.bits, o.hint);
      REQUIRE_MESSAGE(err.empty(), "seed " << seed << " step " << step << ": " << err);
      for (std::size_t w = 0; w < o.hint; ++w) REQUIRE(o.bits[w] == ~std::uint64_t{0});
    }
  }
  CHECK(found > steps / 4);
  CHECK(hint_frees > steps / 100);  // the snapshot's case was reached
}

// The case the random run reaches too rarely (a mutation that drops head_grew's refresh survives it): the hint
// word's byte stands for its snapshot, whose free tail is longer than the word's now; then the next word's head
// grows. The raise must first take the word as it is now as the snapshot, or the tail's blocks, freed again by the
// fast free (no summary work), leave the byte below the run that now crosses into the next word.
TEST_CASE("bitmap summary: a head that grows after the hint word's tail: the snapshot is refreshed first") {
  Owner o(3, 0);
  std::uint64_t* const bits = o.bits.data();
  const std::size_t words = 3;
  o.bits[0] = bm::low_mask(60);  // the hint word: a free tail of 4
  o.bits[1] = ~std::uint64_t{0};
  for (std::size_t w = 0; w < 3; ++w) o.s.set_exact(w, o.bits[w], bits, words, o.hint);
  REQUIRE(o.s.bytes()[0] == 4);
  REQUIRE(o.s.snapshot() == o.bits[0]);
  o.bits[0] = ~std::uint64_t{0};  // the fast allocate takes the tail: no summary work
  o.release(64, 64);              // word 1 freed whole: its head grew, and so did the run from word 0's tail
  REQUIRE(alloy::test::bitmap_model::check_summary(o.s, o.bits, o.hint).empty());
  o.bits[0] = bm::low_mask(60);  // the fast free gives the tail back: no summary work
  const std::string err = alloy::test::bitmap_model::check_summary(o.s, o.bits, o.hint);
  CHECK_MESSAGE(err.empty(), err);
  o.s.refresh(o.hint, o.bits[0]);
  CHECK(o.s.bytes()[0] == 64);
}
