// The single-threaded BitmappedBlock's hint-word cache (alloy/detail/hint_cache.hpp), alone: an owner that follows
// BitmappedBlock's protocol over a plain bitmap (single blocks taken and freed in the cached word only, every other
// change inside flush/load with the hint moved anywhere, the fresh cursor raised inside and outside them), checked
// after every step against a model bitmap: the rule (the cached word is the true hint word, every other bitmap word
// is current), word_now, the addresses, the span and the mask; with and without the fresh mask.
#include <alloy/detail/hint_cache.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "support/test_length.hpp"

namespace {

namespace bm = alloy::detail::bitmap;
constexpr std::uint64_t ones = ~std::uint64_t{0};
constexpr std::size_t bs = 16;

template <bool FreshMasked>
struct Owner {
  std::size_t blocks, words;
  std::vector<std::uint64_t> bits, model;  // the bitmap the cache fronts, and the truth
  std::vector<std::byte> payload;
  std::size_t end;  // the fresh cursor (FreshMasked), or the block count
  alloy::detail::HintCache<FreshMasked> c;

  explicit Owner(std::size_t n)
      : blocks(n),
        words((n + 63) / 64),
        bits(words, 0),
        model(words, 0),
        payload(n * bs + 1),
        end(FreshMasked ? 0 : n) {
    if (n % 64) bits.back() = model.back() = ones << (n % 64);  // the padding past the last block: taken
    sync();
    c.load();
  }
  std::uint64_t* data() { return words ? bits.data() : nullptr; }
  void sync() { c.sync(data(), words, payload.data(), bs, end); }
  void raise_end(std::size_t v) {  // BitmappedBlockCore::set_fresh
    if (!FreshMasked || v <= end) return;
    if constexpr (FreshMasked) {
      const std::uint64_t old = c.fresh_mask_;
      end = v;
      sync();
      c.end_raised(old);
    }
  }
  bool taken(std::size_t b) const { return (model[b / 64] >> (b % 64)) & 1u; }

  // The fast allocate: the lowest free bit of the cached word, nothing else touched.
  void fast_allocate() {
    const std::uint64_t free = ~c.bits_;
    if (!free) return;
    const std::size_t j = static_cast<std::size_t>(std::countr_zero(free)), b = c.start_ * 64 + j;
    REQUIRE(b < end);  // the mask keeps it below the cursor
    REQUIRE(!taken(b));
    // First fit in the word: every block below it taken.
    for (std::size_t x = c.start_ * 64; x < b; ++x) REQUIRE(taken(x));
    c.bits_ |= std::uint64_t{1} << j;
    model[b / 64] |= std::uint64_t{1} << (b % 64);
  }
  // The fast free: a block at an offset from base_ below span_, its bit cleared in the cached word only.
  void fast_free(std::mt19937_64& rng) {
    if (c.span_ == 0) return;
    const std::size_t j = rng() % (c.span_ / bs), b = c.start_ * 64 + j;
    REQUIRE(c.base_ + j * bs == payload.data() + b * bs);
    REQUIRE(b < end);
    REQUIRE(b < blocks);
    if (!taken(b)) return;
    c.bits_ &= ~(std::uint64_t{1} << j);
    model[b / 64] &= ~(std::uint64_t{1} << (b % 64));
  }
  // Any other path: flush, work on the plain bitmap, load.
  void slow(std::mt19937_64& rng) {
    c.flush();
    for (std::size_t i = 0; i < words; ++i) REQUIRE(bits[i] == model[i]);  // the bitmap is the truth inside
    for (int n = static_cast<int>(rng() % 4); n-- > 0;) {
      const std::size_t b = rng() % blocks;
      const std::uint64_t bit = std::uint64_t{1} << (b % 64);
      if (taken(b)) {
        bits[b / 64] &= ~bit;
      } else {
        bits[b / 64] |= bit;
        raise_end(b + 1);  // blocks at or past the cursor were never allocated
      }
      model[b / 64] ^= bit;
    }
    if (rng() % 2) {  // the hint moves
      c.start_ = rng() % words;
      sync();
    }
    c.load();
  }
  // Outside flush/load, a claim in a word past the hint raises the cursor (alloc_small's probe of a later word).
  void claim_past_hint(std::mt19937_64& rng) {
    if (!FreshMasked || c.start_ + 1 >= words) return;
    const std::size_t w = c.start_ + 1 + rng() % (words - c.start_ - 1), b = w * 64 + rng() % 64;
    if (b >= blocks || taken(b)) return;
    bits[w] |= std::uint64_t{1} << (b % 64);
    model[w] |= std::uint64_t{1} << (b % 64);
    raise_end(b + 1);
  }

