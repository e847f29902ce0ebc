#pragma once
// The thread-safety stress shared by the stateless, thread-safe parents (AlignedMallocator, MmapAllocator): 4
// threads, 16 slots each, 2000 steps: allocate (plain or aligned), reallocate, check the tag written into the first
// and last byte, free. Each thread counts what went wrong; the caller checks the counts.
#include <alloy/common.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "rng.hpp"

namespace alloy::test {

// A byte that depends on a block's address and size: a block that another thread also holds, or whose contents
// moved wrongly, shows another value.
inline unsigned char block_tag(Block b) noexcept {
  return static_cast<unsigned char>((address_of(b.ptr) >> 4) ^ b.size);
}

// alignment_of(n): the alignment that an aligned_allocate of n bytes asks for. Returns each thread's error count.
template <class A, class AlignmentOf>
std::vector<int> stress_threads(const A& a, AlignmentOf alignment_of, std::size_t max_size = 3 * 4096) {
  constexpr int threads = 4;
  std::vector<std::thread> pool;
  std::vector<int> errors(threads, 0);
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&a, &errors, alignment_of, max_size, t] {
      Rng rng{static_cast<std::uint64_t>(t + 1)};
      std::vector<Block> live(16);
      for (int i = 0; i < 2000; ++i) {
        Block& b = live[rng.below(live.size())];
        if (b) {
          const unsigned char tag = block_tag(b);
          if (static_cast<unsigned char*>(b.ptr)[0] != tag || static_cast<unsigned char*>(b.ptr)[b.size - 1] != tag)
            ++errors[t];
          if (rng.chance(50)) {
            if (!a.deallocate(b)) ++errors[t];
            b = {};
            continue;
          }
          if (!a.reallocate(b, 1 + rng.below(max_size))) ++errors[t];
        } else {
          const std::size_t n = 1 + rng.below(max_size);
          b = rng.chance(50) ? a.allocate(n) : a.aligned_allocate(n, alignment_of(n));
          if (!b) ++errors[t];
        }
        if (b) std::memset(b.ptr, block_tag(b), b.size);
      }
      for (Block& b : live) a.deallocate(b);
    });
  }
  for (auto& th : pool) th.join();
  return errors;
}

}  // namespace alloy::test
