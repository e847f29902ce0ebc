#pragma once
// xorshift64*: the generator of docs/workloads.md, used by the randomized tests too (fixed seeds: failures replay).
#include <cstdint>

namespace alloy::test {
struct Rng {
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  std::uint64_t next() noexcept {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    return x * 0x2545F4914F6CDD1Dull;
  }
  std::uint64_t below(std::uint64_t n) noexcept { return n ? next() % n : 0; }  // [0, n)
  bool chance(unsigned percent) noexcept { return below(100) < percent; }
};
}  // namespace alloy::test