  // The invariants of hint_cache.hpp's header; empty when they hold.
  std::string check() const {
    if (c.start_ >= words) return "hint past the bitmap";
    if (c.word_ != bits.data() + c.start_) return "word_ is not bits + start_";
    if (c.base_ != payload.data() + c.start_ * 64 * bs) return "base_ does not follow start_";
    const std::size_t below = end <= c.start_ * 64 ? 0 : std::min<std::size_t>(end - c.start_ * 64, 64);
    if (c.span_ != below * bs) return "span_ is not the hint word's blocks below end";
    if constexpr (FreshMasked) {
      if (c.fresh_mask_ != (below ? bm::mask(0, static_cast<unsigned>(below)) : 0)) return "wrong fresh mask";
      if ((c.bits_ | c.fresh_mask_) != ones) return "the blocks at or past end do not show as taken";
    }
    if (c.logical() != model[c.start_]) return "logical() is not the hint word";
    std::uint64_t* const p = const_cast<std::uint64_t*>(bits.data());  // word_now takes the owner's member
    for (std::size_t i = 0; i < words; ++i) {
      if (c.word_now(p, i) != model[i]) return "word_now(" + std::to_string(i) + ") is not the word";
      if (i != c.start_ && bits[i] != model[i]) return "bitmap word " + std::to_string(i) + " is stale";
    }
    for (std::size_t b = end; b < blocks; ++b)
      if (taken(b)) return "block " + std::to_string(b) + " allocated at or past end";
    return {};
  }
};

template <bool FreshMasked>
void run(std::uint64_t seed0, std::size_t steps) {
  std::mt19937_64 rng;
  std::size_t done = 0, fast = 0;
  for (std::uint64_t seed = seed0; done < steps; ++seed) {
    rng.seed(seed);
    Owner<FreshMasked> o(1 + rng() % (seed % 3 == 0 ? 300 : 70));
    REQUIRE(o.check().empty());
    for (int step = 0; step < 400; ++step, ++done) {
      const unsigned r = static_cast<unsigned>(rng() % 100);
      const std::uint64_t before = o.c.bits_;
      if (r < 40) o.fast_allocate();
      else if (r < 70) o.fast_free(rng);
      else if (r < 92) o.slow(rng);
      else o.claim_past_hint(rng);
      if (r < 70 && o.c.bits_ != before) ++fast;
      const std::string err = o.check();
      REQUIRE_MESSAGE(err.empty(), "seed " << seed << " step " << step << ": " << err);
    }
  }
  CHECK(fast > steps / 10);
}

}  // namespace

TEST_CASE("hint cache: the cached word is the true hint word, the rest of the bitmap is current (fresh mask)") {
  run<true>(1, alloy::test::test_length(2'000'000));
}

TEST_CASE("hint cache: the same without a fresh mask (Multiblock::no)") {
  run<false>(100'001, alloy::test::test_length(1'000'000));
}

TEST_CASE("hint cache: without blocks the cached word is its own, full, and flush writes nowhere else") {
  alloy::detail::HintCache<true> c;
  CHECK(c.word_ == &c.bits_);
  CHECK(c.bits_ == ones);
  c.sync(nullptr, 0, nullptr, bs, 0);
  CHECK(c.word_ == &c.bits_);
  CHECK(c.span_ == 0);
  c.flush();
  c.load();
  CHECK(c.bits_ == ones);
  CHECK(c.logical() == ones);
  static_assert(sizeof(alloy::detail::HintCache<false>) == 5 * sizeof(std::uint64_t));  // no mask without a cursor
}
