#pragma once
// Writing and reading back test patterns in an allocator's memory: directly where the host may touch it, through the
// allocator's copy primitive where it may not (device memory, NoAccessAllocator), never otherwise.
#include <alloy/common.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace alloy::test {

template <class A>
inline constexpr bool can_check_contents = host_accessible<A> || has_copy<A>;

inline unsigned char pattern_byte(std::uint64_t seed, std::size_t i) noexcept {
  return static_cast<unsigned char>((seed * 0x9E3779B97F4A7C15ull + i * 131u) >> 56);
}

// Writes the pattern of `seed` into the first and last (up to) 32 bytes of b.
template <class A>
void write_pattern(A& a, Block b, std::uint64_t seed) noexcept {
  if constexpr (can_check_contents<A>) {
    if (!b || b.size == 0) return;
    unsigned char buf[32] = {};  // (initialized: GCC 12 with ASan warns maybe-uninitialized otherwise)
    const std::size_t head = std::min<std::size_t>(b.size, 32);
    for (std::size_t i = 0; i < head; ++i) buf[i] = pattern_byte(seed, i);
    alloy::copy(a, b.ptr, buf, head);
    if (b.size > 32) {
      const std::size_t tail = std::min<std::size_t>(b.size - 32, 32), off = b.size - tail;
      for (std::size_t i = 0; i < tail; ++i) buf[i] = pattern_byte(seed, off + i);
      alloy::copy(a, static_cast<unsigned char*>(b.ptr) + off, buf, tail);
    }
  } else {
    (void)a, (void)b, (void)seed;
  }
}

// Whether b still holds what write_pattern(seed) wrote into a block of `written` bytes at the same address, as far
// as b reaches (after a reallocate, b may be shorter or longer than it was).
template <class A>
bool check_pattern(A& a, Block b, std::uint64_t seed, std::size_t written) noexcept {
  if constexpr (can_check_contents<A>) {
    if (!b) return true;
    unsigned char buf[32] = {};  // (initialized: GCC 12 with ASan warns maybe-uninitialized otherwise)
    const std::size_t head = std::min({std::size_t{32}, written, b.size});
    alloy::copy(a, buf, b.ptr, head);
    for (std::size_t i = 0; i < head; ++i)
      if (buf[i] != pattern_byte(seed, i)) return false;
    if (written > 32 && written <= b.size) {
      const std::size_t tail = std::min<std::size_t>(written - 32, 32), off = written - tail;
      alloy::copy(a, buf, static_cast<unsigned char*>(b.ptr) + off, tail);
      for (std::size_t i = 0; i < tail; ++i)
        if (buf[i] != pattern_byte(seed, off + i)) return false;
    }
    return true;
  } else {
    (void)a, (void)b, (void)seed, (void)written;
    return true;
  }
}

}  // namespace alloy::test
