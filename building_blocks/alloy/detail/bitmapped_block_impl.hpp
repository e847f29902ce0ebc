#pragma once
/// \file alloy/detail/bitmapped_block_impl.hpp
/// The one implementation behind BitmappedBlock, SharedBitmappedBlock and BitmappedBlockWithInternalPointers
/// (as Phobos' BitmappedBlockImpl mixin). Internal: use <alloy/bitmapped_block.hpp>. Its units, each with its
/// invariants in its header: detail/bitmap.hpp (word operations), detail/bitmap_layout.hpp (where the
/// bitmap and payload live and who owns them: the base of this class), detail/bitmap_summary.hpp (the summary
/// index of the single-threaded multiblock search), detail/bitmap_search.hpp (the multiblock search: the exact
/// first fit over the words and the summary), detail/atomic_bitmap.hpp (SharedBitmappedBlock's CAS claims, lock and
/// per-thread start words), detail/start_bits.hpp (BitmappedBlockWithInternalPointers' start bits),
/// detail/hint_cache.hpp (the single-threaded block's search hint and its cached word, with the rule that binds
/// every path: between calls the cached word is the true hint word).
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>

#include <sched.h>  // sched_yield, not <thread>: 0.2 s less per translation unit (g++ 12 -O2)

#include <alloy/common.hpp>
#include <alloy/detail/atomic_bitmap.hpp>
#include <alloy/detail/bitmap.hpp>
#include <alloy/detail/bitmap_layout.hpp>
#include <alloy/detail/bitmap_search.hpp>
#include <alloy/detail/bitmap_summary.hpp>
#include <alloy/detail/hint_cache.hpp>
#include <alloy/detail/start_bits.hpp>
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

// The other absent members, one type each ([[no_unique_address]] members of one empty type need distinct addresses).
template <int Member>
struct Absent {};

// Declared here, defined by the tests only (tests/support/bitmapped_block_invariants.hpp): reads the private state
// to check the block's invariants after every operation of the randomized tests.
struct BitmappedBlockInspector;

template <std::size_t BlockSize, std::size_t Alignment, class Parent, Multiblock M, class Bookkeeping, bool Shared,
          bool Starts>
