#pragma once
/// \file examples/general_purpose.hpp
/// GeneralPurpose<Parent, ChunkBytes>: a general-purpose host allocator composed from alloy's blocks, shared by
/// examples/general_purpose.cpp, the benchmarks (benchmarks/stacks.hpp, W3 and W6) and alloy-replay
/// (benchmarks/replay/stacks.hpp). It is an example of composition, not a library header: docs/cookbook.md
/// ("A general-purpose allocator in one type") says why each layer is there and what it costs.
///
///   Segregator<512,
///              Bucketizer<FreeList<Ref<Pool>, 0, unbounded>, 1, 512, 16>,   32 size classes of 16 B steps
///              Parent>                                                      above 512 B: Parent (malloc)
///   Pool = AllocatorList<Chunks, Parent>, Chunks making Region<Parent>s of ChunkBytes (larger on demand)
///
/// A request of n <= 512 bytes goes to the free list of its class (16, 32, ..., 512 bytes); a miss takes one
/// class-sized block from the pool, which bumps through its newest region and adds a region when none has room.
/// A freed small block goes on its class's list (found by its size: no header, no lookup). Requests above 512 bytes
/// go to Parent. Small blocks are never given back to the pool; every region goes back to Parent when the allocator
/// is destroyed.
///
/// Capabilities: allocate, deallocate, expand and reallocate (the Segregator's), good_alloc_size (the class size),
/// aligned_allocate when Parent has it (see below). No owns (Parent, malloc, cannot answer it), no deallocate_all.
/// Alignment: 16 (the regions' and malloc's). Thread safety: none.
/// Not copyable or movable: the free lists refer to the pool inside the same object.
#include <alloy/allocator_list.hpp>
#include <alloy/aligned_mallocator.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/bucketizer.hpp>
#include <alloy/common.hpp>
#include <alloy/free_list.hpp>
#include <alloy/ref.hpp>
#include <alloy/region.hpp>
#include <alloy/segregator.hpp>

