#pragma once
/// \file alloy/detail/bitmapped_block_base.hpp
/// What every BitmappedBlock mode shares: the checks of the template arguments, the block size (a constant, or a
/// member when it is chosen at run time), the layout and ownership of the bitmap and payload (BitmapLayout, a base),
/// the size arithmetic, the ownership checks of the primitives, and the queries that read no bitmap word
/// (block_count, block_size, payload, parent, good_alloc_size, owns, copy). The bottom of each engine:
/// detail/bitmapped_block_core.hpp (single-threaded), detail/shared_bitmapped_block.hpp (SharedBitmappedBlock), the
/// former wrapped by detail/bitmapped_block_internal_pointers.hpp. Internal: use <alloy/bitmapped_block.hpp>.
///
/// Invariants (between the calls of its owner), on top of BitmapLayout's (detail/bitmap_layout.hpp):
///   * bs() is a positive multiple of Alignment; with blocks it is at most SIZE_MAX / 64 (the hint word's 64 blocks
///     fit in a size_t) and blocks_ * bs() bytes from payload_ do not overflow;
///   * the payload holds exactly blocks_ blocks: owns, deallocate and expand accept only a Block that starts at one of
///     their bytes and ends inside them (is_owned), whatever the bitmap says.
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>

#include <alloy/common.hpp>
#include <alloy/detail/bitmap.hpp>
#include <alloy/detail/bitmap_layout.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/null_allocator.hpp>

