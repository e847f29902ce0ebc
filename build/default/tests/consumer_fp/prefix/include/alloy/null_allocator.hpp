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
/// Capabilities: every primitive. `allocate`, `aligned_allocate`, `allocate_all` give an empty Block; `expand` of the
/// empty block by 0 is true, else false; `reallocate` is false except for the empty-to-empty no-op; `owns` and
/// `resolve_internal_pointer` answer no; `deallocate({})` and `deallocate_all` are true; `empty` is yes.
/// Differences from D: `deallocate({})` is true (D returns false), as for every alloy allocator.
/// Alignment: 64 KiB (D's value: any alignment a request could want). Thread safety: stateless, thread-safe.
/// Example:
/// ```cpp
/// alloy::NullAllocator n;
/// CHECK(!n.allocate(16));
/// CHECK(n.owns({}) == alloy::Ternary::no);
/// static_assert(std::is_empty_v<alloy::NullAllocator>);
/// ```
struct NullAllocator {
  static constexpr std::size_t alignment = 64 * 1024;
  static const NullAllocator instance;

  Block allocate(std::size_t) noexcept { return {}; }
  Block aligned_allocate(std::size_t, std::size_t) noexcept { return {}; }
  Block allocate_all() noexcept { return {}; }
  bool expand(Block& b, std::size_t delta) noexcept { return !b && delta == 0; }
  bool reallocate(Block& b, std::size_t n) noexcept { return !b && n == 0; }
  bool aligned_reallocate(Block& b, std::size_t n, std::size_t) noexcept { return !b && n == 0; }
  Ternary owns(Block) const noexcept { return Ternary::no; }
  Ternary resolve_internal_pointer(const void*, Block& r) const noexcept { r = {}; return Ternary::no; }
  bool deallocate(Block b) noexcept {
    ALLOY_ASSERT(!b, "NullAllocator::deallocate: this block did not come from a NullAllocator");
    return !b;
  }
  bool deallocate_all() noexcept { return true; }
  Ternary empty() const noexcept { return Ternary::yes; }
};
inline const NullAllocator NullAllocator::instance{};

}  // namespace alloy