class BitmappedBlockImpl : private BlockSizeStore<BlockSize>,
                           private BitmapLayout<Alignment, Parent, Bookkeeping, Starts ? 2 : 1> {
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
  static_assert(!(Starts && Shared), "internal: no shared variant with internal pointers");

  using Sizes = BlockSizeStore<BlockSize>;
  // Where the bitmap and the payload live and who owns them (detail/bitmap_layout.hpp).
  using Layout = BitmapLayout<Alignment, Parent, Bookkeeping, Starts ? 2 : 1>;
  using Layout::bits_;
  using Layout::blocks_;
  using Layout::in_band;
  using Layout::maps;
  using Layout::mem_;
  using Layout::parent_;
  using Layout::payload_;
  using Layout::words_;
  using Layout::words_for;
  static constexpr bool multi = M == Multiblock::yes;
  static constexpr bool has_parent = !std::is_same_v<Parent, NullAllocator>;
  static constexpr std::size_t npos = bitmap::npos;
  // The summary index (single-threaded multiblock only; detail/bitmap_summary.hpp, whose header states its rules and
  // invariants): one byte per word, an upper bound of the longest free run that starts there, so that searches skip
  // the words that cannot hold a run of k. The hint word is its exception: the fast single-block free does not raise
  // its byte, and the summary's snapshot of the word restores the bound (refresh) before a search reads the
  // byte or the hint moves back.
  // Bookkeeping = NullAllocator over host memory: no memory outside the block's own at all, hence no summary (D's
  // word-by-word search from the hint).
  static constexpr bool summarized = multi && !Shared && !std::is_same_v<Bookkeeping, NullAllocator>;
  // Single-threaded multiblock: the hint cache's mask of the hint word's blocks below the fresh cursor; its word
  // shows the others as taken (HintCache::logical).
  static constexpr bool fresh_masked = multi && !Shared;
  // Single-threaded: between calls the hint word's bits live in the object (hint_.bits_, detail/hint_cache.hpp), as in
  // the one-word floor: the single-block fast paths read and write that member only, with no pointer to load (W1).
  // Its bitmap word is brought up to date when any other path starts and the member reloaded when it ends (HintSync,
  // and Guard), so everything else works on bits_. Queries that read the bitmap without a guard use word_now.
  static constexpr bool cached = !Shared;
  static constexpr std::uint64_t all_ones = bitmap::all_ones;

 public:
  static constexpr std::size_t alignment = Alignment;
  static constexpr MemorySpace memory_space = memory_space_of<Parent>();

  // ----------------------------------------------------------------------------------------------------------
  // Construction

  /// No memory: every allocation fails.
  BitmappedBlockImpl() noexcept requires(BlockSize != choose_at_runtime && std::is_default_constructible_v<Parent>)
  = default;

  /// Over a caller's memory, which the block never frees: D's layout (bitmap first, payload after, aligned).
  explicit BitmappedBlockImpl(std::span<std::byte> mem) noexcept
    requires(BlockSize != choose_at_runtime && std::is_default_constructible_v<Parent>)
  {
    if (Layout::init_span(mem, bs())) init_bits();
  }
  BitmappedBlockImpl(std::span<std::byte> mem, std::size_t block_size) noexcept
    requires(BlockSize == choose_at_runtime && std::is_default_constructible_v<Parent>)
  {
    if (set_runtime_block_size(block_size) && Layout::init_span(mem, bs())) init_bits();
  }
  /// Draws ceil(capacity / block_size) blocks from the parent (one allocation of bitmap + payload on the host).
  explicit BitmappedBlockImpl(std::size_t capacity) noexcept
    requires(has_parent && BlockSize != choose_at_runtime && std::is_default_constructible_v<Parent>)
  {
    if (Layout::init_capacity(capacity, bs())) init_bits();
  }
  BitmappedBlockImpl(std::size_t capacity, std::size_t block_size) noexcept
    requires(has_parent && BlockSize == choose_at_runtime && std::is_default_constructible_v<Parent>)
  {
    if (set_runtime_block_size(block_size) && Layout::init_capacity(capacity, bs())) init_bits();
  }
  BitmappedBlockImpl(Parent parent, std::size_t capacity) noexcept
    requires(has_parent && BlockSize != choose_at_runtime)
      : Layout(std::move(parent)) {
    if (Layout::init_capacity(capacity, bs())) init_bits();
  }
  BitmappedBlockImpl(Parent parent, std::size_t capacity, std::size_t block_size) noexcept
    requires(has_parent && BlockSize == choose_at_runtime)
      : Layout(std::move(parent)) {
    if (set_runtime_block_size(block_size) && Layout::init_capacity(capacity, bs())) init_bits();
  }

  BitmappedBlockImpl(const BitmappedBlockImpl&) = delete;
  BitmappedBlockImpl& operator=(const BitmappedBlockImpl&) = delete;
  /// Moving transfers the memory; the source is left with none. Not while another thread uses the source.
  BitmappedBlockImpl(BitmappedBlockImpl&& o) noexcept
      : Sizes(static_cast<const Sizes&>(o)), Layout(std::move(o.parent_)) {
    take(o);
  }
  BitmappedBlockImpl& operator=(BitmappedBlockImpl&& o) noexcept {
    if (this != &o) {
      release();
      static_cast<Sizes&>(*this) = static_cast<const Sizes&>(o);
      parent_ = std::move(o.parent_);
      take(o);
    }
    return *this;
  }
  ~BitmappedBlockImpl() { release(); }

  // ----------------------------------------------------------------------------------------------------------
  // Queries

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

  [[nodiscard]] Ternary empty() const noexcept {
    if (words_ == 0) return Ternary::yes;
    for (std::size_t i = 0; i + 1 < words_; ++i)
      if (word_now(i) != 0) return Ternary::no;
    return to_ternary(word_now(words_ - 1) == pad_mask());
  }

  // ----------------------------------------------------------------------------------------------------------
  // Allocation

  Block allocate(std::size_t n) noexcept {
    if constexpr (!Shared) {
      // The single-block fast path: one word, the one at the search hint (every word before it is full).
      if (n - 1 < bs()) [[likely]] {
        // hint_.bits_ is the hint word (see `cached`; all ones when there is no block) and hint_.base_ the payload of
        // its first block (see sync_hint): no pointer and no index arithmetic.
        // Multiblock: hint_.bits_ shows the blocks at or past the fresh cursor as taken (HintCache::logical), so that
        // this path never moves the cursor; the first free block at or past it is taken by alloc1, which does.
        // First fit still holds: when the lowest free block is at or past the cursor, nothing is left here and
        // alloc1 finds it.
        std::byte* const base = hint_.base_;
        const std::uint64_t w = hint_.bits_;
        const std::uint64_t free = ~w;
        if (free) [[likely]] {
          const std::size_t j = count_trailing_zeros(free);
          hint_.bits_ = w | (std::uint64_t{1} << j);
          if constexpr (Starts) mark_start(hint_.start_ * 64 + j, 1);
          std::byte* const p = base + j * bs();
          // A free bit means there are blocks, so the payload is not null: telling the compiler lets a caller's
          // `if (!b)` after an inlined allocate fold away.
          if (p == nullptr) __builtin_unreachable();
          return {p, n};
        }
        const std::size_t idx = alloc1_synced();
        if (idx == npos) return {};
        return {payload_ + idx * bs(), n};
      }
    }
    if constexpr (!multi) {
      if (n - 1 >= bs()) return {};  // n == 0 or n > block size
      const std::size_t i = alloc1();
      if (i == npos) return {};
      return {payload_ + i * bs(), n};
    } else {
      const std::size_t k = blocks_for(n);
      if (k - 1 >= blocks_) return {};  // n == 0, or more blocks than exist
      std::size_t i;
      if (k == 1) {
        i = alloc1();  // Shared only: single-threaded, n <= block size took the fast path
      } else if (summarized && k <= 64) {
        i = alloc_small(static_cast<unsigned>(k));  // syncs the hint word itself, when it probes it
      } else {
        i = alloc_blocks_guarded(k);
      }
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
        // Shared: a lock-free single-block allocate may have taken a block of [f, f + k), raised the cursor and
        // freed the block after the cursor was read above. Its raise is sequenced before its free,
        // and the claim's acquire CAS read that release free: a second read of the cursor sees the raise.
        if (!Shared || load_fresh() == f) {
          raise_fresh(f + k);
          after_claim(f, k);
          if constexpr (Starts) mark_start(f, k);
          return {payload_ + f * bs(), n};
        }
        release_range(f, k);
      } else if constexpr (!Shared) {
        return {};  // not reached: single-threaded, blocks at or past the cursor are free
      } else if (load_fresh() == f) {
        // A bit at or past the cursor is set: a lock-free allocate that has not raised the cursor yet (every
        // locked path raises it under the lock). Its raise comes next.
        ::sched_yield();
      }
    }
  }

  /// n bytes at an address aligned to a (a power of two). Above `alignment` (multiblock): allocates
  /// n + a - alignment bytes, then gives back the whole blocks before and after the aligned part (D's method).
  Block aligned_allocate(std::size_t n, std::size_t a) noexcept {
    if (!is_power_of_two(a)) return {};
    if (a <= Alignment) return allocate(n);
    if (n == 0) return {};
    if constexpr (!multi) {
      if (n > bs()) return {};
      return alloc1_aligned(n, a);
    } else {
      std::size_t m = 0;
      if (!add_checked(n, a - Alignment, m)) return {};
      const std::size_t k = blocks_for(m);
      if (k - 1 >= blocks_) return {};
      Guard g(this);
      if constexpr (Shared) return aligned_claim(n, a, k);
      const std::size_t i = k == 1 ? alloc1() : alloc_blocks(k);
      if (i == npos) return {};
      std::byte* const start = payload_ + i * bs();
      std::byte* const res = static_cast<std::byte*>(align_up(static_cast<void*>(start), a));
      const std::size_t lead = static_cast<std::size_t>(res - start) / bs();
      const std::size_t used_end = divide_round_up(static_cast<std::size_t>(res - payload_) + n, bs());
      if (lead) release_range(i, lead);
      if (i + k > used_end) release_range(used_end, i + k - used_end);
      if constexpr (Starts) mark_start(i + lead, used_end - i - lead);
      return {res, n};
    }
  }

  /// When nothing is allocated: every block in one Block of block_count() * block_size() bytes.
  Block allocate_all() noexcept requires multi {
    Guard g(this);
    if (blocks_ == 0 || empty() != Ternary::yes) return {};
    if (!claim(0, blocks_)) return {};
    raise_fresh(blocks_);
    set_start(words_ - 1);
    if constexpr (Starts) mark_start(0, blocks_);
    return {payload_, payload_bytes()};
  }

  /// Grows b in place into the blocks that follow it, when they are free.
  bool expand(Block& b, std::size_t delta) noexcept {
    if (delta == 0) return true;
    if (!b) return false;
    if (!check_owned(b)) return false;
    const std::size_t off = offset_of(b.ptr);
    std::size_t new_end = 0;
    if (!add_checked(off + b.size, delta, new_end) || new_end > payload_bytes()) return false;
    if constexpr (!multi) {
      if (new_end > (off / bs() + 1) * bs()) return false;
      b.size += delta;
      return true;
    } else {
      const std::size_t old_blk = divide_round_up(off + b.size, bs()), new_blk = divide_round_up(new_end, bs());
      if (new_blk > old_blk) {
        Guard g(this);
        if (!range_free(old_blk, new_blk - old_blk) || !claim(old_blk, new_blk - old_blk)) return false;
        raise_fresh(new_blk);
        after_claim(old_blk, new_blk - old_blk);
        if constexpr (Starts) clear_starts(old_blk, new_blk - old_blk);
      }
      b.size += delta;
      return true;
    }
  }

  /// Resizes b: shrinks in place (giving back trailing blocks), grows in place when the following blocks are free,
  /// else allocates, copies (through the parent's copy on device memory) and frees. On failure b is unchanged.
  bool reallocate(Block& b, std::size_t n) noexcept requires(host_accessible<Parent> || has_copy<Parent>) {
    if (bool r; alloy::detail::reallocate_ends(*this, b, n, r)) return r;
    if (n == b.size) return true;
    if (!check_owned(b)) return false;
    if (n < b.size) {
      shrink(b, n);
      return true;
    }
    if (expand(b, n - b.size)) return true;
    return move_to(b, allocate(n));
  }

  /// reallocate that keeps b aligned to a: in place when b is already aligned to a and the space allows it.
  bool aligned_reallocate(Block& b, std::size_t n, std::size_t a) noexcept
    requires(host_accessible<Parent> || has_copy<Parent>)
  {
    if (!is_power_of_two(a)) return false;
    auto aligned_alloc = [this, a](std::size_t m) noexcept { return aligned_allocate(m, a); };
    if (bool r; alloy::detail::reallocate_ends(*this, b, n, r, aligned_alloc)) return r;
    if (!check_owned(b)) return false;
    if (is_aligned(b.ptr, a)) {
      if (n <= b.size) {
        if (n < b.size) shrink(b, n);
        return true;
      }
      if (expand(b, n - b.size)) return true;
    }
    return move_to(b, aligned_allocate(n, a));
  }

  bool deallocate(Block b) noexcept {
    if (!b) return true;
    if constexpr (!Shared) {
      // The single-block fast paths (one test of the size first: W3 frees blocks of 1 to 8 blocks at random; a Block
      // of size 0 is not a single block). A foreign block or a double free is refused (false, nothing changed),
      // after ALLOY_ASSERT in debug builds.
      if (single_block(b)) {
        // Debug builds, and start bits (which need the offset checked before they are read): the full checks first,
        // so that a misuse is named exactly.
        if constexpr (ALLOY_ENABLE_ASSERTS || Starts) {
          if (!check_deallocatable(b)) return false;
        }
        if constexpr (Starts) {
          if (!check_whole_allocation(offset_of(b.ptr) / bs(), 1)) return false;
        }
        // A block of the hint word (W1's whole loop): its offset from hint_.base_, no index arithmetic, and no hint
        // or summary work (a stale summary byte is found later through the summary's snapshot, refresh_hint_byte).
        // The bound hint_.span_ covers only blocks of the payload whose bits in hint_.bits_ are true, so the release
        // checks cost nothing here: a pointer past it takes the range test below, and a double free clears a bit
        // that is already clear (nothing changes; the answer is false). No branch on the bit: W1 ignores the answer.
        const std::size_t d = offset_from(hint_.base_, b.ptr);
        if (d < hint_.span_) [[likely]] {
          const std::size_t j = d / bs();
          const bool live = (hint_.bits_ >> j) & 1u;
          ALLOY_ASSERT(live, "BitmappedBlock::deallocate: double free (the block is not allocated)");
          hint_.bits_ &= std::rotl(~std::uint64_t{1}, static_cast<int>(j));  // one rotate, no shift + not
          return live;
        }
        const std::size_t off = offset_of(b.ptr);
        if constexpr (!ALLOY_ENABLE_ASSERTS && !Starts) {
          // Release ownership: the address in the payload is enough for a single block (it lies in the block of
          // that address, single_block; an address that is not a block boundary, when BlockSize == Alignment,
          // frees its block as D does, after ALLOY_ASSERT in debug builds).
          if (off >= payload_bytes()) [[unlikely]] return false;
        }
        // Not a block below hint_.span_: in another word, so bits_[wi] is current (hint_.bits_ only goes back to
        // bits_ when the hint moves back to wi; W2's shuffled drain frees here, mostly after the hint), or a block
        // of the hint word at or past the fresh cursor (multiblock), never allocated: its bit in the bitmap word is
        // clear (the fast allocate never takes one), so it is refused as a double free. No branch on the bit, as
        // above: clearing a clear bit changes nothing, no word before the hint has one (they are full), and raising
        // a summary byte only loosens a bound.
        const std::size_t i = off / bs(), wi = i / 64;
        std::uint64_t* const bits = bits_;
        const bool live = (bits[wi] >> (i % 64)) & 1u;
        ALLOY_ASSERT(live, "BitmappedBlock::deallocate: double free (the block is not allocated)");
        bits[wi] &= std::rotl(~std::uint64_t{1}, static_cast<int>(i % 64));
        if (wi < hint_.start_) {
          HintSync sync(this);
          lower_start(wi);
        }
        // Its byte and the previous word's to 64 (a bound; wi - 1 may be the hint word). The exact raise
        // (raise_one_word, as multi-block frees do) cost W2's shuffled drain about 1.5 ns per free and bought W3
        // under 2% (docs/design_notes.md).
        if constexpr (summarized) summary_.raise_pair(wi);
        return live;
      }
    } else {
      if (single_block(b)) [[likely]] {
        if (!check_deallocatable(b)) return false;
        return release1(offset_of(b.ptr) / bs());
      }
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
      // Every block of it allocated (else a double free, or a size larger than allocated into free blocks: refused,
      // nothing changed) and, with start bits, exactly one allocation (else a wrong size or an interior pointer).
      // The in-word path past the hint tests its one word itself; the others call check_live.
      if constexpr (Starts) {
        if (!check_live(i, k) || !check_whole_allocation(i, k)) return false;
      }
      if constexpr (summarized) {
        // Most multi-block frees stay inside one word: cleared and summarized here, with no further call (W3).
        // release_in_word reads and writes words wf - 1 to wf + 1 only, and moves the hint only back to wf: past
        // the hint's next word none of them is the hint word, so hint_.bits_ needs no round trip through bits_.
        if (const unsigned p = static_cast<unsigned>(i % 64); k <= 64 - p) [[likely]] {
          const std::size_t wf = i / 64;
          if (wf > hint_.start_ + 1) [[likely]] {
            const std::uint64_t m = bitmap::low_mask(static_cast<unsigned>(k)) << p;
            const bool live = (bits_[wf] & m) == m;
            ALLOY_ASSERT(live, "BitmappedBlock::deallocate: double free (a block is not allocated)");
            if (!live) [[unlikely]] return false;
            clear_in_word(wf, p, static_cast<unsigned>(k));  // past the hint: it does not move
            raise_one_word(wf, p);
            return true;
          }
        }
      }
      return release_checked(i, k);
    }
  }

  /// Frees every block. Not concurrently with other calls.
  bool deallocate_all() noexcept {
    Guard g(this);
    for (std::size_t i = 0; i < words_; ++i) store(i, 0);
    if (words_) store(words_ - 1, pad_mask());
    set_start(0);
    reset_snap();
    if constexpr (summarized) summary_.reset(words_);
    return true;
  }

  /// The live allocation that contains p (BitmappedBlockWithInternalPointers): yes and its blocks in `result`;
  /// no for a pointer outside the payload or inside a free block (result unchanged).
  Ternary resolve_internal_pointer(const void* p, Block& result) const noexcept requires Starts {
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

  /// Copies within or into this block's memory through the parent (device parents).
  bool copy(void* dst, const void* src, std::size_t n, stream_view s) noexcept requires has_copy<Parent> {
    return parent_.copy(dst, src, n, s);
  }

 private:
  // ----------------------------------------------------------------------------------------------------------
  // State: the layout's (Layout: parent_, bits_ (control bitmap, then the start bitmap when Starts), payload_,
  // blocks_, words_, mem_), then the hints, the fresh cursor, the lock and the summary, each where its mode uses it.
  // Single-threaded: the search hint and its word's bits kept in the object, with what the fast paths need
  // (detail/hint_cache.hpp, whose header states the rule and its invariants). SharedBitmappedBlock has none: its
  // single-block searches start at a per-thread word, its locked searches at word 0.
  [[no_unique_address]] std::conditional_t<cached, HintCache<fresh_masked>, NoHintCache> hint_{};
  // Multiblock: blocks at and after it were never allocated (allocate_fresh's cursor; Multiblock::no has none).
  [[no_unique_address]] std::conditional_t<multi, std::size_t, Absent<3>> fresh_{};
  // SharedBitmappedBlock: the spin lock of the multiblock operations.
  [[no_unique_address]] std::conditional_t<Shared, SpinLock, Absent<4>> lock_{};
  // The summary index and the hint word's snapshot (see `summarized`).
  [[no_unique_address]] std::conditional_t<summarized, BitmapSummary<Bookkeeping>, NoSummary> summary_{};

  // ----------------------------------------------------------------------------------------------------------
  // Layout

  [[nodiscard]] std::size_t bs() const noexcept { return Sizes::block_size(); }
  [[nodiscard]] std::size_t payload_bytes() const noexcept { return blocks_ * bs(); }
  [[nodiscard]] std::size_t offset_of(const void* p) const noexcept { return offset_from(payload_, p); }
  [[nodiscard]] std::uint64_t pad_mask() const noexcept {
    const unsigned r = static_cast<unsigned>(blocks_ % 64);
    return r ? ~bitmap::mask(0, r) : 0;
  }
  std::uint64_t* starts() const noexcept { return bits_ + words_; }

  [[nodiscard]] std::size_t blocks_for(std::size_t n) const noexcept { return n / bs() + (n % bs() != 0); }

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

  // The bitmap words of freshly laid-out blocks (Layout set bits_, payload_, blocks_, words_): all free, the padding
  // past the last block taken; the hints, the cursor and the summary.
  void init_bits() noexcept {
    std::memset(bits_, 0, words_ * maps * sizeof(std::uint64_t));
    if (words_) bits_[words_ - 1] = pad_mask();
    if constexpr (multi) fresh_ = 0;
    if constexpr (cached) hint_.start_ = 0;
    sync_hint();  // new bits_, payload_ and cursor, whatever the hint was
    reset_snap();
    if constexpr (summarized) {
      if (!summary_.init(words_)) {  // no memory for the index: no blocks either (the search needs it)
        release();
        return;
      }
    }
    load_hint();
  }
  // The summary's snapshot rule for the hint word (BitmapSummary::refresh): called before the summary is read or the
  // hint moves back. In a HintSync the hint word is *hint_.word_; outside one, hint_.bits_ (alloc_small).
  // Without a summary it reads nothing: in SharedBitmappedBlock the hint word is one that lock-free single-block
  // paths CAS, and a plain read of it, even one thrown away, is a data race (TSan reports it at -O0, where the read
  // is not dropped).
  void refresh_hint_byte() noexcept {
    if constexpr (summarized) refresh_hint_byte(*hint_.word_);
  }
  void refresh_hint_byte(std::uint64_t w) noexcept {
    if constexpr (summarized) summary_.refresh(hint_.start_, w);
    else (void)w;
  }
  void reset_snap() noexcept {  // the hint word's byte bounds it (a new hint word, a fresh or reset summary)
    if constexpr (summarized) summary_.snap(*hint_.word_);
  }
  // The summary's raises after a free (BitmapSummary::raise_one_word, raise_range), as calls of two arguments: the
  // summary's own five (bitmap, words, hint) are loaded inside. Called directly, they cost W3 5 instructions per step
  // (the arguments set up at every call, in deallocate's inlined fast path too).
  void raise_one_word(std::size_t wf, unsigned p) noexcept requires summarized {
    summary_.raise_one_word(bits_, words_, wf, p, hint_.start_);
  }
  void raise_summary_range(std::size_t i, std::size_t k) noexcept requires summarized {
    summary_.raise_range(bits_, words_, i, k, hint_.start_);
  }
  // The search hint moves back to word wi (a block in it was freed; the caller raises wi's byte).
  void lower_start(std::size_t wi) noexcept {
    if (wi < hint_.start_) {
      refresh_hint_byte();
      set_start(wi);
    }
  }
  void release() noexcept {
    if constexpr (summarized) summary_.release(words_);
    Layout::release();
    if constexpr (cached) hint_.reset();
    if constexpr (multi) fresh_ = 0;
    sync_hint();
    reset_snap();
  }
  void take(BitmappedBlockImpl& o) noexcept {
    Layout::take(o);
    if constexpr (cached) hint_.take(o.hint_);
    if constexpr (multi) fresh_ = std::exchange(o.fresh_, 0);
    if constexpr (summarized) summary_.take(o.summary_);
    sync_hint();
    o.sync_hint();
    o.reset_snap();
  }
  // Nothing when the hint stays (W3's searches mostly end in the hint word): whatever else changed called sync_hint.
  // SharedBitmappedBlock has no hint: nothing.
  void set_start(std::size_t s) noexcept {
    if constexpr (cached) {
      if (s == hint_.start_) return;  // the same word keeps its snapshot
      hint_.start_ = s;
      sync_hint();
      reset_snap();  // a word that was not the hint: its byte bounds it
    } else {
      (void)s;
    }
  }
  // Where a search that starts at the hint starts: the hint word, or word 0 (SharedBitmappedBlock).
  [[nodiscard]] std::size_t hint_or_zero() const noexcept {
    if constexpr (cached) return hint_.start_;
    else return 0;
  }
  // A HintSync's two ends (detail/hint_cache.hpp), with the cached word pinned (pin_hint_word) on this object's own
  // member. Nothing for SharedBitmappedBlock.
  void flush_hint() noexcept {
    if constexpr (cached) {
      pin_hint_word(hint_.bits_);
      hint_.flush();
    }
  }
  void load_hint() noexcept {
    if constexpr (cached) {
      hint_.load();
      pin_hint_word(hint_.bits_);
    }
  }
  // Word i of the bitmap as it is now, for queries that run without a guard (the hint word from the cache).
  [[nodiscard]] std::uint64_t word_now(std::size_t i) const noexcept {
    if constexpr (cached) return hint_.word_now(bits_, i);
    else return load(i);
  }
  // The first block the fast paths may not touch (detail/hint_cache.hpp): the fresh cursor, or the block count.
  [[nodiscard]] std::size_t hint_end() const noexcept {
    if constexpr (multi) return fresh_;
    else return blocks_;
  }
  // After any change of the hint, the bitmap, the payload or the cursor (single-threaded).
  void sync_hint() noexcept {
    if constexpr (cached) hint_.sync(bits_, words_, payload_, bs(), hint_end());
  }
  void set_fresh(std::size_t v) noexcept requires fresh_masked {
    fresh_ = v;
    // Outside a HintSync only alloc_small's probe of a later word raises the cursor, and the summary sends a search
    // to the hint word first while it has never-used blocks (their run goes on into the next word, all free), so
    // today end_raised's clearing changes nothing; it keeps the rule local.
    const std::uint64_t old = hint_.fresh_mask_;
    sync_hint();
    hint_.end_raised(old);
  }
  [[nodiscard]] static std::size_t offset_from(const void* base, const void* p) noexcept {
    return static_cast<std::size_t>(address_of(p) - address_of(base));
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
  // std::countr_zero(x) for x != 0, as a 64-bit result: std::countr_zero returns int, and GCC sign-extends it
  // before it indexes (one instruction per allocation). On x86-64, tzcnt (bsf on CPUs without BMI: the same result
  // for a nonzero x) writes the 64-bit register itself.
  static std::size_t count_trailing_zeros(std::uint64_t x) noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    std::uint64_t r;
    __asm__("tzcnt %1, %0" : "=r"(r) : "rm"(x) : "cc");
    return r;
#else
    return static_cast<unsigned>(std::countr_zero(x));
#endif
  }

  // ----------------------------------------------------------------------------------------------------------
  // Word access: plain for the single-threaded blocks, std::atomic_ref for SharedBitmappedBlock.

  [[nodiscard]] std::uint64_t load(std::size_t i) const noexcept {
    if constexpr (Shared) return atomic_bitmap::load(bits_, i);
    else return bits_[i];
  }
  void store(std::size_t i, std::uint64_t v) noexcept {
    if constexpr (Shared) atomic_bitmap::store(bits_, i, v);
    else bits_[i] = v;
  }
  [[nodiscard]] std::size_t load_fresh() const noexcept {
    if constexpr (Shared) return atomic_bitmap::load(fresh_);
    else return fresh_;
  }
  void raise_fresh(std::size_t v) noexcept {
    if constexpr (!multi) {
      (void)v;
    } else if constexpr (Shared) {
      atomic_bitmap::raise_to(fresh_, v);
    } else {
      if (v > fresh_) set_fresh(v);
    }
  }

  // Single-threaded: the paths other than the single-block fast paths work on bits_ between its construction and
  // its destruction (detail/hint_cache.hpp's rule). Nothing for SharedBitmappedBlock. It holds the block, not the
  // cache: a reference to the cache took a saved register of its own in every out-of-line path that syncs (W3 +0.3
  // instructions per step).
  struct HintSync {
    BitmappedBlockImpl* self;
    explicit HintSync(BitmappedBlockImpl* s) noexcept : self(s) { self->flush_hint(); }
    ~HintSync() { self->load_hint(); }
    HintSync(const HintSync&) = delete;
    HintSync& operator=(const HintSync&) = delete;
  };
  // Multiblock operations of SharedBitmappedBlock hold a spin lock; single-block allocate/deallocate never do.
  // Single-threaded, a Guard is a HintSync.
  struct Guard {
    BitmappedBlockImpl* self;
    explicit Guard(BitmappedBlockImpl* s) noexcept : self(s) {
      if constexpr (Shared) {
        self->lock_.lock();
      } else {
        self->flush_hint();
      }
    }
    ~Guard() {
      if constexpr (Shared) self->lock_.unlock();
      else self->load_hint();
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
  };

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
  // deallocate of blocks [i, i + k) (k >= 1, owned; start bits already checked) on every path but the in-word one
  // past the hint: refused when a block is free (a double free), else released. Out of line: inlined, its calls gave
  // every deallocate a stack frame and four saved registers (W3: 12 instructions per free).
  [[gnu::noinline]] bool release_checked(std::size_t i, std::size_t k) noexcept requires multi {
    if constexpr (!Starts) {  // with start bits, deallocate has checked them already
      if (!check_live(i, k)) return false;
    }
    if constexpr (summarized) {
      if (const unsigned p = static_cast<unsigned>(i % 64); k <= 64 - p) {
        release_in_word_synced(i / 64, p, static_cast<unsigned>(k));
        return true;
      }
    }
    HintSync sync(this);
    if (k == 1) {
      release1(i);  // SharedBitmappedBlock, or no summary
    } else if constexpr (summarized) {
      if (k <= 64) release_small(i, static_cast<unsigned>(k));  // across two words (one took the path above)
      else release_range(i, k);
    } else {
      release_range(i, k);
    }
    return true;
  }
  // Whether blocks [i, i + k) are all allocated; ALLOY_ASSERT in debug builds (a double free: some are free).
  bool check_live(std::size_t i, std::size_t k) const noexcept {
    const bool live =
        bitmap::for_each_word(i, k, [this](std::size_t wi, std::uint64_t m) { return (word_now(wi) & m) == m; });
    ALLOY_ASSERT(live, "BitmappedBlock::deallocate: double free (a block is not allocated)");
    return live;
  }
  // With start bits: whether blocks [i, i + k) are exactly one live allocation (it starts at i, none starts inside,
  // and block i + k is free, the start of another, or past the end); ALLOY_ASSERT in debug builds.
  bool check_whole_allocation(std::size_t i, std::size_t k) const noexcept requires Starts {
    const bool whole = start_bits::is_whole(starts(), blocks_, i, k, [this](std::size_t wi) { return word_now(wi); });
    ALLOY_ASSERT(whole, "BitmappedBlockWithInternalPointers::deallocate: the Block is not one allocation (a size other "
                        "than the one allocated, or a pointer inside it); give back the Block that allocate returned");
    return whole;
  }

  // ----------------------------------------------------------------------------------------------------------
  // Single block

  // The single-threaded fast path's fallback, out of line (inlined, its HintSync made GCC stop inlining allocate
  // into W3's loop).
  [[gnu::noinline]] std::size_t alloc1_synced() noexcept requires(!Shared) {
    HintSync sync(this);
    return alloc1();
  }
  std::size_t alloc1() noexcept {
    if constexpr (Shared) {
      // Lock-free, from this thread's own word (detail/atomic_bitmap.hpp).
      if (words_ == 0) return npos;
      const std::size_t idx = atomic_bitmap::claim_one(bits_, words_, this);
      if constexpr (multi) {
        if (idx != npos && idx >= load_fresh()) raise_fresh(idx + 1);
      }
      return idx;
    } else {
      for (std::size_t i = hint_.start_; i < words_; ++i) {
        std::uint64_t w = bits_[i];
        if (w != all_ones) {
          const unsigned j = static_cast<unsigned>(std::countr_one(w));
          w |= std::uint64_t{1} << j;
          bits_[i] = w;
          set_start(i);
          const std::size_t idx = i * 64 + j;
          if constexpr (multi) {
            if (idx >= fresh_) set_fresh(idx + 1);
          }
          if constexpr (Starts) mark_start(idx, 1);
          return idx;
        }
      }
      if (words_) set_start(words_ - 1);
      return npos;
    }
  }

  // Frees block i; false (nothing changed) when it was free: a double free, after ALLOY_ASSERT in debug builds.
  bool release1(std::size_t i) noexcept {
    if constexpr (Shared) {
      return atomic_bitmap::release_one(bits_, i);  // a double free is refused by the same atomic operation
    } else {
      const std::uint64_t bit = std::uint64_t{1} << (i % 64);
      const bool live = (bits_[i / 64] & bit) != 0;
      ALLOY_ASSERT(live, "BitmappedBlock::deallocate: double free (the block is not allocated)");
      if (!live) return false;
      bits_[i / 64] &= ~bit;
      lower_start(i / 64);
      if constexpr (summarized) summary_.raise_pair(i / 64);
      return true;
    }
  }

  // Multiblock::no aligned_allocate: the first free block in which an a-aligned address leaves room for n bytes.
  Block alloc1_aligned(std::size_t n, std::size_t a) noexcept {
    Guard g(this);
    for (std::size_t i = hint_or_zero(); i < words_; ++i) {
      std::uint64_t free = ~load(i);
      while (free) {
        const unsigned j = static_cast<unsigned>(std::countr_zero(free));
        free &= free - 1;
        const std::size_t idx = i * 64 + j;
        std::byte* const start = payload_ + idx * bs();
        const std::uintptr_t res = align_up(address_of(start), a);
        if (res - address_of(start) + n <= bs() && claim(idx, 1)) {
          if constexpr (cached) {
            if (i == hint_.start_ && bits_[i] == all_ones) advance_start();
          }
          return {to_pointer(res), n};
        }
      }
    }
    return {};
  }

  // ----------------------------------------------------------------------------------------------------------
  // Multiblock (k >= 2, or any k for aligned_allocate): exact first fit. Shared: under the lock, claimed by CAS.

  // Out of line, so that allocate stays small enough for GCC to inline it into a caller's loop (W3).
  [[gnu::noinline]] std::size_t alloc_blocks_guarded(std::size_t k) noexcept {
    Guard g(this);
    return alloc_blocks(k);
  }
  std::size_t alloc_blocks(std::size_t k) noexcept {
    refresh_hint_byte();
    for (std::size_t from = hint_or_zero();;) {
      const std::size_t i = find_run(from, k);
      if (i == npos) return npos;
      if (claim(i, k)) {
        raise_fresh(i + k);
        after_claim(i, k);
        if constexpr (Starts) mark_start(i, k);
        return i;
      }
      from = i / 64;  // a lock-free single-block allocation took a bit meanwhile: search again from there
    }
  }

  // SharedBitmappedBlock's aligned_allocate, under the lock: the first fit of k = blocks_for(n + a - Alignment)
  // blocks (D's method, as the single-threaded block), but only the blocks the result uses are claimed. Claiming
  // all k and giving back the lead and tail afterwards (as the single-threaded block does) made lock-free
  // single-block allocations fail while those blocks were free. First fit from block 0 for one
  // block too: alloc1 would start at this thread's word.
  // The fresh cursor still moves past all k blocks, so allocate_fresh afterwards lands where it does in D and in
  // the single-threaded block.
  Block aligned_claim(std::size_t n, std::size_t a, std::size_t k) noexcept requires Shared {
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
    return bitmap::find_run<Shared>(bits_, words_, from, k, summary_, hint_or_zero());
  }

  // The single-threaded path for 2 <= k <= 64: the summary finds a word, probe_small takes the run or lowers the
  // word's byte, and the search goes on from the next word.
  // Called outside a HintSync: the hint word is hint_.bits_. Only a probe of the hint word itself needs it in bits_
  // (a probe of word i reads and writes words i and i + 1 and moves the hint only when i is the hint word).
  std::size_t alloc_small(unsigned k) noexcept {
    if constexpr (summarized) {
      // The hint word without the padding bits of a last word (HintCache::logical without its load): a snapshot with
      // fewer blocks taken only makes the byte go to 64 sooner, never leaves it too low.
      refresh_hint_byte(hint_.bits_ & hint_.fresh_mask_);
      // Most searches end at the first word the first summary step finds: that step and that word here, with no
      // loop; the rest in alloc_small_from, out of line, so that this path keeps few registers live.
      const std::size_t i = next_fit_word(hint_.start_, k);
      if (i >= words_) return npos;
      std::size_t idx;
      if (i != hint_.start_) [[likely]] {
        idx = probe_small(i, k);
      } else {
        HintSync sync(this);
        idx = probe_small(i, k);
      }
      if (idx != npos) [[likely]] return idx;
      return alloc_small_from(i + 1, k);  // words past the hint only
    } else {
      (void)k;
      return npos;
    }
  }
  [[gnu::noinline]] std::size_t alloc_small_from(std::size_t i, unsigned k) noexcept requires summarized {
    for (;;) {
      i = next_fit_word(i, k);
      if (i >= words_) return npos;
      const std::size_t idx = probe_small(i, k);
      if (idx != npos) return idx;
      ++i;
    }
  }
  // The first word at or after i (<= words_) whose summary byte is at least k (1 to 64), or words_ (64 bytes per
  // SSE2 step; the summary has 64 zero bytes after the last word's). Every summary search goes through it.
  [[gnu::always_inline]] std::size_t next_fit_word(std::size_t i, unsigned k) const noexcept requires summarized {
    return summary_.first_at_least(i, words_, k);
  }
  // Word i (i < words_) for a run of k: in the word, or its free tail into the next word's free head. Takes it and
  // returns its first block, or lowers the word's byte and returns npos (bitmap::take_small); then the hint, the
  // fresh cursor and the start bits follow.
  [[gnu::always_inline]] std::size_t probe_small(std::size_t i, unsigned k) noexcept requires summarized {
    const std::size_t idx = bitmap::take_small(bits_, words_, summary_, hint_.start_, i, k);
    if (idx != npos) {
      if (i == hint_.start_) advance_start();
      if (idx + k > fresh_) set_fresh(idx + k);
      if constexpr (Starts) mark_start(idx, k);
    }
    return idx;
  }

  // The single-threaded release of 2 <= k <= 64 blocks across two words (deallocate frees a run inside one word
  // itself). Out of line, as release_range: inlined into deallocate, it gave every multi-block free a stack frame.
  [[gnu::noinline]] void release_small(std::size_t i, unsigned k) noexcept requires summarized {
    std::uint64_t* const bits = bits_;
    const std::size_t e = i + k - 1, wf = i / 64, wl = e / 64;
    ALLOY_ASSERT(wl == wf + 1, "internal: release_small is for a run across two words");
    ALLOY_ASSERT(bitmap::range_is(bits, i, k, true), "BitmappedBlock::deallocate: double free (a block is not allocated)");
    bits[wf] &= ~(bitmap::all_ones << (i % 64));
    bits[wl] &= ~bitmap::mask(0, static_cast<unsigned>(e % 64) + 1);
    lower_start(wf);
    raise_summary_range(i, k);
  }

  // Clears bits [p, p + k) of word wf (p + k <= 64; the caller checked they were set in debug builds), then raises
  // the bytes of the one run that grew, exactly.
  [[gnu::always_inline]] void release_in_word(std::size_t wf, unsigned p, unsigned k) noexcept requires summarized {
    clear_in_word(wf, p, k);
    lower_start(wf);
    raise_one_word(wf, p);
  }
  // Out of line: inlined, its HintSync gave every multi-block free a stack frame (W3).
  [[gnu::noinline]] void release_in_word_synced(std::size_t wf, unsigned p, unsigned k) noexcept requires summarized {
    HintSync sync(this);
    release_in_word(wf, p, k);
  }
  [[gnu::always_inline]] void clear_in_word(std::size_t wf, unsigned p, unsigned k) noexcept requires summarized {
    ALLOY_ASSERT(bitmap::range_is(bits_, wf * 64 + p, k, true),
                 "BitmappedBlock::deallocate: double free (a block is not allocated)");
    bits_[wf] &= ~(bitmap::low_mask(k) << p);
  }

  bool range_free(std::size_t i, std::size_t k) const noexcept { return bitmap::range_free<Shared>(bits_, i, k); }

  // Sets bits [i, i + k). Single-threaded: the caller has checked they are free. Shared: word by word with CAS,
  // undoing the words already taken when a word turns out to be taken (by a lock-free single-block allocation).
  bool claim(std::size_t i, std::size_t k) noexcept {
    if constexpr (!Shared) {
      bitmap::set_range(bits_, i, k);
      return true;
    } else {
      return atomic_bitmap::claim_range(bits_, i, k);
    }
  }

  void after_claim(std::size_t i, std::size_t k) noexcept {
    if constexpr (!Shared) {
      if (i / 64 <= hint_.start_ && hint_.start_ <= (i + k - 1) / 64) advance_start();
    } else {
      (void)i, (void)k;
    }
  }
  void advance_start() noexcept {
    std::size_t s = hint_.start_;
    while (s + 1 < words_ && bits_[s] == all_ones) ++s;
    set_start(s);
  }

  // Clears bits [i, i + k); in debug builds, checks they were all set (a double free otherwise).
  // Out of line: inlined into deallocate, its registers cost every multi-block free six pushes and pops (W3).
  [[gnu::noinline]] void release_range(std::size_t i, std::size_t k) noexcept {
    if constexpr (Shared) {
      atomic_bitmap::release_range(bits_, i, k);
    } else {
      ALLOY_ASSERT(bitmap::range_is(bits_, i, k, true),
                   "BitmappedBlock::deallocate: double free (a block is not allocated)");
      bitmap::clear_range(bits_, i, k);
      lower_start(i / 64);
      if constexpr (summarized) raise_summary_range(i, k);
    }
  }

  void shrink(Block& b, std::size_t n) noexcept {
    const std::size_t off = offset_of(b.ptr);
    const std::size_t keep = divide_round_up(off + n, bs()), had = divide_round_up(off + b.size, bs());
    if (had > keep) {
      if constexpr (multi) {
        Guard g(this);
        release_range(keep, had - keep);
      }
    }
    b.size = n;
  }

  bool move_to(Block& b, Block nb) noexcept {
    return alloy::detail::move_block(b, nb, parent_, [this](Block x) noexcept { return deallocate(x); });
  }

  // Start bits (BitmappedBlockWithInternalPointers; detail/start_bits.hpp states their invariant).
  void mark_start(std::size_t i, std::size_t k) noexcept {
    if constexpr (Starts) start_bits::mark(starts(), i, k);
  }
  void clear_starts(std::size_t i, std::size_t k) noexcept {
    if constexpr (Starts) start_bits::clear(starts(), i, k);
  }
};

}  // namespace alloy::detail
