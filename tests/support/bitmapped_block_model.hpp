#pragma once
// BitmapModel: the exact reference model of BitmappedBlock for run_differential. One byte per block, exact first
// fit by a plain left-to-right scan, over the same payload address and block count as the allocator under test, so
// it predicts every pointer. It knows nothing of words, hints or summaries. With `starts`, it also keeps the live
// allocations (first block -> block count) and answers resolve_internal_pointer from them.
#include <alloy/common.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace alloy::test {

struct BitmapModel {
  std::uintptr_t base = 0;
  std::size_t bs = 0, blocks = 0, alignment = 16;
  bool multi = true;
  bool starts = false;
  std::vector<unsigned char> used;
  std::map<std::size_t, std::size_t> live;  // first block -> blocks (only with starts)
  std::size_t fresh = 0;

  BitmapModel(void* payload, std::size_t block_size, std::size_t block_count, std::size_t align, bool multiblock,
              bool with_starts = false)
      : base(address_of(payload)), bs(block_size), blocks(block_count), alignment(align), multi(multiblock),
        starts(with_starts), used(block_count, 0) {}

  std::size_t blocks_for(std::size_t n) const { return n / bs + (n % bs != 0); }
  bool free_run(std::size_t i, std::size_t k) const {
    if (i > blocks || k > blocks - i) return false;
    for (std::size_t j = i; j < i + k; ++j)
      if (used[j]) return false;
    return true;
  }
  std::size_t first_fit(std::size_t k) const {
    std::size_t run = 0;
    for (std::size_t i = 0; i < blocks; ++i) {
      run = used[i] ? 0 : run + 1;
      if (run == k) return i + 1 - k;
    }
    return SIZE_MAX;
  }
  void set(std::size_t i, std::size_t k, unsigned char v) {
    for (std::size_t j = i; j < i + k; ++j) used[j] = v;
  }
  void take(std::size_t i, std::size_t k) {
    set(i, k, 1);
    if (multi && i + k > fresh) fresh = i + k;
    if (starts) live[i] = k;
  }
  std::size_t block_of(const void* p) const { return (address_of(p) - base) / bs; }
  std::size_t end_block(Block b) const { return blocks_for(address_of(b.ptr) - base + b.size); }

