#pragma once
/// \file alloy/null_allocator.hpp
#include <cstddef>

#include <alloy/common.hpp>

namespace alloy {

/// NullAllocator
///
/// Semantics: the allocator that has no memory: every allocation fails. It terminates a chain (the default parent
/// of Region and BitmappedBlock, which then work over a caller's memory) and is the bookkeeping allocator that puts
/// AllocatorList's nodes in-band.
/// Capabilities: every primitive D's NullAllocator has (all but allocate_fresh, good_alloc_size and copy).
/// `allocate`, `aligned_allocate`, `allocate_all` give an empty Block; `expand` by 0 is true, by more false;
/// `reallocate` and `aligned_reallocate` are false except for the empty-to-empty no-op (D: always false); `owns` and
/// `resolve_internal_pointer` answer no; `deallocate({})` and `deallocate_all` are true; `empty` is yes.
/// Every primitive is `const`, so `NullAllocator::instance` serves them all. Stateless: `NullAllocator::instance`.
/// Alignment: 64 KiB (D's value: any alignment a request could want). Thread safety: stateless, thread-safe.
/// Example:
/// ```cpp
/// alloy::NullAllocator n;
/// CHECK(!n.allocate(16));
/// CHECK(n.owns({}) == alloy::Ternary::no);
/// alloy::Block b{};
/// CHECK(alloy::NullAllocator::instance.expand(b, 0));
/// CHECK(!alloy::NullAllocator::instance.expand(b, 1));
/// CHECK(n.deallocate(b));
/// static_assert(std::is_empty_v<alloy::NullAllocator>);
/// ```
struct NullAllocator {
  static constexpr std::size_t alignment = std::size_t{64} * 1024;
  static const NullAllocator instance;

  Block allocate(std::size_t) const noexcept { return {}; }
  Block aligned_allocate(std::size_t, std::size_t) const noexcept { return {}; }
  Block allocate_all() const noexcept { return {}; }
  bool expand(Block& b, std::size_t delta) const noexcept {
    ALLOY_ASSERT(!b, "NullAllocator::expand: this block did not come from a NullAllocator");
    return delta == 0;
  }
  bool reallocate(Block& b, std::size_t n) const noexcept { return !b && n == 0; }
  bool aligned_reallocate(Block& b, std::size_t n, std::size_t) const noexcept { return !b && n == 0; }
  Ternary owns(Block) const noexcept { return Ternary::no; }
  Ternary resolve_internal_pointer(const void*, Block& r) const noexcept {
    r = {};
    return Ternary::no;
  }
  bool deallocate(Block b) const noexcept {
    ALLOY_ASSERT(!b, "NullAllocator::deallocate: this block did not come from a NullAllocator");
    return !b;
  }
  bool deallocate_all() const noexcept { return true; }
  Ternary empty() const noexcept { return Ternary::yes; }
};
inline const NullAllocator NullAllocator::instance{};

}  // namespace alloy