namespace alloy::detail {

// The block size: a constant, or a member when it is chosen at run time (empty base when static).
template <std::size_t BlockSize>
struct BlockSizeStore {
  static constexpr std::size_t block_size() noexcept { return BlockSize; }
  constexpr void set_block_size(std::size_t) noexcept {}
};
template <>
struct BlockSizeStore<choose_at_runtime> {
  std::size_t bs_ = 0;
  [[nodiscard]] std::size_t block_size() const noexcept { return bs_; }
  void set_block_size(std::size_t s) noexcept { bs_ = s; }
};

// An absent member, one type per member ([[no_unique_address]] members of one empty type need distinct addresses).
template <int Member>
struct Absent {};

// Declared here, defined by the tests only (tests/support/bitmapped_block_invariants.hpp): reads the private state
// to check the block's invariants after every operation of the randomized tests.
struct BitmappedBlockInspector;

/// Maps: 1 (the control bitmap), or 2 (and the start bitmap after it: BitmappedBlockWithInternalPointers).
template <std::size_t BlockSize, std::size_t Alignment, class Parent, Multiblock M, class Bookkeeping, std::size_t Maps>
class BitmappedBlockBase : protected BlockSizeStore<BlockSize>,
                           protected BitmapLayout<Alignment, Parent, Bookkeeping, Maps> {
  friend struct BitmappedBlockInspector;
  static_assert(is_power_of_two(Alignment),
                "BitmappedBlock: Alignment must be a power of two (e.g. 16 = platform_alignment, 64, 4096)");
  static_assert(BlockSize > 0, "BitmappedBlock: BlockSize must be positive (or choose_at_runtime)");
  static_assert(BlockSize == choose_at_runtime || BlockSize % Alignment == 0,
                "BitmappedBlock: BlockSize must be a multiple of Alignment, so that every block is aligned; "
                "raise BlockSize or lower Alignment");
  static_assert(allocator<Parent>,
                "BitmappedBlock: Parent must be an alloy allocator (a type with `static constexpr std::size_t "
                "alignment` and `Block allocate(std::size_t) noexcept`, e.g. alloy::Mallocator; NullAllocator, the "
                "default, for a caller's span)");
  static_assert(!host_accessible<Parent> || Parent::alignment >= alignof(std::uint64_t),
                "BitmappedBlock: the bitmap is stored at the start of the parent's memory, so the parent's alignment "
                "must be at least 8");
  static_assert(host_accessible<Parent> || (allocator<Bookkeeping> && has_deallocate<Bookkeeping> &&
                                            host_accessible<Bookkeeping> && std::is_empty_v<Bookkeeping>),
                "BitmappedBlock over device memory keeps its bitmap in host memory from Bookkeeping, which must be a "
                "stateless, host-accessible allocator with deallocate (Mallocator)");
  // Over host memory too: a multiblock block takes its summary index from Bookkeeping{} (a temporary) and gives it
  // back to another one, so a stateful or device Bookkeeping would hand out memory that dies or that the host cannot
  // write (InSituRegion, NoAccessAllocator).
  static_assert(std::is_same_v<Bookkeeping, NullAllocator> ||
                    (allocator<Bookkeeping> && has_deallocate<Bookkeeping> && host_accessible<Bookkeeping> &&
                     std::is_empty_v<Bookkeeping> && std::is_default_constructible_v<Bookkeeping>),
                "BitmappedBlock: Bookkeeping (where the summary index, and over device memory the bitmap, live) must "
                "be a stateless, host-accessible allocator with deallocate (Mallocator, the default), or NullAllocator "
                "over host memory for no memory outside the block's own");
  static_assert(host_accessible<Parent> || !std::is_same_v<Bookkeeping, NullAllocator>,
                "BitmappedBlock over device memory keeps its bitmap in host memory from Bookkeeping; NullAllocator "
                "holds nothing: use Mallocator (the default)");

 protected:
  using Sizes = BlockSizeStore<BlockSize>;
  // Where the bitmap and the payload live and who owns them (detail/bitmap_layout.hpp).
  using Layout = BitmapLayout<Alignment, Parent, Bookkeeping, Maps>;
  using ParentType = Parent;
  using Layout::bits_;
  using Layout::blocks_;
  using Layout::maps;
  using Layout::parent_;
  using Layout::payload_;
  using Layout::words_;
  static constexpr bool runtime_block_size = BlockSize == choose_at_runtime;
  static constexpr bool has_parent = !std::is_same_v<Parent, NullAllocator>;
  static constexpr bool multi = M == Multiblock::yes;
  static constexpr std::size_t npos = bitmap::npos;
  static constexpr std::uint64_t all_ones = bitmap::all_ones;

 public:
  static constexpr std::size_t alignment = Alignment;
  static constexpr MemorySpace memory_space = memory_space_of<Parent>();

  using Sizes::block_size;
  /// Number of blocks managed.
  [[nodiscard]] std::size_t block_count() const noexcept { return blocks_; }
  /// The first byte of block 0 (blocks are contiguous from there).
  [[nodiscard]] void* payload() const noexcept { return payload_; }
  /// The parent (by reference: for a stateful parent, the one held here).
  [[nodiscard]] Parent& parent() noexcept { return parent_; }

  /// Bytes a request of n would reserve: n rounded up to a multiple of the block size, whether or not such a request
  /// can succeed now (beyond the payload, Multiblock::no above one block, a block without blocks: allocate says no).
  /// 0 only when the rounding overflows (docs/primitives.md).
  [[nodiscard]] std::size_t good_alloc_size(std::size_t n) const noexcept {
    std::size_t r = 0;
    return hint_at_least(round_up_to_multiple_checked(n, bs(), r) ? r : 0, n, alignment);
  }

  /// Whether b lies inside this block's payload (D's rule: an interior slice counts); b.ptr must be an address of
  /// the payload, so an empty Block at its end is not owned (deallocate's rule). Never unknown.
  [[nodiscard]] Ternary owns(Block b) const noexcept { return to_ternary(b && is_owned(b)); }

  /// Copies within or into this block's memory through the parent (device parents).
  bool copy(void* dst, const void* src, std::size_t n, stream_view s) noexcept requires has_copy<Parent> {
    return parent_.copy(dst, src, n, s);
  }

 protected:
  constexpr BitmappedBlockBase() noexcept = default;
  explicit BitmappedBlockBase(Parent parent) noexcept : Layout(std::move(parent)) {}
  /// A move's: o's block size and parent (the memory follows through take).
  BitmappedBlockBase(const Sizes& sizes, Parent&& parent) noexcept : Sizes(sizes), Layout(std::move(parent)) {}
  BitmappedBlockBase(const BitmappedBlockBase&) = delete;
  BitmappedBlockBase& operator=(const BitmappedBlockBase&) = delete;
  ~BitmappedBlockBase() = default;  // the owner gives the memory back (release) before

  [[nodiscard]] std::size_t bs() const noexcept { return Sizes::block_size(); }
  [[nodiscard]] std::size_t payload_bytes() const noexcept { return blocks_ * bs(); }
  [[nodiscard]] std::size_t offset_of(const void* p) const noexcept { return offset_from(payload_, p); }
  [[nodiscard]] static std::size_t offset_from(const void* base, const void* p) noexcept {
    return static_cast<std::size_t>(address_of(p) - address_of(base));
  }
  // The padding bits of the last word: the blocks past the last one, set for good.
  [[nodiscard]] std::uint64_t pad_mask() const noexcept {
    const unsigned r = static_cast<unsigned>(blocks_ % 64);
    return r ? ~bitmap::mask(0, r) : 0;
  }
  [[nodiscard]] std::size_t blocks_for(std::size_t n) const noexcept { return n / bs() + (n % bs() != 0); }

  // A run-time block size: kept when it is a positive multiple of Alignment; true when blocks of it can exist.
  bool set_runtime_block_size(std::size_t s) noexcept {
    ALLOY_ASSERT(s > 0 && s % Alignment == 0, "BitmappedBlock: the block size must be a positive multiple of Alignment");
    if (s == 0 || s % Alignment != 0) {
      Sizes::set_block_size(Alignment);  // a harmless size for a block allocator that has no blocks
      return false;
    }
    Sizes::set_block_size(s);
    // Above SIZE_MAX / 64 bytes no memory holds a block (and the hint word's 64 blocks would overflow): no blocks.
    return s <= SIZE_MAX / 64;
  }

  // Whether b (one of this block's, size > 0) lies in one block. When BlockSize == Alignment every address handed out is a
  // block boundary, so only the size matters (and folds away for a constant size).
  [[nodiscard]] bool single_block(Block b) const noexcept {
    // b.size - 1: a size of 0 wraps to SIZE_MAX, so one comparison also refuses it (not a single block).
    if constexpr (!multi) {
      return b.size - 1 < bs();
    } else if constexpr (BlockSize == Alignment) {
      ALLOY_ASSERT(offset_of(b.ptr) % bs() == 0,
                   "BitmappedBlock::deallocate: the block does not start at a block boundary");
      return b.size - 1 < bs();
    } else {
      return b.size - 1 < bs() - offset_of(b.ptr) % bs();  // no sum: a huge size must not wrap to a small one
    }
  }

  // b.ptr an address of the payload and b inside it (D's rule). One subtraction: a pointer below payload_ wraps past
  // the payload's size, and without blocks the size is 0.
  bool is_owned(Block b) const noexcept {
    const std::size_t off = offset_of(b.ptr), bytes = payload_bytes();
    return off < bytes && b.size <= bytes - off;
  }
  bool check_owned(Block b) const noexcept {
    const bool ok = is_owned(b);
    ALLOY_ASSERT(ok, "BitmappedBlock: this block did not come from this allocator");
    return ok;
  }
  // deallocate's fast path: a foreign block (outside the payload) is refused, after ALLOY_ASSERT in debug builds. A
  // non-null Block of size 0 is foreign too: allocate(0) fails, and no primitive leaves a live Block at size 0 (D
  // frees nothing for one; the fast path would free the block it points into).
  bool check_deallocatable(Block b) const noexcept {
    ALLOY_ASSERT(b.size != 0, "BitmappedBlock::deallocate: a Block of size 0 was never handed out (allocate(0) "
                              "fails); give back the Block that allocate returned");
    return b.size != 0 && check_owned(b);
  }

  // The arguments of the primitives whose checks every mode shares; each mode then claims or frees under its own
  // guard. aligned_allocate (multiblock, a > Alignment, n > 0): the blocks a run needs so that n bytes fit at an
  // address aligned to a wherever the run starts (n + a - Alignment bytes); 0 when none can (overflow, more than
  // every block).
  [[nodiscard]] std::size_t aligned_run_blocks(std::size_t n, std::size_t a) const noexcept {
    std::size_t m = 0;
    if (!add_checked(n, a - Alignment, m)) return 0;
    const std::size_t k = blocks_for(m);
    return k - 1 >= blocks_ ? 0 : k;
  }
  // Multiblock::no aligned_allocate: the address aligned to a in block idx that leaves room for n bytes in the block,
  // or 0 when there is none.
  [[nodiscard]] std::uintptr_t aligned_spot(std::size_t idx, std::size_t n, std::size_t a) const noexcept {
    const std::uintptr_t start = address_of(payload_ + idx * bs());
    const std::uintptr_t res = align_up(start, a);
    return res - start + n <= bs() ? res : 0;
  }
  // expand (delta > 0): whether b, one of this block's, may grow by delta within the payload (with Multiblock::no,
  // within its block); the blocks it holds end at old_end, grown they would end at new_end.
  bool expand_bounds(Block b, std::size_t delta, std::size_t& old_end, std::size_t& new_end) const noexcept {
    if (!b || !check_owned(b)) return false;
    const std::size_t off = offset_of(b.ptr);
    std::size_t end = 0;
    if (!add_checked(off + b.size, delta, end) || end > payload_bytes()) return false;
    if constexpr (!multi) {
      if (end > (off / bs() + 1) * bs()) return false;
    }
    old_end = divide_round_up(off + b.size, bs());
    new_end = divide_round_up(end, bs());
    return true;
  }
  // reallocate's shrink of b to its first n bytes (n < b.size): the blocks past them that b holds, [keep, had).
  void shrink_range(Block b, std::size_t n, std::size_t& keep, std::size_t& had) const noexcept {
    const std::size_t off = offset_of(b.ptr);
    keep = divide_round_up(off + n, bs());
    had = divide_round_up(off + b.size, bs());
  }
};

}  // namespace alloy::detail
