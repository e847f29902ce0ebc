#pragma once
/// \file alloy/detail/shared_bitmapped_block.hpp
/// The engine of SharedBitmappedBlock: every allocation primitive over the concurrent bitmap
/// (detail/atomic_bitmap.hpp). Single-block allocate and every deallocate are lock-free (a CAS claim from the calling
/// thread's start word, a fetch_and release); the other paths take the spin lock among themselves, search first fit
/// from block 0 (detail/bitmap_search.hpp, atomic loads, no summary) and claim their bits with CAS, undoing and
/// searching again when a lock-free allocation took a bit meanwhile. No search hint, no cached word, no summary:
/// what the single-threaded engine keeps in the object (detail/bitmapped_block_core.hpp) this one does not pay for. Its
/// base, detail/bitmapped_block_base.hpp, has what every mode shares; detail/bitmapped_block_impl.hpp builds the
/// block over it. Internal: use <alloy/bitmapped_block.hpp>.
///
/// Invariants (between the calls of all threads; tests/support/bitmapped_block_invariants.hpp checks them after every
/// operation of the single-threaded randomized runs), and the rules that keep them under concurrency:
///   * the bitmap: bit j of word i is block 64 i + j, set iff allocated; the padding bits past the last block are set;
///     every access to a word is atomic (atomic_bitmap.hpp's rules: a set bit belongs to the thread whose CAS set it);
///   * multiblock: no block at or past the fresh cursor fresh_ has been allocated. The cursor only rises (atomically);
///     every locked path raises it under the lock, a lock-free allocate after its claim and before its block can be
///     freed, so a locked reader that claims [f, f + k) and then sees the cursor still at f knows no block of it was
///     used (allocate_fresh);
///   * the lock is held by at most one thread, and only by the multi-block paths; no path holds it while it waits for
///     a lock-free one.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include <sched.h>  // sched_yield, not <thread>: 0.2 s less per translation unit (g++ 12 -O2)

#include <alloy/common.hpp>
#include <alloy/detail/atomic_bitmap.hpp>
#include <alloy/detail/bitmap.hpp>
#include <alloy/detail/bitmap_search.hpp>
#include <alloy/detail/bitmapped_block_base.hpp>

namespace alloy::detail {

template <std::size_t BlockSize, std::size_t Alignment, class Parent, Multiblock M, class Bookkeeping>
class SharedBitmappedBlockCore : public BitmappedBlockBase<BlockSize, Alignment, Parent, M, Bookkeeping, 1> {
  friend struct BitmappedBlockInspector;
  using Base = BitmappedBlockBase<BlockSize, Alignment, Parent, M, Bookkeeping, 1>;

 protected:
  using Base::Base;
  using typename Base::Layout;
  using Base::aligned_run_blocks;
  using Base::aligned_spot;
  using Base::bits_;
  using Base::blocks_;
  using Base::blocks_for;
  using Base::bs;
  using Base::check_deallocatable;
  using Base::check_owned;
  using Base::expand_bounds;
  using Base::multi;
  using Base::npos;
  using Base::offset_of;
  using Base::pad_mask;
  using Base::payload_;
  using Base::payload_bytes;
  using Base::shrink_range;
  using Base::single_block;
  using Base::words_;

 public:
  /// Reads the words one by one: under concurrent calls the answer may match no single moment.
  [[nodiscard]] Ternary empty() const noexcept {
    if (words_ == 0) return Ternary::yes;
    for (std::size_t i = 0; i + 1 < words_; ++i)
      if (load(i) != 0) return Ternary::no;
    return to_ternary(load(words_ - 1) == pad_mask());
  }

  Block allocate(std::size_t n) noexcept {
    if constexpr (!multi) {
      if (n - 1 >= bs()) return {};  // n == 0 or n > block size
      const std::size_t i = alloc1();
      if (i == npos) return {};
      return {payload_ + i * bs(), n};
    } else {
      const std::size_t k = blocks_for(n);
      if (k - 1 >= blocks_) return {};  // n == 0, or more blocks than exist
      const std::size_t i = k == 1 ? alloc1() : alloc_blocks_guarded(k);
      if (i == npos) return {};
      return {payload_ + i * bs(), n};
    }
  }

  /// Like allocate, but only from blocks never allocated before (a cursor that only grows; deallocate_all does not
  /// reset it, as in D).
  Block allocate_fresh(std::size_t n) noexcept requires multi {
    const std::size_t k = blocks_for(n);
    if (k - 1 >= blocks_) return {};
    Guard g(this);
    for (;;) {
      const std::size_t f = load_fresh();
      if (k > blocks_ - f) return {};
      if (claim(f, k)) {
        // A lock-free single-block allocate may have taken a block of [f, f + k), raised the cursor and freed the
        // block after the cursor was read above. Its raise is sequenced before its free, and the claim's acquire CAS
        // read that release free: a second read of the cursor sees the raise.
        if (load_fresh() == f) {
          raise_fresh(f + k);
          return {payload_ + f * bs(), n};
        }
        release_range(f, k);
      } else if (load_fresh() == f) {
        // A bit at or past the cursor is set: a lock-free allocate that has not raised the cursor yet (every locked
        // path raises it under the lock). Its raise comes next.
        ::sched_yield();
      }
    }
  }

