#pragma once
// FreeListModel<Min, Max>: the reference model of FreeList over a Region (a LIFO stack of addresses in front of
// BumpModel, written plainly), for run_differential. ContiguousModel: ContiguousFreeList over a caller's buffer
// with a NullAllocator parent (a stack of items, nothing else).
#include <alloy/common.hpp>

#include <cstdint>
#include <vector>

#include "support/bump_model.hpp"

namespace alloy::test {

template <std::size_t Min, std::size_t Max>
struct FreeListModel {
  BumpModel<16, false> bump;
  std::vector<void*> stack;
  FreeListModel(const void* begin, std::size_t size) : bump(begin, size) {}
  static bool eligible(std::size_t n) { return n != 0 && n >= Min && n <= Max; }
  Block allocate(std::size_t n) {
    if (!eligible(n)) return bump.allocate(n);
    if (!stack.empty()) {
      void* p = stack.back();
      stack.pop_back();
      return {p, n};
    }
    const Block b = bump.allocate(Max);
    return b ? Block{b.ptr, n} : Block{};
  }
  bool deallocate(Block b) {
    if (!b) return true;
    if (eligible(b.size)) {
      stack.push_back(b.ptr);
      return true;
    }
    return bump.deallocate(b);
  }
  bool expand(Block& b, std::size_t d) {
    if (d == 0) return true;
    if (!b || b.size > SIZE_MAX - d) return false;
    const std::size_t n = b.size + d;
    if (eligible(b.size)) {
      if (n <= Max) return b.size = n, true;
      Block real{b.ptr, Max};
      if (!bump.expand(real, n - Max)) return false;
      return b.size = n, true;
    }
    if (eligible(n)) return false;
    return bump.expand(b, d);
  }
  Ternary owns(Block b) {
    return to_ternary(b && address_of(b.ptr) >= bump.lo && address_of(b.ptr) <= bump.hi &&
                      b.size <= bump.hi - address_of(b.ptr));
  }
  bool deallocate_all() {
    stack.clear();
    return bump.deallocate_all();
  }
};

struct ContiguousModel {
  std::vector<void*> stack;  // back = next item handed out
  void* begin;
  std::size_t items, stride, min, max, live = 0;
  ContiguousModel(void* p, std::size_t n, std::size_t s, std::size_t lo, std::size_t hi)
      : begin(p), items(n), stride(s), min(lo), max(hi) {
    deallocate_all();
  }
  bool deallocate_all() {
    stack.clear();
    for (std::size_t i = items; i-- > 0;) stack.push_back(static_cast<unsigned char*>(begin) + i * stride);
    live = 0;
    return true;
  }
  Block allocate(std::size_t n) {
    if (n == 0 || n < min || n > max || stack.empty()) return {};
    void* p = stack.back();
    stack.pop_back();
    ++live;
    return {p, n};
  }
  bool deallocate(Block b) {
    if (!b) return true;
    stack.push_back(b.ptr);
    --live;
    return true;
  }
  Ternary empty() { return to_ternary(live == 0); }
};

}  // namespace alloy::test
