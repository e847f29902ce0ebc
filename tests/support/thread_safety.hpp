#pragma once
// check_thread_safe(make, options[, after]): one suite every Shared block runs (tests/thread_safety.cpp;
// SharedStreamOrdered's in tests/stream_ordered.cpp, which links the CPU stand-in for the CUDA runtime), under the
// tsan preset and, as a long stress, without it; cmake/conformance_coverage.cmake fails when a Shared block has no
// call. `make()` returns a fresh allocator (a prvalue: Shared blocks do not
// move). `threads` threads, released together, each take `steps` random steps over 16 slots of its own: allocate
// (plain, or aligned_allocate when the block has it) of 1..max_size bytes, then on a later visit check the block's
// bytes and `owns`, and reallocate it, expand it (when the block has them) or deallocate it. Every byte of a block is written with a tag of its thread and slot, so a block
// handed to two threads at once shows as changed bytes (and, under TSan, as a data race on them). After the join,
// the blocks still held by all threads must not overlap and must keep their bytes; then they are given back, and
// an allocator with empty() must be empty. Then one thread allocates threads x 16 blocks again: none may overlap
// another (a free list that a lost update left holding a node twice, or a bitmap with a bit cleared twice, hands a
// block out twice), and they go back the same way. Last, `after(a)` runs the block's own checks on the allocator
// it ends with (SharedAllocatorList: how many allocators it kept).
//
// A block that frees only its most recent block (SharedRegion) refuses most frees: such a refused block stays with
// its thread (it is still checked, and still must not overlap), and `frees_last_only` says the refusal is expected.
// Audit (2026-11-28): a plain, unsynchronized BitmappedBlock run through this suite fails it: under TSan at the
// test's 8-thread length (a data race reported), and without TSan, asserts off, at the stress length (8 x 125000
// steps: changed bytes in 5 runs of 5); at the short length without TSan the threads, each done within a time
// slice on two cores, barely overlap, which is why the stress exists.
// Failures are counted per kind on the threads (doctest's assertions are not for worker threads) and checked after
// the join, so a failure names its kind.
#include <alloy/common.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "support/rng.hpp"