  /// n bytes at an address aligned to a (a power of two), under the lock, first fit from block 0.
  Block aligned_allocate(std::size_t n, std::size_t a) noexcept {
    if (!is_power_of_two(a)) return {};
    if (a <= Alignment) return allocate(n);
    if (n == 0) return {};
    if constexpr (!multi) {
      if (n > bs()) return {};
      return alloc1_aligned(n, a);
    } else {
      const std::size_t k = aligned_run_blocks(n, a);
      if (k == 0) return {};
      Guard g(this);
      return aligned_claim(n, a, k);
    }
  }

  /// When nothing is allocated: every block in one Block of block_count() * block_size() bytes.
  Block allocate_all() noexcept requires multi {
    Guard g(this);
    if (blocks_ == 0 || empty() != Ternary::yes) return {};
    if (!claim(0, blocks_)) return {};
    raise_fresh(blocks_);
    return {payload_, payload_bytes()};
  }

  /// Grows b in place into the blocks that follow it, when they are free.
  bool expand(Block& b, std::size_t delta) noexcept {
    if (delta == 0) return true;
    std::size_t old_blk = 0, new_blk = 0;
    if (!expand_bounds(b, delta, old_blk, new_blk)) return false;
    if constexpr (multi) {
      if (new_blk > old_blk) {
        Guard g(this);
        if (!bitmap::range_free<true>(bits_, old_blk, new_blk - old_blk) || !claim(old_blk, new_blk - old_blk))
          return false;
        raise_fresh(new_blk);
      }
    }
    b.size += delta;
    return true;
  }

  /// Lock-free: a double free is refused by the same atomic operation that frees (fetch_and).
  bool deallocate(Block b) noexcept {
    if (!b) return true;
    if (single_block(b)) [[likely]] {
      if (!check_deallocatable(b)) return false;
      return release1(offset_of(b.ptr) / bs());
    }
    // Not a single block: a size of 0 (refused here), more than one block (multiblock), or more than a block
    // (Multiblock::no: refused here).
    if constexpr (!multi) {
      ALLOY_ASSERT(b.size <= bs(), "BitmappedBlock::deallocate: a Block larger than one block was never handed out "
                                   "(Multiblock::no); give back the Block that allocate returned");
      (void)check_deallocatable(b);  // names a size of 0 in debug builds
      return false;
    } else {
      if (!check_deallocatable(b)) return false;  // size 0, or foreign
      const std::size_t off = offset_of(b.ptr);
      const std::size_t i = off / bs();
      const std::size_t k = divide_round_up(off + b.size, bs()) - i;  // b.size > 0: refused above
      return release_checked(i, k);
    }
  }

  /// Frees every block. Not concurrently with other calls.
  bool deallocate_all() noexcept {
    Guard g(this);
    for (std::size_t i = 0; i < words_; ++i) store(i, 0);
    if (words_) store(words_ - 1, pad_mask());
    return true;
  }

 protected:
  // ----------------------------------------------------------------------------------------------------------
  // Life (detail/bitmapped_block_impl.hpp calls these) and reallocate's shrink

  // The bitmap words of freshly laid-out blocks: all free, the padding past the last block taken; the cursor.
  void init_bits() noexcept {
    std::memset(bits_, 0, words_ * sizeof(std::uint64_t));
    if (words_) bits_[words_ - 1] = pad_mask();
    if constexpr (multi) fresh_ = 0;
  }
  void release() noexcept {
    Layout::release();
    if constexpr (multi) fresh_ = 0;
  }
  void take(SharedBitmappedBlockCore& o) noexcept {
    Layout::take(o);
    if constexpr (multi) fresh_ = std::exchange(o.fresh_, 0);
  }
  // Gives back the whole blocks of b past its first n bytes (n < b.size).
  void shrink(Block& b, std::size_t n) noexcept {
    if constexpr (multi) {
      std::size_t keep = 0, had = 0;
      shrink_range(b, n, keep, had);
      if (had > keep) {
        Guard g(this);
        release_range(keep, had - keep);
      }
    }
    b.size = n;
  }

 private:
  // ----------------------------------------------------------------------------------------------------------
  // State, after the base's: multiblock, the fresh cursor (blocks at and after it were never allocated); the spin lock
  // of the multi-block operations. They share cache lines with the bitmap pointer and the word count, which the
  // lock-free paths only read (docs/bitmapped_block.md, Thread safety).
  [[no_unique_address]] std::conditional_t<multi, std::size_t, Absent<3>> fresh_{};
  SpinLock lock_{};

  // Multi-block operations hold the spin lock; single-block allocate and every deallocate never do.
  struct Guard {
    SharedBitmappedBlockCore* self;
    explicit Guard(SharedBitmappedBlockCore* s) noexcept : self(s) { self->lock_.lock(); }
    ~Guard() { self->lock_.unlock(); }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
  };