#include <algorithm>
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace alloy_examples {

namespace detail {
/// Both types' aligned_allocate: alignments up to G's: allocate; larger ones above small_max: Parent's
/// aligned_allocate; larger ones for a small size: a block of the size class, aligned, straight from the pool, which
/// joins its class's list like any other block of that class when freed.
template <class G>
alloy::Block class_aligned_allocate(typename G::Stack& stack, typename G::Pool& pool, std::size_t n,
                                    std::size_t a) noexcept {
  if (!alloy::is_power_of_two(a)) return {};
  if (a <= G::alignment) return stack.allocate(n);
  if (n > G::small_max) return stack.large().aligned_allocate(n, a);
  if (n == 0) return {};
  const alloy::Block b = pool.aligned_allocate(alloy::round_up(n, G::class_step), a);
  return b ? alloy::Block{b.ptr, n} : alloy::Block{};
}
}  // namespace detail

template <alloy::allocator Parent = alloy::AlignedMallocator, std::size_t ChunkBytes = 32 * 1024>
  requires alloy::host_accessible<Parent> && std::default_initializable<Parent>
class GeneralPurpose {
 public:
  static constexpr std::size_t small_max = 512;  // the largest size served by the free lists
  static constexpr std::size_t class_step = 16;  // the size classes: 16, 32, ..., 512 bytes

  /// The pool behind the free lists: regions of ChunkBytes (or of the request, when larger) made on demand, their
  /// list nodes from Parent too, so that everything the allocator holds is counted where Parent counts.
  struct Chunks {
    alloy::Region<Parent> operator()(std::size_t n) const noexcept {
      return alloy::Region<Parent>(std::max(n, ChunkBytes));
    }
  };
  using Pool = alloy::AllocatorList<Chunks, Parent>;
  /// D's unchecked free list: each bucket of the Bucketizer sees one size only, so the list checks none.
  using Bucket = alloy::FreeList<alloy::Ref<Pool>, 0, alloy::unbounded>;
  using Small = alloy::Bucketizer<Bucket, 1, small_max, class_step>;
  using Stack = alloy::Segregator<small_max, Small, Parent>;

  static constexpr std::size_t alignment = Stack::alignment;

  GeneralPurpose() noexcept
      : stack_(Small([this](std::size_t) { return Bucket(alloy::Ref<Pool>(pool_)); }), Parent{}) {}
  GeneralPurpose(const GeneralPurpose&) = delete;
  GeneralPurpose& operator=(const GeneralPurpose&) = delete;

  alloy::Block allocate(std::size_t n) noexcept { return stack_.allocate(n); }
  bool deallocate(alloy::Block b) noexcept { return stack_.deallocate(b); }
  bool expand(alloy::Block& b, std::size_t delta) noexcept requires alloy::has_expand<Stack> {
    return stack_.expand(b, delta);
  }
  bool reallocate(alloy::Block& b, std::size_t n) noexcept requires alloy::has_reallocate<Stack> {
    return stack_.reallocate(b, n);
  }
  std::size_t good_alloc_size(std::size_t n) noexcept { return stack_.good_alloc_size(n); }

  /// Alignments up to 16: allocate. Larger ones above 512 bytes: Parent's aligned_allocate. Larger ones for a small
  /// size: a block of the size class, aligned, straight from the pool (a Region bumps to any alignment); freed, it
  /// joins its class's list like any other block of that class. The one member written by hand: the free lists
  /// (Phobos' and alloy's) have no aligned_allocate, and a Segregator declares one only when both parts do.
  alloy::Block aligned_allocate(std::size_t n, std::size_t a) noexcept requires alloy::has_aligned_allocate<Parent> {
    return detail::class_aligned_allocate<GeneralPurpose>(stack_, pool_, n, a);
  }

  /// The parts, for tests and statistics.
  [[nodiscard]] const Pool& pool() const noexcept { return pool_; }
  [[nodiscard]] Stack& stack() noexcept { return stack_; }

 private:
  Pool pool_;    // declared first: destroyed last, after the free lists that refer to it
  Stack stack_;
};

/// CappedFreeList<Parent, MaxNodes>: an unchecked free list (one size per list, as FreeList<P, 0, unbounded> under a
/// Bucketizer) that holds at most MaxNodes blocks: a block freed beyond that goes back to Parent. alloy's FreeList has
/// no such bound (D's has none either: only SharedFreeList's ApproxMaxNodes, which costs a 128-bit CAS per
/// operation), so this example writes the twenty lines itself. MaxNodes = 0 forwards everything to Parent.
template <alloy::allocator Parent, std::size_t MaxNodes>
  requires alloy::host_accessible<Parent> && alloy::has_deallocate<Parent>
class CappedFreeList {
 public:
  static constexpr std::size_t alignment = Parent::alignment;
  explicit CappedFreeList(Parent p) noexcept : parent_(p) {}
  CappedFreeList(CappedFreeList&& o) noexcept
      : parent_(o.parent_), root_(std::exchange(o.root_, nullptr)), nodes_(std::exchange(o.nodes_, 0)) {}
  CappedFreeList(const CappedFreeList&) = delete;
  CappedFreeList& operator=(const CappedFreeList&) = delete;
  ~CappedFreeList() { minimize(); }

  alloy::Block allocate(std::size_t n) noexcept {
    if (root_) {
      void* p = root_;
      root_ = *static_cast<void**>(p);
      --nodes_;
      return {p, n};
    }
    return parent_.allocate(n);
  }
  bool deallocate(alloy::Block b) noexcept {
    if (!b) return true;
    if (nodes_ >= MaxNodes) return parent_.deallocate(b);
    ::new (b.ptr) void*(root_);
    root_ = b.ptr;
    ++nodes_;
    size_ = b.size;
    return true;
  }
  std::size_t good_alloc_size(std::size_t n) noexcept { return alloy::good_alloc_size(parent_, n); }
  /// Gives every listed block back to Parent.
  void minimize() noexcept {
    while (root_) {
      void* p = root_;
      root_ = *static_cast<void**>(p);
      parent_.deallocate(alloy::Block{p, size_});
    }
    nodes_ = 0;
  }
  [[nodiscard]] std::size_t nodes() const noexcept { return nodes_; }

 private:
  Parent parent_;
  void* root_ = nullptr;
  std::size_t nodes_ = 0;
  std::size_t size_ = 0;  // the list's one block size (set by the first deallocate)
};

/// GeneralPurposeBitmapped<Parent, CacheNodes, ChunkBytes>: GeneralPurpose's shape with memory that goes back.
///
///   Segregator<512,
///              Bucketizer<CappedFreeList<Ref<Pool>, CacheNodes>, 1, 512, 16>,   at most CacheNodes per class
///              Parent>
///   Pool = AllocatorList<Chunks, Parent>, Chunks making BitmappedBlock<16, 16, Parent, yes, Parent>s of ChunkBytes
///
/// A freed block beyond its class's cache goes back to its bitmapped chunk, where it coalesces with its free
/// neighbours and is reusable by any size (first fit); a chunk left empty goes back to Parent (the AllocatorList keeps
/// one). CacheNodes = 0: no free lists, the small side is the pool itself. Everything, the bitmaps' summary index
/// included, comes from Parent, so a counting Parent sees all the memory held.
template <alloy::allocator Parent = alloy::AlignedMallocator, std::size_t CacheNodes = 8,
          std::size_t ChunkBytes = 64 * 1024>
  requires alloy::host_accessible<Parent> && std::default_initializable<Parent>
class GeneralPurposeBitmapped {
 public:
  static constexpr std::size_t small_max = 512;
  static constexpr std::size_t class_step = 16;
  using Chunk = alloy::BitmappedBlock<16, 16, Parent, alloy::Multiblock::yes, Parent>;
  struct Chunks {
    Chunk operator()(std::size_t n) const noexcept { return Chunk(std::max(n, ChunkBytes)); }
  };
  using Pool = alloy::AllocatorList<Chunks, Parent>;
  using Bucket = CappedFreeList<alloy::Ref<Pool>, CacheNodes>;
  using Small = std::conditional_t<CacheNodes == 0, alloy::Ref<Pool>,
                                   alloy::Bucketizer<Bucket, 1, small_max, class_step>>;
  using Stack = alloy::Segregator<small_max, Small, Parent>;
  static constexpr std::size_t alignment = Stack::alignment;

  GeneralPurposeBitmapped() noexcept : stack_(make_small(), Parent{}) {}
  GeneralPurposeBitmapped(const GeneralPurposeBitmapped&) = delete;
  GeneralPurposeBitmapped& operator=(const GeneralPurposeBitmapped&) = delete;

  alloy::Block allocate(std::size_t n) noexcept { return stack_.allocate(n); }
  bool deallocate(alloy::Block b) noexcept { return stack_.deallocate(b); }
  bool reallocate(alloy::Block& b, std::size_t n) noexcept requires alloy::has_reallocate<Stack> {
    return stack_.reallocate(b, n);
  }
  std::size_t good_alloc_size(std::size_t n) noexcept { return stack_.good_alloc_size(n); }
  /// As GeneralPurpose's: a small size with a larger alignment takes a class-sized run from the pool (a bitmapped
  /// chunk aligns by its search); freed, it goes to its class like any other block of that class.
  alloy::Block aligned_allocate(std::size_t n, std::size_t a) noexcept requires alloy::has_aligned_allocate<Parent> {
    return detail::class_aligned_allocate<GeneralPurposeBitmapped>(stack_, pool_, n, a);
  }

  [[nodiscard]] const Pool& pool() const noexcept { return pool_; }
  [[nodiscard]] Stack& stack() noexcept { return stack_; }

 private:
  Small make_small() noexcept {
    if constexpr (CacheNodes == 0) return Small(pool_);
    else return Small([this](std::size_t) { return Bucket(alloy::Ref<Pool>(pool_)); });
  }
  Pool pool_;    // declared first: destroyed last
  Stack stack_;
};

}  // namespace alloy_examples