namespace alloy::test {

struct ThreadSafeOptions {
  unsigned threads = 8;
  std::size_t steps = 2000;       // per thread
  std::size_t max_size = 256;     // request sizes are 1..max_size
  bool frees_last_only = false;   // deallocate refuses all but the most recent block (SharedRegion)
  std::uint64_t seed = 1;
};

namespace detail {
struct ThreadErrors {
  std::atomic<std::size_t> shape{0};     // wrong size or alignment
  std::atomic<std::size_t> contents{0};  // a block's bytes changed while its thread held it
  std::atomic<std::size_t> owns{0};      // owns(live block) was not yes
  std::atomic<std::size_t> refused{0};   // deallocate refused a live block (where every block goes back)
  std::atomic<std::size_t> allocated{0}; // successful allocations (the run did something)
};

inline unsigned char thread_tag(unsigned thread, std::size_t slot, std::size_t gen) noexcept {
  return static_cast<unsigned char>(1 + ((thread * 16 + slot) * 7 + gen) % 251);
}
inline bool all_bytes(Block b, unsigned char tag) noexcept {
  const auto* p = static_cast<const unsigned char*>(b.ptr);
  for (std::size_t i = 0; i < b.size; ++i)
    if (p[i] != tag) return false;
  return true;
}
}  // namespace detail

template <class Make, class After>
void check_thread_safe(Make make, const ThreadSafeOptions& o, After after) {
  auto a = make();
  using A = decltype(a);
  static_assert(host_accessible<A>, "check_thread_safe writes into every block: a host stack only");
  constexpr std::size_t slots = 16;
  struct Held {
    Block b;
    unsigned char tag;
  };
  detail::ThreadErrors err;
  std::vector<std::vector<Held>> kept(o.threads);  // each thread's blocks at the end (its slots, and refused ones)
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  pool.reserve(o.threads);
  for (unsigned t = 0; t < o.threads; ++t) {
    pool.emplace_back([&, t] {
      Rng rng{o.seed * 0x9E3779B97F4A7C15ull + t + 1};
      std::vector<Held> live(slots, Held{{}, 0});
      std::vector<Held>& stuck = kept[t];
      std::size_t gen = 0;
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      for (std::size_t step = 0; step < o.steps; ++step) {
        const std::size_t s = rng.below(slots);
        Held& h = live[s];
        if (!h.b) {
          const std::size_t n = 1 + rng.below(o.max_size);
          std::size_t al = A::alignment;
          Block b{};
          if constexpr (has_aligned_allocate<A>) {
            if (rng.chance(20)) {
              al = std::size_t{1} << rng.below(8);
              b = a.aligned_allocate(n, al);
            } else {
              b = a.allocate(n);
            }
          } else {
            b = a.allocate(n);
          }
          if (!b) continue;  // full for now: other threads hold the memory
          err.allocated.fetch_add(1, std::memory_order_relaxed);
          if (b.size != n || !is_aligned(b.ptr, al)) err.shape.fetch_add(1, std::memory_order_relaxed);
          h = Held{b, detail::thread_tag(t, s, ++gen)};
          std::memset(b.ptr, h.tag, b.size);
          continue;
        }
        if (!detail::all_bytes(h.b, h.tag)) err.contents.fetch_add(1, std::memory_order_relaxed);
        if constexpr (has_owns<A>) {
          if (a.owns(h.b) != Ternary::yes) err.owns.fetch_add(1, std::memory_order_relaxed);
        }
        if constexpr (has_reallocate<A>) {
          if (rng.chance(10)) {  // resize, maybe moving: the bytes kept must be this thread's
            const Block was = h.b;
            const std::size_t n = 1 + rng.below(o.max_size);
            if (a.reallocate(h.b, n)) {
              if (h.b.size != n) err.shape.fetch_add(1, std::memory_order_relaxed);
              if (!detail::all_bytes(Block{h.b.ptr, n < was.size ? n : was.size}, h.tag))
                err.contents.fetch_add(1, std::memory_order_relaxed);
              h.tag = detail::thread_tag(t, s, ++gen);
              std::memset(h.b.ptr, h.tag, h.b.size);
            } else if (h.b != was) {
              err.shape.fetch_add(1, std::memory_order_relaxed);  // a failed reallocate must leave the block
            }
            continue;
          }
        }
        if constexpr (has_expand<A>) {
          if (rng.chance(10)) {  // grow in place: the new bytes were nobody's
            const Block was = h.b;
            const std::size_t delta = 1 + rng.below(64);
            if (a.expand(h.b, delta)) {
              if (h.b.ptr != was.ptr || h.b.size != was.size + delta) err.shape.fetch_add(1, std::memory_order_relaxed);
              std::memset(static_cast<unsigned char*>(h.b.ptr) + was.size, h.tag, delta);
            } else if (h.b != was) {
              err.shape.fetch_add(1, std::memory_order_relaxed);
            }
            continue;
          }
        }
        if (rng.chance(30)) continue;  // keep it a while longer
        if (a.deallocate(h.b)) {
          h = Held{{}, 0};
        } else {
          if (!o.frees_last_only) err.refused.fetch_add(1, std::memory_order_relaxed);
          stuck.push_back(h);  // still allocated: still checked at the end
          h = Held{{}, 0};
        }
      }
      for (const Held& x : live)
        if (x.b) stuck.push_back(x);
    });
  }
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();

  std::vector<Held> all;
  for (auto& v : kept) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end(), [](const Held& x, const Held& y) { return address_of(x.b.ptr) < address_of(y.b.ptr); });
  std::size_t overlaps = 0, changed = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i + 1 < all.size() && all[i].b.end_address() > address_of(all[i + 1].b.ptr)) ++overlaps;
    if (!detail::all_bytes(all[i].b, all[i].tag)) ++changed;
  }
  CAPTURE(o.threads);
  CAPTURE(o.steps);
  CHECK(err.allocated.load() > 0);
  CHECK(err.shape.load() == 0);
  CHECK(err.contents.load() == 0);
  CHECK(err.owns.load() == 0);
  CHECK(err.refused.load() == 0);
  CHECK(overlaps == 0);
  CHECK(changed == 0);
  auto give_back = [&](const auto& blocks, auto block_of) {
    if (o.frees_last_only) {
      if constexpr (has_deallocate_all<A>) CHECK(a.deallocate_all());
    } else {
      for (const auto& x : blocks) CHECK(a.deallocate(block_of(x)));
      if constexpr (has_empty<A>) CHECK(a.empty() == Ternary::yes);
    }
  };
  give_back(all, [](const Held& h) { return h.b; });

  std::vector<Block> again;
  Rng rng{o.seed};
  for (std::size_t i = 0; i < o.threads * slots; ++i)
    if (Block b = a.allocate(1 + rng.below(o.max_size))) again.push_back(b);
  std::sort(again.begin(), again.end(), [](Block x, Block y) { return address_of(x.ptr) < address_of(y.ptr); });
  std::size_t twice = 0;
  for (std::size_t i = 0; i + 1 < again.size(); ++i)
    if (again[i].end_address() > address_of(again[i + 1].ptr)) ++twice;
  CHECK(!again.empty());
  CHECK(twice == 0);
  give_back(again, [](Block b) { return b; });
  after(a);
}
template <class Make>
void check_thread_safe(Make make, const ThreadSafeOptions& o) {
  check_thread_safe(make, o, [](auto&) {});
}

}  // namespace alloy::test
