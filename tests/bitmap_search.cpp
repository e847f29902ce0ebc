// BitmappedBlock's multiblock search (alloy/detail/bitmap_search.hpp), alone: every search against a brute-force
// first fit on random bitmaps (sparse, dense, runs of every length, padding past the last block), word by word, with
// atomic loads, and through a summary whose bytes are random bounds; the summary stays a bound after each search, and
// take_small takes exactly the first run of its word or lowers its byte to a bound below k.
#include <alloy/detail/bitmap_search.hpp>
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
using alloy::test::bitmap_model::taken;
using alloy::detail::NoSummary;
using Summary = alloy::detail::BitmapSummary<alloy::Mallocator>;
constexpr std::size_t npos = bm::npos;
constexpr std::uint64_t ones = ~std::uint64_t{0};

// The model: the lowest block b >= 64 from with [b, b + k) free and inside the bitmap, or npos.
std::size_t first_fit(const std::vector<std::uint64_t>& bits, std::size_t from, std::size_t k) {
  std::size_t run = 0;
  for (std::size_t b = from * 64; b < bits.size() * 64; ++b) {
    run = taken(bits, b) ? 0 : run + 1;
    if (run == k) return b + 1 - k;
  }
  return npos;
}

std::uint64_t random_word(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0:
      return rng();  // sparse runs
    case 1:
      return rng() | rng() | rng();  // dense
    case 2:
      return rng() & rng() & rng();  // long runs
    case 3:
      return 0;  // all free
    case 4:
      return ones;  // full
    default: {      // one free run of any length at any place
      const unsigned lo = static_cast<unsigned>(rng() % 64), n = 1 + static_cast<unsigned>(rng() % (64 - lo));
      return ~bm::mask(lo, n);
    }
  }
}
std::vector<std::uint64_t> random_bitmap(std::mt19937_64& rng) {
  std::vector<std::uint64_t> bits(1 + rng() % (rng() % 4 == 0 ? 30 : 5));
  for (auto& w : bits) w = random_word(rng);
  if (const unsigned pad = static_cast<unsigned>(rng() % 64)) bits.back() |= ones << (64 - pad);
  return bits;
}
std::size_t random_k(std::mt19937_64& rng) {
  const unsigned r = static_cast<unsigned>(rng() % 10);
  return r < 2 ? 1 : r < 6 ? 2 + rng() % 7 : r < 8 ? 9 + rng() % 56 : 65 + rng() % 200;
}


// A summary of bits whose bytes are random bounds: each from the exact longest run up to 64.
struct RandomSummary {
  Summary s;
  std::size_t words;
  RandomSummary(const std::vector<std::uint64_t>& bits, std::size_t hint, std::mt19937_64& rng) : words(bits.size()) {
    REQUIRE(s.init(words));
    for (std::size_t w = 0; w < words; ++w) {
      const unsigned need = longest_from(bits, w);
      s.set(w, rng() % 2 ? need : need + static_cast<unsigned>(rng() % (65 - need)), bits[w], hint);
    }
    s.snap(bits[hint]);
  }
  ~RandomSummary() { s.release(words); }
  RandomSummary(const RandomSummary&) = delete;
  RandomSummary& operator=(const RandomSummary&) = delete;
};

}  // namespace

