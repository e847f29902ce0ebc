#pragma once
/// \file alloy/detail/atomic_bitmap.hpp
/// SharedBitmappedBlock's concurrent bitmap: claims by compare-and-swap, frees by fetch_and, the spin lock of the
/// multi-block operations, and the per-thread start words of the single-block search (mimalloc's bitmap.c keeps the
/// same three). The words are plain `std::uint64_t` reached through std::atomic_ref, so the layout is the
/// single-threaded block's. Internal: no API promise. Tested alone by tests/atomic_bitmap.cpp (also under TSan).
///
/// Invariants and rules (SharedBitmappedBlock relies on each):
///   * every access to a word that another thread may write is atomic: a plain read, even one whose value is thrown
///     away, is a data race (TSan reports it at -O0, where the read is not dropped);
///   * a set bit is owned by the thread whose CAS set it (acquire) until its release (fetch_and, release), so a
///     thread that claims a block sees every write made to it before its last free;
///   * claim_range takes all of [i, i + k) or nothing: when a word of it is taken meanwhile, the words it already
///     took are given back (until then they look taken to other threads);
///   * claim_one starts at the calling thread's own word for this bitmap: threads are spread one stride (at least one
///     64-byte line of words) apart and a thread stays where it last claimed, moving one stride on only when its CAS
///     met another thread's write, so an uncontended thread keeps first fit from its word (a single thread: D's
///     offsets);
///   * the cursor raise (raise_to) only moves up.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

#include <sched.h>  // sched_yield, not <thread>: 0.2 s less per translation unit (g++ 12 -O2)

#include <alloy/config.hpp>
#include <alloy/detail/bitmap.hpp>

namespace alloy::detail {

/// The spin lock of SharedBitmappedBlock's multi-block operations: one word; single-block operations never take it.
/// Constant-initializable (a namespace-scope block is constinit).
class SpinLock {
 public:
  constexpr SpinLock() noexcept = default;
  SpinLock(const SpinLock&) = delete;
  SpinLock& operator=(const SpinLock&) = delete;
  void lock() const noexcept {
    std::atomic_ref<std::uint32_t> l(word_);
    while (l.exchange(1, std::memory_order_acquire))
      while (l.load(std::memory_order_relaxed)) ::sched_yield();
  }
  void unlock() const noexcept { std::atomic_ref<std::uint32_t>(word_).store(0, std::memory_order_release); }
  [[nodiscard]] bool locked() const noexcept {
    return std::atomic_ref<std::uint32_t>(word_).load(std::memory_order_relaxed) != 0;
  }

