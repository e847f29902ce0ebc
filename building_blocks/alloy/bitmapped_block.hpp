#pragma once
/// \file alloy/bitmapped_block.hpp
/// BitmappedBlock, SharedBitmappedBlock and BitmappedBlockWithInternalPointers: D's
/// `std.experimental.allocator.building_blocks.bitmapped_block`, on host and device memory. Each is
/// detail::BitmappedBlockImpl (detail/bitmapped_block_impl.hpp: construction, moves, reallocate) over the engine of
/// its mode: detail/bitmapped_block_core.hpp (single-threaded), detail/shared_bitmapped_block.hpp (atomic bitmap),
/// detail/bitmapped_block_internal_pointers.hpp (the single-threaded engine with start bits). docs/bitmapped_block.md
/// has the layout and the differences from D.
#include <cstddef>
#include <span>

#include <alloy/common.hpp>
#include <alloy/detail/bitmapped_block_core.hpp>
#include <alloy/detail/bitmapped_block_impl.hpp>
#include <alloy/detail/bitmapped_block_internal_pointers.hpp>
#include <alloy/detail/shared_bitmapped_block.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/null_allocator.hpp>

namespace alloy {

/// BitmappedBlock<BlockSize, Alignment = platform_alignment, Parent = NullAllocator, Multiblock M = Multiblock::yes,
///                Bookkeeping = Mallocator>
///
/// Semantics: one contiguous payload cut into blocks of BlockSize bytes and one bit per block (set = allocated).
/// A request of n bytes takes k = ceil(n / BlockSize) adjacent blocks: the lowest-addressed free run of k blocks
/// (exact first fit), and returns exactly n bytes. Freeing coalesces by itself (it only clears bits).
/// Memory comes from a caller's span (`BitmappedBlock(std::span<std::byte>)`, never freed by the block), or from
/// Parent (`BitmappedBlock(capacity)`, `BitmappedBlock(Parent, capacity)`: ceil(capacity / BlockSize) blocks, given
/// back to Parent by the destructor). With `BlockSize == choose_at_runtime` every constructor takes the block size
/// (a positive multiple of Alignment) as a trailing argument.
/// Layout: over host memory, D's: the bitmap at the start, the payload after it aligned to Alignment; over the same
/// span D and alloy (Multiblock::yes) hand out the same offsets (Multiblock::no takes the lowest free block where
/// D rotates its start word). Over device memory (`!host_accessible<Parent>`) the bitmap lives in
/// host memory from Bookkeeping (a stateless host allocator) and the payload is never touched by the host.
/// Search: a hint (every word before it is full) and, for multiblock, a summary index (one byte per word bounding its
/// longest free run, in host memory from Bookkeeping), so that a search skips words that cannot fit.
/// Bookkeeping = NullAllocator (host parents only): no memory outside the block's own, no summary index; the search
/// walks the words from the hint, as D's does.
/// Capabilities: allocate, aligned_allocate, deallocate, deallocate_all, owns (the payload range, as in D), empty,
/// good_alloc_size (n rounded up to a multiple of BlockSize, even beyond what one allocation can take), expand (Multiblock::no: inside
/// the block); reallocate and aligned_reallocate iff Parent is host-accessible or has copy; allocate_all and
/// allocate_fresh iff M is Multiblock::yes; copy iff Parent has copy. `block_count()`, `block_size()`, `payload()`.
/// The queries (owns, empty, good_alloc_size, those three) are const.
/// Multiblock::no: requests of at most BlockSize bytes only, through a single-bit fast path.
/// Parent: any allocator; NullAllocator (the default) means a caller's span. Memory space: Parent's.
/// Thread safety: none (SharedBitmappedBlock is the thread-safe one).
/// Failure: an empty Block when no run of free blocks fits, for n == 0 and for sizes whose rounding overflows.
/// A double free or a foreign block trips ALLOY_ASSERT in debug builds; in release builds deallocate refuses them
/// (false, nothing changed). A wrong size is refused only by BitmappedBlockWithInternalPointers (docs/primitives.md).
/// Example:
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// alloy::BitmappedBlock<64, 16, alloy::Mallocator> a(65536);        // 64 KiB: 1024 blocks of 64 bytes
/// CHECK(a.block_count() == 1024);
/// alloy::Block x = a.allocate(100);                                 // 2 blocks
/// alloy::Block y = a.allocate(10);                                  // the next block
/// CHECK(static_cast<char*>(y.ptr) - static_cast<char*>(x.ptr) == 128);
/// CHECK(a.deallocate(x));
/// alloy::Block z = a.allocate(64);                                  // first fit: x's first block
/// CHECK(z.ptr == x.ptr);
/// CHECK(a.expand(z, 64));                                           // into x's second block
/// CHECK(!a.expand(z, 1));                                           // y follows
/// CHECK(a.deallocate(y));
/// CHECK(a.deallocate(z));
/// CHECK(a.empty() == alloy::Ternary::yes);
/// ```
template <std::size_t BlockSize, std::size_t Alignment = platform_alignment, class Parent = NullAllocator,
          Multiblock M = Multiblock::yes, class Bookkeeping = Mallocator>
class BitmappedBlock
    : public detail::BitmappedBlockImpl<detail::BitmappedBlockCore<BlockSize, Alignment, Parent, M, Bookkeeping>> {
  using Base = detail::BitmappedBlockImpl<detail::BitmappedBlockCore<BlockSize, Alignment, Parent, M, Bookkeeping>>;

 public:
  using Base::Base;
};

/// SharedBitmappedBlock<BlockSize, Alignment = platform_alignment, Parent = NullAllocator,
///                      Multiblock M = Multiblock::yes, Bookkeeping = Mallocator>
///
/// Semantics: BitmappedBlock, safe to share between threads. Single-block allocate and every deallocate are
/// lock-free: the bitmap words are updated with atomic compare-and-swap / fetch-and. Each thread starts its
/// single-block search at its own word (spread over the bitmap, then wherever it last found a block), so threads
/// do not fight over one cache line; single-block requests are therefore not first fit. Requests of several blocks,
/// aligned_allocate, expand, reallocate, allocate_all, allocate_fresh and deallocate_all take a spin lock among
/// themselves and claim their bits with CAS, so a racing single-block allocation never overlaps them; under the lock
/// the search is first fit from block 0.
/// Capabilities, Parent: BitmappedBlock's.
/// Failure: BitmappedBlock's, except that a search passes the words once: a block or run freed by another thread
/// behind it, in a word already passed, is missed (docs/bitmapped_block.md lists what concurrency leaves inexact).
/// Thread safety: every primitive may run concurrently with any other, except deallocate_all (no other call may run
/// while it does), moving, and destruction.
/// Example:
/// ```cpp
/// #include <thread>
/// #include <alloy/mallocator.hpp>
/// alloy::SharedBitmappedBlock<64, 16, alloy::Mallocator> a(65536);  // 64 KiB
/// alloy::Block b1{}, b2{};
/// std::thread t1([&] { b1 = a.allocate(64); });
/// std::thread t2([&] { b2 = a.allocate(64); });
/// t1.join();
/// t2.join();
/// CHECK((b1 && b2 && b1.ptr != b2.ptr));
/// CHECK(a.deallocate(b1));
/// CHECK(a.deallocate(b2));
/// CHECK(a.empty() == alloy::Ternary::yes);
/// ```
template <std::size_t BlockSize, std::size_t Alignment = platform_alignment, class Parent = NullAllocator,
          Multiblock M = Multiblock::yes, class Bookkeeping = Mallocator>
class SharedBitmappedBlock : public detail::BitmappedBlockImpl<
                                 detail::SharedBitmappedBlockCore<BlockSize, Alignment, Parent, M, Bookkeeping>> {
  using Base =
      detail::BitmappedBlockImpl<detail::SharedBitmappedBlockCore<BlockSize, Alignment, Parent, M, Bookkeeping>>;

 public:
  using Base::Base;
};

/// BitmappedBlockWithInternalPointers<BlockSize, Alignment = platform_alignment, Parent = NullAllocator,
///                                    Bookkeeping = Mallocator>
///
/// Semantics: a multiblock BitmappedBlock with a second bitmap that marks the first block of every allocation, so
/// `resolve_internal_pointer(p, r)` finds the live allocation that contains p: `yes` and its whole blocks in r, in
/// O(size of the allocation). A pointer into a free block, or outside the payload, gives `no` (D also "resolves"
/// freed blocks).
/// Layout: on host memory the start bitmap follows the control bitmap at the start of the memory (two bits per
/// block); on device memory both bitmaps live in host memory from Bookkeeping.
/// Capabilities: BitmappedBlock's (Multiblock::yes), plus resolve_internal_pointer.
/// Thread safety: none. Failure: BitmappedBlock's.
/// Example:
/// ```cpp
/// std::vector<std::byte> mem(65536);  // 64 KiB
/// alloy::BitmappedBlockWithInternalPointers<64> a{std::span<std::byte>(mem)};
/// alloy::Block b = a.allocate(200);                                 // 4 blocks
/// alloy::Block r{};
/// CHECK(a.resolve_internal_pointer(static_cast<char*>(b.ptr) + 150, r) == alloy::Ternary::yes);
/// CHECK((r.ptr == b.ptr && r.size == 256));
/// CHECK(a.deallocate(b));
/// CHECK(a.resolve_internal_pointer(b.ptr, r) == alloy::Ternary::no);   // freed: not resolved
/// ```
template <std::size_t BlockSize, std::size_t Alignment = platform_alignment, class Parent = NullAllocator,
          class Bookkeeping = Mallocator>
class BitmappedBlockWithInternalPointers : public detail::BitmappedBlockImpl<
                                               detail::BitmappedBlockInternalPointers<BlockSize, Alignment, Parent, Bookkeeping>> {
  using Base = detail::BitmappedBlockImpl<
      detail::BitmappedBlockInternalPointers<BlockSize, Alignment, Parent, Bookkeeping>>;

 public:
  using Base::Base;
};

}  // namespace alloy
