// benchmarks/w3_floor.hpp, W3's design floor, must hand out what BitmappedBlock<64, 64, Mallocator> hands out, or
// the performance report would compare BitmappedBlock with a different allocator: both run W3's random steady state
// (1 to 512 bytes, random frees) in lockstep and every offset and every failure must agree.
#include <doctest/doctest.h>

#include <cstddef>
#include <vector>

#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>

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
  lockstep(4 << 20, 2048, 1'000'000, 0x9E3779B97F4A7C15ull, false);
}

TEST_CASE("W3 floor: the same offsets and failures on small arenas that run out") {
  for (std::size_t words : {1u, 2u, 3u, 16u, 40u})
    lockstep(words * 64 * 64, words <= 16 ? 1024 : 256, 200'000, 0x1234567ull + words, words <= 16);
}