  [[nodiscard]] std::uint64_t load(std::size_t i) const noexcept { return atomic_bitmap::load(bits_, i); }
  void store(std::size_t i, std::uint64_t v) noexcept { atomic_bitmap::store(bits_, i, v); }
  [[nodiscard]] std::size_t load_fresh() const noexcept requires multi { return atomic_bitmap::load(fresh_); }
  void raise_fresh(std::size_t v) noexcept requires multi { atomic_bitmap::raise_to(fresh_, v); }

  // Lock-free, from this thread's own word (detail/atomic_bitmap.hpp).
  std::size_t alloc1() noexcept {
    if (words_ == 0) return npos;
    const std::size_t idx = atomic_bitmap::claim_one(bits_, words_, this);
    if constexpr (multi) {
      if (idx != npos && idx >= load_fresh()) raise_fresh(idx + 1);
    }
    return idx;
  }
  // Frees block i; false (nothing changed) when it was free: a double free, after ALLOY_ASSERT in debug builds.
  bool release1(std::size_t i) noexcept { return atomic_bitmap::release_one(bits_, i); }

  // Multiblock::no aligned_allocate: the first free block in which an a-aligned address leaves room for n bytes.
  Block alloc1_aligned(std::size_t n, std::size_t a) noexcept {
    Guard g(this);
    for (std::size_t i = 0; i < words_; ++i) {
      std::uint64_t free = ~load(i);
      while (free) {
        const unsigned j = static_cast<unsigned>(std::countr_zero(free));
        free &= free - 1;
        const std::size_t idx = i * 64 + j;
        const std::uintptr_t res = aligned_spot(idx, n, a);
        if (res && claim(idx, 1)) return {to_pointer(res), n};
      }
    }
    return {};
  }

  // ----------------------------------------------------------------------------------------------------------
  // Multiblock (k >= 2, or any k for aligned_allocate): exact first fit from block 0, under the lock, claimed by CAS.

  // Out of line, so that allocate stays small.
  [[gnu::noinline]] std::size_t alloc_blocks_guarded(std::size_t k) noexcept requires multi {
    Guard g(this);
    for (std::size_t from = 0;;) {
      const std::size_t i = find_run(from, k);
      if (i == npos) return npos;
      if (claim(i, k)) {
        raise_fresh(i + k);
        return i;
      }
      from = i / 64;  // a lock-free single-block allocation took a bit meanwhile: search again from there
    }
  }

  // aligned_allocate, under the lock: the first fit of k = blocks_for(n + a - Alignment) blocks (D's method, as the
  // single-threaded block), but only the blocks the result uses are claimed. Claiming all k and giving back the lead
  // and tail afterwards (as the single-threaded block does) made lock-free single-block allocations fail while those
  // blocks were free. First fit from block 0 for one block too: alloc1 would start at this thread's word.
  // The fresh cursor still moves past all k blocks, so allocate_fresh afterwards lands where it does in D and in the
  // single-threaded block.
  Block aligned_claim(std::size_t n, std::size_t a, std::size_t k) noexcept requires multi {
    for (std::size_t from = 0;;) {
      const std::size_t i = find_run(from, k);
      if (i == npos) return {};
      std::byte* const start = payload_ + i * bs();
      std::byte* const res = static_cast<std::byte*>(align_up(static_cast<void*>(start), a));
      const std::size_t first = i + static_cast<std::size_t>(res - start) / bs();
      const std::size_t end = divide_round_up(static_cast<std::size_t>(res - payload_) + n, bs());
      if (claim(first, end - first)) {
        raise_fresh(i + k);  // past the whole over-allocation, as D and the single-threaded block
        return {res, n};
      }
      from = i / 64;  // a lock-free single-block allocation took a bit meanwhile: search again from there
    }
  }

  // The first run of k free blocks from word `from` on (not claimed), or npos (detail/bitmap_search.hpp).
  std::size_t find_run(std::size_t from, std::size_t k) noexcept {
    NoSummary none;
    return bitmap::find_run<true>(bits_, words_, from, k, none, 0);
  }
  // Sets bits [i, i + k) word by word with CAS, undoing the words already taken when a word turns out to be taken
  // (by a lock-free single-block allocation).
  bool claim(std::size_t i, std::size_t k) noexcept { return atomic_bitmap::claim_range(bits_, i, k); }

  // deallocate of blocks [i, i + k) (k >= 2, owned): refused when a block is free (a double free), else released.
  [[gnu::noinline]] bool release_checked(std::size_t i, std::size_t k) noexcept requires multi {
    const bool live =
        bitmap::for_each_word(i, k, [this](std::size_t wi, std::uint64_t m) { return (load(wi) & m) == m; });
    ALLOY_ASSERT(live, "BitmappedBlock::deallocate: double free (a block is not allocated)");
    if (!live) return false;
    release_range(i, k);
    return true;
  }
  // Clears bits [i, i + k) (fetch_and); in debug builds, checks they were all set (a double free otherwise).
  [[gnu::noinline]] void release_range(std::size_t i, std::size_t k) noexcept {
    atomic_bitmap::release_range(bits_, i, k);
  }
};

}  // namespace alloy::detail