  Block allocate(std::size_t n) {
    if (n == 0) return {};
    if (!multi && n > bs) return {};
    const std::size_t k = blocks_for(n);
    if (k > blocks) return {};
    const std::size_t i = first_fit(k);
    if (i == SIZE_MAX) return {};
    take(i, k);
    return {to_pointer(base + i * bs), n};
  }
  Block allocate_fresh(std::size_t n) {
    if (n == 0) return {};
    const std::size_t k = blocks_for(n);
    if (k > blocks || fresh > blocks - k || !free_run(fresh, k)) return {};
    const std::size_t i = fresh;
    take(i, k);
    return {to_pointer(base + i * bs), n};
  }
  Block aligned_allocate(std::size_t n, std::size_t a) {
    if (!is_power_of_two(a)) return {};
    if (a <= alignment) return allocate(n);
    if (n == 0) return {};
    if (!multi) {
      if (n > bs) return {};
      for (std::size_t i = 0; i < blocks; ++i) {
        if (used[i]) continue;
        const std::uintptr_t s = base + i * bs, r = align_up(s, a);
        if (r - s + n <= bs) {
          take(i, 1);
          return {to_pointer(r), n};
        }
      }
      return {};
    }
    std::size_t m = 0;
    if (!add_checked(n, a - alignment, m)) return {};
    const std::size_t k = blocks_for(m);
    if (k > blocks) return {};
    const std::size_t i = first_fit(k);
    if (i == SIZE_MAX) return {};
    take(i, k);
    const std::uintptr_t s = base + i * bs, r = align_up(s, a);
    const std::size_t lead = (r - s) / bs, used_end = blocks_for(r - base + n);
    set(i, lead, 0);
    set(used_end, i + k - used_end, 0);
    if (starts) {
      live.erase(i);
      live[i + lead] = used_end - i - lead;
    }
    return {to_pointer(r), n};
  }
  Block allocate_all() {
    if (empty() != Ternary::yes || blocks == 0) return {};
    take(0, blocks);
    return {to_pointer(base), blocks * bs};
  }
  bool expand(Block& b, std::size_t d) {
    if (d == 0) return true;
    if (!b) return false;
    const std::size_t off = address_of(b.ptr) - base;
    std::size_t ne = 0;
    if (!add_checked(off + b.size, d, ne) || ne > blocks * bs) return false;
    if (!multi) {
      if (ne > (off / bs + 1) * bs) return false;
    } else {
      const std::size_t ob = blocks_for(off + b.size), nbk = blocks_for(ne);
      if (nbk > ob) {
        if (!free_run(ob, nbk - ob)) return false;
        set(ob, nbk - ob, 1);
        if (nbk > fresh) fresh = nbk;
        if (starts) live[block_of(b.ptr)] = nbk - block_of(b.ptr);
      }
    }
    b.size += d;
    return true;
  }
  void shrink(Block& b, std::size_t n) {
    const std::size_t off = address_of(b.ptr) - base;
    const std::size_t keep = blocks_for(off + n), had = blocks_for(off + b.size);
    if (multi && had > keep) {
      set(keep, had - keep, 0);
      if (starts) live[block_of(b.ptr)] = keep - block_of(b.ptr);
    }
    b.size = n;
  }
  bool move_to(Block& b, Block nb) {
    if (!nb) return false;
    deallocate(b);
    b = nb;
    return true;
  }
  bool reallocate(Block& b, std::size_t n) {
    if (!b) {
      if (n == 0) return true;
      Block nb = allocate(n);
      if (!nb) return false;
      b = nb;
      return true;
    }
    if (n == 0) {
      deallocate(b);
      b = {};
      return true;
    }
    if (n == b.size) return true;
    if (n < b.size) {
      shrink(b, n);
      return true;
    }
    if (expand(b, n - b.size)) return true;
    return move_to(b, allocate(n));
  }
  bool aligned_reallocate(Block& b, std::size_t n, std::size_t a) {
    if (!is_power_of_two(a)) return false;
    if (!b) {
      if (n == 0) return true;
      Block nb = aligned_allocate(n, a);
      if (!nb) return false;
      b = nb;
      return true;
    }
    if (n == 0) {
      deallocate(b);
      b = {};
      return true;
    }
    if (is_aligned(b.ptr, a)) {
      if (n <= b.size) {
        if (n < b.size) shrink(b, n);
        return true;
      }
      if (expand(b, n - b.size)) return true;
    }
    return move_to(b, aligned_allocate(n, a));
  }
  bool deallocate(Block b) {
    if (!b) return true;
    const std::size_t i = block_of(b.ptr);
    const std::size_t k = multi ? end_block(b) - i : 1;
    set(i, k, 0);
    if (starts) live.erase(i);
    return true;
  }
  bool deallocate_all() {
    set(0, blocks, 0);
    live.clear();
    return true;
  }
  Ternary owns(Block b) const {
    return to_ternary(b && address_of(b.ptr) >= base && address_of(b.ptr) - base < blocks * bs &&
                      b.size <= blocks * bs - (address_of(b.ptr) - base));
  }
  Ternary empty() const {
    for (unsigned char u : used)
      if (u) return Ternary::no;
    return Ternary::yes;
  }
  Ternary resolve_internal_pointer(const void* p, Block& r) const {
    if (address_of(p) < base || address_of(p) - base >= blocks * bs) return Ternary::no;
    const std::size_t blk = block_of(p);
    auto it = live.upper_bound(blk);
    if (it == live.begin()) return Ternary::no;
    --it;
    if (blk >= it->first + it->second) return Ternary::no;
    r = {to_pointer(base + it->first * bs), it->second * bs};
    return Ternary::yes;
  }
};

}  // namespace alloy::test
