#pragma once
/// \file alloy/detail/bitmapped_block_internal_pointers.hpp
/// The engine of BitmappedBlockWithInternalPointers: the single-threaded engine (detail/bitmapped_block_core.hpp,
/// laid out with two bitmaps) wrapped with start bits (detail/start_bits.hpp), as Phobos wraps a heap plus an
/// `_allocStart` bitmap. Every primitive that hands out blocks marks where its allocation starts, after the core
/// took them; expand clears the start bits of the blocks it joins; deallocate refuses a Block that is not exactly one
/// live allocation before the core frees it; resolve_internal_pointer finds the allocation that contains a pointer.
/// Internal: use <alloy/bitmapped_block.hpp>.
///
/// Invariant, between the calls of its owner: start_bits.hpp's (for every live allocation of blocks [s, s + k), start
/// bit s is set and start bits s + 1 to s + k - 1 are clear), over the start words that follow the control bitmap
/// (BitmapLayout with two maps: words_ more words at bits_ + words_), on top of the core's. A free needs no upkeep;
/// the core's shrink (reallocate) gives back trailing blocks and leaves their start bits, which mean nothing there.
#include <cstddef>
#include <cstdint>

#include <alloy/common.hpp>
#include <alloy/detail/bitmapped_block_core.hpp>
#include <alloy/detail/start_bits.hpp>

namespace alloy::detail {

template <std::size_t BlockSize, std::size_t Alignment, class Parent, class Bookkeeping>
class BitmappedBlockInternalPointers
    : public BitmappedBlockCore<BlockSize, Alignment, Parent, Multiblock::yes, Bookkeeping, 2> {
  using Core = BitmappedBlockCore<BlockSize, Alignment, Parent, Multiblock::yes, Bookkeeping, 2>;

 protected:
  using Core::Core;
  using Core::blocks_;
  using Core::bits_;
  using Core::bs;
  using Core::check_deallocatable;
  using Core::check_live;
  using Core::npos;
  using Core::offset_of;
  using Core::payload_;
  using Core::payload_bytes;
  using Core::single_block;
  using Core::words_;
  using Core::word_now;

 public:
  Block allocate(std::size_t n) noexcept { return marked(Core::allocate(n)); }
  Block allocate_fresh(std::size_t n) noexcept { return marked(Core::allocate_fresh(n)); }
  Block aligned_allocate(std::size_t n, std::size_t a) noexcept { return marked(Core::aligned_allocate(n, a)); }
  Block allocate_all() noexcept { return marked(Core::allocate_all()); }

  /// The blocks it joins become part of b's allocation: their start bits are cleared.
  bool expand(Block& b, std::size_t delta) noexcept {
    const std::size_t had = b.size;
    if (!Core::expand(b, delta)) return false;
    const std::size_t off = offset_of(b.ptr);
    const std::size_t old_blk = divide_round_up(off + had, bs()), new_blk = divide_round_up(off + b.size, bs());
    if (new_blk > old_blk) start_bits::clear(starts(), old_blk, new_blk - old_blk);
    return true;
  }

  /// Refuses (false, nothing changed; ALLOY_ASSERT in debug builds) a Block that is not exactly one live allocation:
  /// another size than the one allocated, a pointer inside it, a double free, a foreign Block.
  bool deallocate(Block b) noexcept {
    if (!b) return true;
    if (single_block(b)) {
      if (!check_deallocatable(b)) return false;
      // A double free of one block is named by the core's fast path (its start bit may still be set).
      if (!check_whole_allocation(offset_of(b.ptr) / bs(), 1)) return false;
    } else {
      if (!check_deallocatable(b)) return false;  // size 0, or foreign
      const std::size_t off = offset_of(b.ptr);
      const std::size_t i = off / bs();
      const std::size_t k = divide_round_up(off + b.size, bs()) - i;
      if (!check_live(i, k) || !check_whole_allocation(i, k)) return false;
    }
    return Core::deallocate(b);  // its own checks pass
  }

  /// The live allocation that contains p: yes and its blocks in `result`; no for a pointer outside the payload or
  /// inside a free block (result unchanged).
  Ternary resolve_internal_pointer(const void* p, Block& result) const noexcept {
    if (!payload_ || address_of(p) < address_of(payload_) || address_of(p) - address_of(payload_) >= payload_bytes())
      return Ternary::no;
    const std::size_t blk = (address_of(p) - address_of(payload_)) / bs();
    if (!((word_now(blk / 64) >> (blk % 64)) & 1u)) return Ternary::no;
    const start_bits::Allocation a =
        start_bits::allocation_of(starts(), blocks_, blk, [this](std::size_t wi) { return word_now(wi); });
    ALLOY_ASSERT(a.first != npos,
                 "internal: BitmappedBlockWithInternalPointers: no block start at or before this block");
    if (a.first == npos) return Ternary::no;
    result = {payload_ + a.first * bs(), (a.end - a.first) * bs()};
    return Ternary::yes;
  }

 private:
  // The start bitmap: the words after the control bitmap's.
  std::uint64_t* starts() const noexcept { return bits_ + words_; }
  // b, after its blocks were taken: the first of them marked as an allocation's start, the others cleared.
  Block marked(Block b) noexcept {
    if (b) {
      const std::size_t off = offset_of(b.ptr), i = off / bs();
      start_bits::mark(starts(), i, divide_round_up(off + b.size, bs()) - i);
    }
    return b;
  }
  // Whether blocks [i, i + k) are exactly one live allocation (it starts at i, none starts inside, and block i + k is
  // free, the start of another, or past the end); ALLOY_ASSERT in debug builds.
  bool check_whole_allocation(std::size_t i, std::size_t k) const noexcept {
    const bool whole = start_bits::is_whole(starts(), blocks_, i, k, [this](std::size_t wi) { return word_now(wi); });
    ALLOY_ASSERT(whole, "BitmappedBlockWithInternalPointers::deallocate: the Block is not one allocation (a size other "
                        "than the one allocated, or a pointer inside it); give back the Block that allocate returned");
    return whole;
  }
};

}  // namespace alloy::detail
