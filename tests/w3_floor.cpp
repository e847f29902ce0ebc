// benchmarks/w3_floor.hpp, W3's design floor, must hand out what BitmappedBlock<64, 64, Mallocator> hands out, or
// the performance report would compare BitmappedBlock with a different allocator: both run W3's random steady state
// (1 to 512 bytes, random frees) in lockstep and every offset and every failure must agree.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>

#include "support/test_length.hpp"
#include "../benchmarks/w3_floor.hpp"
#include "support/rng.hpp"

namespace {

void lockstep(std::size_t arena, std::size_t slots, std::size_t steps, std::uint64_t seed, bool runs_out) {
  alloy_bench::SummaryFirstFitFloor f(arena);
  alloy::BitmappedBlock<64, 64, alloy::Mallocator> b(arena);
  REQUIRE(b.block_count() == arena / 64);
  std::vector<alloy::Block> sf(slots), sb(slots);
  alloy::test::Rng rng{seed};
  std::size_t failures = 0, mismatches = 0;
  for (std::size_t i = 0; i < steps; ++i) {
    const std::size_t s = rng.below(slots);
    if (!sf[s] && !sb[s]) {
      const std::size_t n = 1 + rng.below(512);
      sf[s] = f.allocate(n);
      sb[s] = b.allocate(n);
      if (bool(sf[s]) != bool(sb[s])) {
        ++mismatches;
      } else if (!sf[s]) {
        ++failures;
      } else if (static_cast<std::byte*>(sf[s].ptr) - f.payload() !=
                 static_cast<std::byte*>(sb[s].ptr) - static_cast<std::byte*>(b.payload())) {
        ++mismatches;
      }
      if (mismatches) break;
    } else {
      if (sf[s]) f.deallocate(sf[s]);
      if (sb[s]) CHECK(b.deallocate(sb[s]));
      sf[s] = sb[s] = {};
    }
  }
  CHECK(mismatches == 0);
  for (std::size_t s = 0; s < slots; ++s)
    if (sb[s]) CHECK(b.deallocate(sb[s]));
  CHECK(b.empty() == alloy::Ternary::yes);
  MESSAGE("arena " << arena << ": " << steps << " steps, " << failures << " failed allocations");
  CHECK((failures > 0) == runs_out);  // the small arenas run out: the failure path is compared too
}

}  // namespace

TEST_CASE("W3 floor: the same offsets as BitmappedBlock<64, 64, Mallocator> on W3's 4 MiB arena") {
  lockstep(4 << 20, 2048, alloy::test::test_length(1'000'000), 0x9E3779B97F4A7C15ull, false);
}

TEST_CASE("W3 floor: the same offsets and failures on small arenas that run out") {
  for (std::size_t words : {1u, 2u, 3u, 16u, 40u})
    lockstep(words * 64 * 64, words <= 16 ? 1024 : 256, alloy::test::test_length(200'000), 0x1234567ull + words,
             words <= 16);
}

namespace {

// The bounds of benchmarks/w3_floor.hpp: given the floor's first fits, GivenFitsBound<summary> must keep the floor's
// bitmap and summary bytes at least as high as the floor's, and GivenFitsBound<bits> the floor's bitmap, or the
// report's decomposition of W3 (search, summary upkeep, the rest) would compare other work.
template <alloy_bench::Upkeep U>
void bound_lockstep(std::size_t arena, std::size_t slots, std::size_t steps, std::uint64_t seed) {
  using Bound = alloy_bench::GivenFitsBound<U>;
  // First pass: the floor's answers on this sequence.
  std::vector<std::uint32_t> fits;
  {
    alloy_bench::SummaryFirstFitFloor f(arena);
    std::vector<alloy::Block> s(slots);
    alloy::test::Rng rng{seed};
    for (std::size_t i = 0; i < steps; ++i) {
      const std::size_t k = rng.below(slots);
      if (!s[k]) {
        s[k] = f.allocate(1 + rng.below(512));
        fits.push_back(s[k] ? static_cast<std::uint32_t>((static_cast<std::byte*>(s[k].ptr) - f.payload()) / 64)
                            : Bound::no_fit);
      } else {
        f.deallocate(s[k]);
        s[k] = {};
      }
    }
  }
  // Second pass: the bound and a fresh floor in lockstep.
  alloy_bench::SummaryFirstFitFloor f(arena);
  Bound g(arena, fits.data());
  std::vector<alloy::Block> sf(slots), sg(slots);
  alloy::test::Rng rng{seed};
  std::size_t mismatches = 0, failures = 0;
  for (std::size_t i = 0; i < steps && mismatches == 0; ++i) {
    const std::size_t k = rng.below(slots);
    if (!sf[k]) {
      const std::size_t n = 1 + rng.below(512);
      sf[k] = f.allocate(n);
      sg[k] = g.allocate(n);
      if (bool(sf[k]) != bool(sg[k]) || sf[k].size != sg[k].size ||
          (sf[k] && static_cast<std::byte*>(sf[k].ptr) - f.payload() != static_cast<std::byte*>(sg[k].ptr) - g.payload()))
        ++mismatches;
      failures += !sf[k];
      if constexpr (U == alloy_bench::Upkeep::summary) {
        if (sf[k]) {  // both just wrote the exact byte of the allocation's first word
          const std::size_t w = static_cast<std::size_t>(static_cast<std::byte*>(sf[k].ptr) - f.payload()) / (64 * 64);
          mismatches += f.summary()[w] != g.summary()[w];
        }
      }
    } else {
      f.deallocate(sf[k]);
      g.deallocate(sg[k]);
      sf[k] = sg[k] = {};
    }
    const auto fb = f.bitmap(), gb = g.bitmap();
    if (!std::equal(fb.begin(), fb.end(), gb.begin(), gb.end())) ++mismatches;
    if constexpr (U == alloy_bench::Upkeep::summary) {
      // The floor's search also lowers the byte of a word where a probe failed; the bound searches nothing, so its
      // bytes are the floor's or higher (still bounds: the floor's are), and equal wherever the last write was an
      // allocation's exact byte.
      const auto fs = f.summary(), gs = g.summary();
      for (std::size_t w = 0; w < fs.size(); ++w) mismatches += gs[w] < fs[w];
    }
  }
  CHECK(mismatches == 0);
  MESSAGE("arena " << arena << ": " << fits.size() << " allocations given, " << failures << " failed");
}

}  // namespace

TEST_CASE("W3 bounds: given the floor's first fits, both keep the floor's bitmap; the summary bound, bytes at least the floor's") {
  bound_lockstep<alloy_bench::Upkeep::summary>(4 << 20, 2048, alloy::test::test_length(300'000), 0x9E3779B97F4A7C15ull);
  bound_lockstep<alloy_bench::Upkeep::bits>(4 << 20, 2048, alloy::test::test_length(300'000), 0x9E3779B97F4A7C15ull);
  // an arena that runs out: the failures are given too
  bound_lockstep<alloy_bench::Upkeep::summary>(3 * 64 * 64, 1024, 100'000, 0x1234567ull);
  bound_lockstep<alloy_bench::Upkeep::bits>(3 * 64 * 64, 1024, 100'000, 0x1234567ull);
}
