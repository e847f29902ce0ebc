#pragma once
// BumpModel<MinAlign, Down>: the exact reference model of Region (a bump pointer over the same addresses, written
// plainly, with no shared code), for run_differential and for models of blocks built on regions (AllocatorList).
#include <alloy/common.hpp>

#include <cstdint>

namespace alloy::test {

template <std::size_t MinAlign, bool Down>
struct BumpModel {
  std::uintptr_t lo, hi, cur;
  BumpModel(const void* begin, std::size_t size)
      : lo(alloy::address_of(begin)), hi(lo + size), cur(Down ? hi : lo) {}
  static bool rounded(std::size_t n, std::size_t& r) {
    if (n == 0 || n > SIZE_MAX - (MinAlign - 1)) return false;
    r = n % MinAlign ? n + (MinAlign - n % MinAlign) : n;
    return true;
  }
  alloy::Block allocate(std::size_t n) {
    std::size_t r = 0;
    if (!rounded(n, r) || r > hi - lo) return {};
    if (Down) {
      if (cur - lo < r) return {};
      cur -= r;
      return {alloy::to_pointer(cur), n};
    }
    if (hi - cur < r) return {};
    cur += r;
    return {alloy::to_pointer(cur - r), n};
  }
  alloy::Block aligned_allocate(std::size_t n, std::size_t a) {
    if (!alloy::is_power_of_two(a)) return {};  // 0, 3, 24: no alignment at all (found by tests/fuzz/region.cpp)
    if (a <= MinAlign) return allocate(n);
    std::size_t r = 0;
    if (!rounded(n, r)) return {};
    if (Down) {
      if (cur - lo < r) return {};
      std::uintptr_t p = cur - r;
      p -= p % a;
      if (p < lo) return {};
      cur = p;
      return {alloy::to_pointer(p), n};
    }
    std::uintptr_t p = cur;
    if (p % a) p += a - p % a;
    if (p > hi || hi - p < r) return {};
    cur = p + r;
    return {alloy::to_pointer(p), n};
  }
  bool expand(alloy::Block& b, std::size_t d) requires(!Down) {
    if (d == 0) return true;
    std::size_t r0 = 0, r1 = 0;
    rounded(b.size, r0);
    if (alloy::address_of(b.ptr) + r0 != cur) return false;
    if (b.size > SIZE_MAX - d || !rounded(b.size + d, r1) || r1 - r0 > hi - cur) return false;
    cur += r1 - r0;
    b.size += d;
    return true;
  }
  bool deallocate(alloy::Block b) {
    if (!b) return true;
    std::size_t r = 0;
    rounded(b.size, r);
    if (Down) {
      if (alloy::address_of(b.ptr) != cur) return false;
      cur += r;
      return true;
    }
    if (alloy::address_of(b.ptr) + r != cur) return false;
    cur = alloy::address_of(b.ptr);
    return true;
  }
  alloy::Block allocate_all() {  // Region's rule: all the memory not yet allocated
    if (Down) {
      if (cur == lo) return {};
      const alloy::Block b{alloy::to_pointer(lo), cur - lo};
      cur = lo;
      return b;
    }
    if (cur == hi) return {};
    const alloy::Block b{alloy::to_pointer(cur), hi - cur};
    cur = hi;
    return b;
  }
  bool deallocate_all() {
    cur = Down ? hi : lo;
    return true;
  }
  alloy::Ternary owns(alloy::Block b) const {
    const auto p = alloy::address_of(b.ptr);
    return alloy::to_ternary(b.ptr && p >= lo && p <= hi && b.size <= hi - p);
  }
  alloy::Ternary empty() const { return alloy::to_ternary(cur == (Down ? hi : lo)); }
};

}  // namespace alloy::test
