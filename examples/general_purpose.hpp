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
#include <alloy/bucketizer.hpp>
#include <alloy/common.hpp>
#include <alloy/free_list.hpp>
#include <alloy/ref.hpp>
#include <alloy/region.hpp>
#include <alloy/segregator.hpp>

#include <algorithm>
#include <cstddef>

namespace alloy_examples {

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
    if (!alloy::is_power_of_two(a)) return {};
    if (a <= alignment) return allocate(n);
    if (n > small_max) return stack_.large().aligned_allocate(n, a);
    if (n == 0) return {};
    const alloy::Block b = pool_.aligned_allocate(alloy::round_up(n, class_step), a);
    return b ? alloy::Block{b.ptr, n} : alloy::Block{};
  }

  /// The parts, for tests and statistics.
  [[nodiscard]] const Pool& pool() const noexcept { return pool_; }
  [[nodiscard]] Stack& stack() noexcept { return stack_; }

 private:
  Pool pool_;    // declared first: destroyed last, after the free lists that refer to it
  Stack stack_;
};

}  // namespace alloy_examples
