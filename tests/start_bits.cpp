// The start bits of BitmappedBlockWithInternalPointers (alloy/detail/start_bits.hpp), alone: random allocations,
// frees, expands, shrinks and aligned allocations (whose lead blocks are freed with their start bit left set) over a
// plain control bitmap, with the upkeep the block does; after every step, every live block must resolve to its
// allocation and every range of live blocks must be "one whole allocation" exactly when the model says so.
#include <alloy/detail/start_bits.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "support/test_length.hpp"

namespace {

namespace sb = alloy::detail::start_bits;
namespace bm = alloy::detail::bitmap;
constexpr std::size_t npos = bm::npos;

struct Heap {
  std::size_t blocks;
  std::vector<std::uint64_t> ctl, st;       // control bits (set = allocated, the padding set) and start bits
  std::map<std::size_t, std::size_t> live;  // the model: first block -> block count

  explicit Heap(std::size_t n) : blocks(n), ctl((n + 63) / 64, 0), st((n + 63) / 64, 0) {
    if (n % 64) ctl.back() = ~std::uint64_t{0} << (n % 64);
  }
  bool taken(std::size_t b) const { return bm::test(ctl.data(), b); }
  bool all_free(std::size_t i, std::size_t k) const {
    if (i + k > blocks) return false;
    for (std::size_t b = i; b < i + k; ++b)
      if (taken(b)) return false;
    return true;
  }
  std::size_t first_fit(std::size_t k) const {
    for (std::size_t i = 0; i + k <= blocks; ++i)
      if (all_free(i, k)) return i;
    return npos;
  }
  std::uint64_t word(std::size_t wi) const { return ctl[wi]; }

  bool allocate(std::size_t k, std::size_t lead) {  // lead > 0: an aligned allocation that gives back its lead
    const std::size_t i = first_fit(k + lead);
    if (i == npos) return false;
    bm::set_range(ctl.data(), i, k + lead);
    sb::mark(st.data(), i, k + lead);
    if (lead) {
      bm::clear_range(ctl.data(), i, lead);  // its start bit stays set: a free block's bit means nothing
      sb::mark(st.data(), i + lead, k);
    }
    live[i + lead] = k;
    return true;
  }
  void free(std::size_t first) {
    bm::clear_range(ctl.data(), first, live.at(first));
    live.erase(first);
  }
  bool expand(std::size_t first, std::size_t d) {
    std::size_t& k = live.at(first);
    if (!all_free(first + k, d)) return false;
    bm::set_range(ctl.data(), first + k, d);
    sb::clear(st.data(), first + k, d);
    k += d;
    return true;
  }
  void shrink(std::size_t first, std::size_t keep) {  // 1 <= keep < k: the tail is freed, no start-bit upkeep
    std::size_t& k = live.at(first);
    bm::clear_range(ctl.data(), first + keep, k - keep);
    k = keep;
  }

  void check() const {
    const auto w = [this](std::size_t wi) { return word(wi); };
    for (const auto& [first, k] : live) {
      REQUIRE(sb::is_whole(st.data(), blocks, first, k, w));
      if (k > 1) {
        REQUIRE_FALSE(sb::is_whole(st.data(), blocks, first, k - 1, w));      // a smaller size
        REQUIRE_FALSE(sb::is_whole(st.data(), blocks, first + 1, k - 1, w));  // an interior pointer
      }
      if (const auto next = live.find(first + k); next != live.end())  // two adjacent allocations as one
        REQUIRE_FALSE(sb::is_whole(st.data(), blocks, first, k + next->second, w));
      for (std::size_t b = first; b < first + k; ++b) {
        const sb::Allocation a = sb::allocation_of(st.data(), blocks, b, w);
        REQUIRE(a.first == first);
        REQUIRE(a.end == first + k);
      }
    }
  }
};

}  // namespace

TEST_CASE("start bits: every live block resolves to its allocation, and only whole allocations are whole") {
  std::mt19937_64 rng(23);
  const std::size_t steps = alloy::test::test_length(400'000);
  std::size_t done = 0, expanded = 0, leads = 0;
  for (std::uint64_t seed = 1; done < steps; ++seed) {
    rng.seed(seed);
    Heap h(1 + rng() % (seed % 3 == 0 ? 700 : 130));
    for (int step = 0; step < 300; ++step, ++done) {
      const unsigned r = static_cast<unsigned>(rng() % 100);
      if (r < 45 || h.live.empty()) {
        const std::size_t k = rng() % 4 ? 1 + rng() % 8 : 1 + rng() % 150;
        const std::size_t lead = rng() % 5 == 0 ? 1 + rng() % 6 : 0;
        if (h.allocate(k, lead) && lead) ++leads;
      } else {
        auto it = h.live.begin();
        std::advance(it, static_cast<long>(rng() % h.live.size()));
        const std::size_t first = it->first, k = it->second;
        if (r < 80) {
          h.free(first);
        } else if (r < 92) {
          if (h.expand(first, 1 + rng() % 20)) ++expanded;
        } else if (k > 1) {
          h.shrink(first, 1 + rng() % (k - 1));
        }
      }
      h.check();
      // Any range of live blocks: whole exactly when it is one allocation of the model.
      const std::size_t i = rng() % h.blocks;
      if (h.taken(i)) {
        std::size_t k = 1;
        const std::size_t most = 1 + rng() % 100;
        while (k < most && i + k < h.blocks && h.taken(i + k)) ++k;
        const auto it = h.live.find(i);
        const bool want = it != h.live.end() && it->second == k;
        REQUIRE(sb::is_whole(h.st.data(), h.blocks, i, k, [&h](std::size_t wi) { return h.word(wi); }) == want);
      }
    }
  }
  CHECK(expanded > steps / 100);
  CHECK(leads > steps / 100);
}

TEST_CASE("start bits: an allocation that ends at the last block, and one that reaches the padding") {
  for (const std::size_t n : {1u, 63u, 64u, 65u, 128u, 130u}) {
    Heap h(n);
    REQUIRE(h.allocate(n, 0));  // every block
    h.check();
    h.free(0);
    REQUIRE(h.allocate(1, 0));
    if (n > 1) REQUIRE(h.allocate(n - 1, 0));
    h.check();
  }
}