 private:
  mutable std::uint32_t word_ = 0;
};

namespace atomic_bitmap {

inline constexpr std::size_t npos = bitmap::npos;

/// A small per-thread slot number: each thread starts its single-block search at a different word, so that threads
/// do not all CAS the same cache line.
inline std::size_t thread_slot() noexcept {
  static std::atomic<std::size_t> next{0};
  thread_local const std::size_t slot = next.fetch_add(1, std::memory_order_relaxed);
  return slot;
}
/// The calling thread's start word, for the bitmap `owner` it last claimed from.
struct ThreadHint {
  const void* owner = nullptr;
  std::size_t word = 0;
};
inline ThreadHint& thread_hint() noexcept {
  thread_local ThreadHint h;
  return h;
}

inline std::uint64_t load(const std::uint64_t* bits, std::size_t i) noexcept {
  return std::atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(bits[i])).load(std::memory_order_relaxed);
}
inline void store(std::uint64_t* bits, std::size_t i, std::uint64_t v) noexcept {
  std::atomic_ref<std::uint64_t>(bits[i]).store(v, std::memory_order_release);
}
inline std::size_t load(const std::size_t& v) noexcept {
  return std::atomic_ref<std::size_t>(const_cast<std::size_t&>(v)).load(std::memory_order_relaxed);
}
/// v = max(v, x), atomically.
inline void raise_to(std::size_t& v, std::size_t x) noexcept {
  std::atomic_ref<std::size_t> f(v);
  std::size_t cur = f.load(std::memory_order_relaxed);
  while (cur < x && !f.compare_exchange_weak(cur, x, std::memory_order_relaxed)) {
  }
}

/// One free bit of the n words of `bits` (n > 0), claimed: the first free one from the calling thread's start word
/// for `owner`, passing over the words once (wrapping at n). Its index, or npos when none was free as it passed.
inline std::size_t claim_one(std::uint64_t* bits, std::size_t n, const void* owner) noexcept {
  ThreadHint& h = thread_hint();
  std::size_t i = h.word;
  // Threads start one stride (at least one 64-byte line of words) apart.
  const auto stride = [n] { return std::max<std::size_t>(8, (n / 16) & ~std::size_t{7}); };
  if (h.owner != owner || i >= n) {
    i = (thread_slot() * stride()) % n;
    h.owner = owner;
  }
  bool contended = false;
  for (std::size_t c = 0; c < n; ++c) {
    std::atomic_ref<std::uint64_t> a(bits[i]);
    std::uint64_t w = a.load(std::memory_order_relaxed);
    while (w != bitmap::all_ones) {
      const unsigned j = static_cast<unsigned>(std::countr_one(w));
      if (a.compare_exchange_weak(w, w | (std::uint64_t{1} << j), std::memory_order_acquire,
                                  std::memory_order_relaxed)) {
        // A claim that met another thread's write moves this thread's next search one stride on: the slot-0 thread
        // starts at word 0, where every locked multi-block search starts its first fit, and sharing that cache line
        // made mixed churn 2-5x slower. Uncontended (one thread, or threads on their own words) nothing moves, so a
        // single thread keeps D's offsets.
        h.word = contended ? (i + stride()) % n : i;
        return i * 64 + j;
      }
      contended = true;
    }
    if (++i == n) i = 0;
  }
  return npos;
}

/// Clears bits [i, i + k) (fetch_and, release); in debug builds, checks they were all set (a double free otherwise).
inline void release_range(std::uint64_t* bits, std::size_t i, std::size_t k) noexcept {
  bitmap::for_each_word(i, k, [bits](std::size_t wi, std::uint64_t m) {
    [[maybe_unused]] const std::uint64_t old =
        std::atomic_ref<std::uint64_t>(bits[wi]).fetch_and(~m, std::memory_order_release);
    ALLOY_ASSERT((old & m) == m, "BitmappedBlock::deallocate: double free (a block is not allocated)");
    return true;
  });
}

/// Clears bit i; whether it was set (false: a double free, refused by the same operation, since clearing a clear bit
/// changes nothing; ALLOY_ASSERT in debug builds).
inline bool release_one(std::uint64_t* bits, std::size_t i) noexcept {
  const std::uint64_t bit = std::uint64_t{1} << (i % 64);
  const std::uint64_t old = std::atomic_ref<std::uint64_t>(bits[i / 64]).fetch_and(~bit, std::memory_order_release);
  ALLOY_ASSERT(old & bit, "BitmappedBlock::deallocate: double free (the block is not allocated)");
  return (old & bit) != 0;
}

/// Sets bits [i, i + k) word by word with CAS (acquire): true when all were free and are now this thread's; false
/// when a word turned out to be taken (by a lock-free single-block claim), after giving back the words already taken.
inline bool claim_range(std::uint64_t* bits, std::size_t i, std::size_t k) noexcept {
  std::size_t taken = 0;  // bits of [i, i + k) claimed so far
  const bool ok = bitmap::for_each_word(i, k, [&](std::size_t wi, std::uint64_t m) {
    std::atomic_ref<std::uint64_t> a(bits[wi]);
    std::uint64_t w = a.load(std::memory_order_relaxed);
    do {
      if (w & m) return false;
    } while (!a.compare_exchange_weak(w, w | m, std::memory_order_acquire, std::memory_order_relaxed));
    taken += static_cast<std::size_t>(std::popcount(m));
    return true;
  });
  if (!ok && taken) release_range(bits, i, taken);
  return ok;
}

}  // namespace atomic_bitmap
}  // namespace alloy::detail
