// ctest-labels: tsan
// SharedBitmappedBlock's concurrent bitmap (alloy/detail/atomic_bitmap.hpp), alone: each operation against a plain
// model on one thread, then threads claiming single bits lock-free and runs under the lock at once, each claimed bit
// stamped with its owner (a bit owned twice fails), also under ThreadSanitizer.
#include <alloy/detail/atomic_bitmap.hpp>

#include <atomic>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "support/test_length.hpp"

namespace {

namespace ab = alloy::detail::atomic_bitmap;
using alloy::detail::SpinLock;
constexpr std::size_t npos = ab::npos;

bool test_bit(const std::vector<std::uint64_t>& w, std::size_t i) { return (w[i / 64] >> (i % 64)) & 1u; }

// The model of claim_one on one thread: the first free bit from word `from` on, wrapping once.
std::size_t first_free_from(const std::vector<std::uint64_t>& w, std::size_t from) {
  for (std::size_t c = 0; c < w.size(); ++c) {
    const std::size_t i = (from + c) % w.size();
    if (w[i] != ~std::uint64_t{0}) return i * 64 + static_cast<unsigned>(std::countr_one(w[i]));
  }
  return npos;
}

}  // namespace

TEST_CASE("atomic bitmap: one thread, every operation against a plain model") {
  std::mt19937_64 rng(5);
  const std::size_t steps = alloy::test::test_length(400'000);
  for (std::size_t done = 0; done < steps;) {
    const std::size_t n = 1 + rng() % 20;
    std::vector<std::uint64_t> bits(n, 0), model(n, 0);
    for (int step = 0; step < 2000; ++step, ++done) {
      const unsigned r = static_cast<unsigned>(rng() % 4);
      if (r == 0) {  // claim_one from a chosen start word: first fit from there, and the thread stays on its word
        ab::ThreadHint& h = ab::thread_hint();
        h.owner = &bits;
        h.word = rng() % n;
        const std::size_t want = first_free_from(model, h.word);
        const std::size_t got = ab::claim_one(bits.data(), n, &bits);
        REQUIRE(got == want);
        if (got != npos) {
          model[got / 64] |= std::uint64_t{1} << (got % 64);
          CHECK(h.word == got / 64);
        }
      } else if (r == 1) {  // claim_range: all or nothing
        const std::size_t i = rng() % (64 * n), k = 1 + rng() % std::min<std::size_t>(64 * n - i, 150);
        bool free = true;
        for (std::size_t b = i; b < i + k; ++b) free = free && !test_bit(model, b);
        REQUIRE(ab::claim_range(bits.data(), i, k) == free);
        if (free)
          for (std::size_t b = i; b < i + k; ++b) model[b / 64] |= std::uint64_t{1} << (b % 64);
      } else if (r == 2) {  // release_one of a set bit (a clear one trips ALLOY_ASSERT: assertions are on here)
        const std::size_t i = rng() % (64 * n);
        if (test_bit(model, i)) {
          REQUIRE(ab::release_one(bits.data(), i));
          model[i / 64] &= ~(std::uint64_t{1} << (i % 64));
        }
      } else {  // release_range of a run that is all set
        const std::size_t i = rng() % (64 * n);
        std::size_t k = 0;
        while (i + k < 64 * n && k < 150 && test_bit(model, i + k)) ++k;
        if (k) {
          ab::release_range(bits.data(), i, k);
          for (std::size_t b = i; b < i + k; ++b) model[b / 64] &= ~(std::uint64_t{1} << (b % 64));
        }
      }
      REQUIRE(bits == model);
      for (std::size_t w = 0; w < n; ++w) REQUIRE(ab::load(bits.data(), w) == model[w]);
    }
  }
}

TEST_CASE("atomic bitmap: a thread's first start word follows its slot; a full bitmap gives npos") {
  std::vector<std::uint64_t> bits(64, ~std::uint64_t{0});
  ab::ThreadHint& h = ab::thread_hint();
  h.owner = nullptr;
  CHECK(ab::claim_one(bits.data(), bits.size(), &bits) == npos);
  CHECK(h.owner == &bits);
  bits.assign(64, 0);
  h.owner = nullptr;
  const std::size_t stride = 8;  // max(8, (64 / 16) & ~7)
  CHECK(ab::claim_one(bits.data(), bits.size(), &bits) == (ab::thread_slot() * stride) % 64 * 64);
}

TEST_CASE("atomic bitmap: raise_to only moves up; the spin lock") {
  std::size_t v = 10;
  ab::raise_to(v, 5);
  CHECK(ab::load(v) == 10);
  ab::raise_to(v, 12);
  CHECK(ab::load(v) == 12);
  SpinLock l;
  CHECK(!l.locked());
  l.lock();
  CHECK(l.locked());
  l.unlock();
  CHECK(!l.locked());
}

TEST_CASE("atomic bitmap: threads claiming single bits lock-free and runs under the lock never share a bit") {
  constexpr std::size_t words = 4, nbits = words * 64;
  std::vector<std::uint64_t> bits(words, 0);
  std::vector<std::atomic<int>> owner(nbits);
  SpinLock lock;
  std::atomic<bool> bad{false};
  const std::size_t iters = alloy::test::test_length(200'000);
  auto worker = [&](int id) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(id) * 7919);
    std::vector<std::pair<std::size_t, std::size_t>> mine;
    auto stamp = [&](std::size_t i, std::size_t k) {
      for (std::size_t b = i; b < i + k; ++b)
        if (owner[b].exchange(id, std::memory_order_relaxed) != 0) bad = true;
      mine.emplace_back(i, k);
    };
    for (std::size_t it = 0; it < iters; ++it) {
      if (mine.size() < 6 && rng() % 2) {
        if (rng() % 4) {
          const std::size_t i = ab::claim_one(bits.data(), words, &bits);
          if (i != npos) stamp(i, 1);
        } else {  // a run of 2 to 8 under the lock: first fit by loads, claimed by CAS, searched again on a loss
          const std::size_t k = 2 + rng() % 7;
          lock.lock();
          for (std::size_t i = 0; i + k <= nbits; ++i) {
            bool free = true;
            for (std::size_t b = i; b < i + k && free; ++b) free = !((ab::load(bits.data(), b / 64) >> (b % 64)) & 1u);
            if (free && ab::claim_range(bits.data(), i, k)) {
              stamp(i, k);
              break;
            }
          }
          lock.unlock();
        }
      } else if (!mine.empty()) {
        const auto [i, k] = mine.back();
        mine.pop_back();
        for (std::size_t b = i; b < i + k; ++b)
          if (owner[b].exchange(0, std::memory_order_relaxed) != id) bad = true;
        if (k == 1) {
          if (!ab::release_one(bits.data(), i)) bad = true;
        } else {
          ab::release_range(bits.data(), i, k);
        }
      }
    }
    for (const auto& [i, k] : mine) {
      for (std::size_t b = i; b < i + k; ++b) owner[b].store(0, std::memory_order_relaxed);
      ab::release_range(bits.data(), i, k);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t <= 4; ++t) threads.emplace_back(worker, t);
  for (auto& t : threads) t.join();
  CHECK(!bad);
  for (std::size_t w = 0; w < words; ++w) CHECK(bits[w] == 0);
}