TEST_CASE("bitmap search: every search finds the brute-force first fit, word by word and with atomic loads") {
  std::mt19937_64 rng(3);
  const std::size_t rounds = alloy::test::test_length(600'000);
  std::size_t found = 0;
  for (std::size_t round = 0; round < rounds; ++round) {
    const std::vector<std::uint64_t> bits = random_bitmap(rng);
    const std::size_t from = rng() % (bits.size() + 1), k = random_k(rng);
    const std::size_t want = first_fit(bits, from, k);
    NoSummary none;
    const std::size_t got = bm::find_run<false>(bits.data(), bits.size(), from, k, none, 0);
    REQUIRE_MESSAGE(got == want, "round " << round << " from " << from << " k " << k);
    REQUIRE(bm::find_run<true>(bits.data(), bits.size(), from, k, none, 0) == want);
    if (got != npos) ++found;
  }
  CHECK(found > rounds / 4);
  CHECK(found < rounds - rounds / 8);  // and some searches fail
}

TEST_CASE("bitmap search: through a summary of random bounds, the same first fit, and the bytes stay bounds") {
  std::mt19937_64 rng(5);
  const std::size_t rounds = alloy::test::test_length(300'000);
  for (std::size_t round = 0; round < rounds; ++round) {
    const std::vector<std::uint64_t> bits = random_bitmap(rng);
    const std::size_t hint = rng() % bits.size();
    RandomSummary rs(bits, hint, rng);
    // Several searches over the same bitmap: the bytes the first ones lower are what the later ones skip by.
    for (int q = 0; q < 4; ++q) {
      const std::size_t from = rng() % (bits.size() + 1), k = random_k(rng);
      const std::size_t got = bm::find_run<false>(bits.data(), bits.size(), from, k, rs.s, hint);
      REQUIRE_MESSAGE(got == first_fit(bits, from, k), "round " << round << " from " << from << " k " << k);
      const std::string err = alloy::test::bitmap_model::check_summary(rs.s, bits, hint);
      REQUIRE_MESSAGE(err.empty(), "round " << round << ": " << err);
    }
  }
}

TEST_CASE("bitmap search: a word where no run of k starts gets the exact bound below k") {
  std::mt19937_64 rng(9);
  for (int round = 0; round < 20000; ++round) {
    const std::vector<std::uint64_t> bits = random_bitmap(rng);
    const std::size_t hint = rng() % bits.size();
    Summary s;
    REQUIRE(s.init(bits.size()));  // every byte 64: every word is searched
    s.snap(bits[hint]);
    const unsigned k = 2 + static_cast<unsigned>(rng() % 63);
    const std::size_t got = bm::find_small<false>(bits.data(), bits.size(), 0, k, s, hint);
    const std::size_t last = got == npos ? bits.size() : got / 64;  // the words searched in vain
    for (std::size_t w = 0; w < last; ++w) {
      REQUIRE(s.bytes()[w] == longest_from(bits, w));
      REQUIRE(s.bytes()[w] < k);
    }
    if (hint < last) CHECK(s.snapshot() == bits[hint]);
    s.release(bits.size());
  }
}

TEST_CASE("bitmap search: range_free against the bits") {
  std::mt19937_64 rng(13);
  for (int round = 0; round < 50000; ++round) {
    const std::vector<std::uint64_t> bits = random_bitmap(rng);
    const std::size_t n = bits.size() * 64, i = rng() % n, k = 1 + rng() % (n - i);
    bool want = true;
    for (std::size_t b = i; b < i + k; ++b) want = want && !taken(bits, b);
    REQUIRE(bm::range_free<false>(bits.data(), i, k) == want);
    REQUIRE(bm::range_free<true>(bits.data(), i, k) == want);
  }
}

TEST_CASE("bitmap search: take_small takes the first run that starts in its word, or lowers the byte below k") {
  std::mt19937_64 rng(17);
  const std::size_t rounds = alloy::test::test_length(600'000);
  std::size_t taken_runs = 0, lowered = 0;
  for (std::size_t round = 0; round < rounds; ++round) {
    std::vector<std::uint64_t> bits = random_bitmap(rng);
    const std::size_t words = bits.size(), hint = rng() % words, i = rng() % words;
    const unsigned k = 2 + static_cast<unsigned>(rng() % 63);
    RandomSummary rs(bits, hint, rng);
    // The model: the lowest b in word i with [b, b + k) free and inside the bitmap.
    std::size_t want = npos;
    for (std::size_t b = i * 64; b < i * 64 + 64 && want == npos; ++b)
      if (b + k <= words * 64) {
        bool free = true;
        for (std::size_t x = b; x < b + k && free; ++x) free = !taken(bits, x);
        if (free) want = b;
      }
    const std::vector<std::uint64_t> before = bits;
    std::uint64_t* const data = bits.data();
    const std::size_t got = bm::take_small(data, words, rs.s, hint, i, k);
    REQUIRE_MESSAGE(got == want, "round " << round << " word " << i << " k " << k);
    std::vector<std::uint64_t> after = before;  // exactly the run's bits are set now
    for (std::size_t b = got; got != npos && b < got + k; ++b) after[b / 64] |= std::uint64_t{1} << (b % 64);
    REQUIRE(bits == after);
    const unsigned byte = rs.s.bytes()[i], need = longest_from(bits, i);
    REQUIRE(byte >= need);
    if (got != npos) {
      ++taken_runs;
      if (byte < 8) CHECK(byte == need);  // exact below 8
    } else {
      ++lowered;
      CHECK(byte < k);
      if (byte < 8) CHECK(byte == need);
    }
    if (i == hint) CHECK(rs.s.snapshot() == bits[i]);
    const std::string err = alloy::test::bitmap_model::check_summary(rs.s, bits, hint);
    REQUIRE_MESSAGE(err.empty(), "round " << round << ": " << err);
  }
  CHECK(taken_runs > rounds / 10);
  CHECK(lowered > rounds / 10);
}
