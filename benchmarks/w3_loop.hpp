#pragma once
// The W3 step loop, shared by W3 and W6 (W3 through an AllocatorList).
#include "common.hpp"
#include "stacks.hpp"

#include <vector>

namespace alloy_bench {

inline constexpr std::size_t w3_slots = 2048;
inline constexpr std::size_t w3_steps = 10'000'000;

struct W3Result {
  std::size_t failures = 0;
};

template <class A>
[[gnu::noinline]] W3Result w3_loop(A& a, std::vector<Block>& slots, std::size_t steps) {
  Sink sink;
  Xorshift64s rng;  // reseeded every repetition
  W3Result r;
  Block* s = slots.data();
  for (std::size_t i = 0; i < steps; ++i) {
    Block& slot = s[rng.next() % w3_slots];
    if (!slot) {
      Block b = a.allocate(1 + rng.next() % 512);
      if (!b) [[unlikely]] {
        ++r.failures;
        continue;
      }
      sink.touch(b, i);
      slot = b;
    } else {
      a.deallocate(slot);
      slot = {};
    }
  }
  return r;
}

template <class A>
void w3_release(A& a, std::vector<Block>& slots) {
  for (Block& b : slots)
    if (b) {
      a.deallocate(b);
      b = {};
    }
}

}  // namespace alloy_bench
