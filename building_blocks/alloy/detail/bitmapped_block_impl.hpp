#pragma once
/// \file alloy/detail/bitmapped_block_impl.hpp
/// BitmappedBlockImpl<Engine>: a BitmappedBlock built over the engine of its mode (as Phobos mixes its
/// BitmappedBlockImpl into each block): the constructors, which lay the blocks out (detail/bitmap_layout.hpp) and then
/// let the engine initialize its bits, moving, destruction, and reallocate and aligned_reallocate, which every mode
/// writes with its own allocate, expand, shrink and deallocate. Internal: use <alloy/bitmapped_block.hpp>.
/// The engines, each with its invariants in its header:
///   * detail/bitmapped_block_core.hpp, BitmappedBlockCore: single-threaded (BitmappedBlock): the search hint with
///     its word cached in the object, the fresh cursor and the summary index; its index-level paths are defined in
///     detail/bitmapped_block_core_paths.hpp;
///   * detail/shared_bitmapped_block.hpp, SharedBitmappedBlockCore: SharedBitmappedBlock, over the atomic bitmap
///     (detail/atomic_bitmap.hpp);
///   * detail/bitmapped_block_internal_pointers.hpp, BitmappedBlockInternalPointers: the single-threaded engine with a
///     second bitmap, wrapped with start bits (detail/start_bits.hpp).
/// What every engine shares (the argument checks, the block size, the layout, the ownership checks and the queries
/// that read no bitmap word) is their base, detail/bitmapped_block_base.hpp.
///
/// Invariants: the engine's, between the calls of its owner. The engine is initialized (init_bits) exactly when the
/// layout holds blocks; a moved-from block and one whose construction failed have none (BitmapLayout's empty state),
/// and every call on them fails or answers as for an empty block.
#include <cstddef>
#include <span>
#include <type_traits>
#include <utility>

#include <alloy/common.hpp>

namespace alloy::detail {

template <class Engine>
class BitmappedBlockImpl : public Engine {
  using typename Engine::Layout;
  using typename Engine::Sizes;
  using P = typename Engine::ParentType;
  static constexpr bool runtime_block_size = Engine::runtime_block_size;
  static constexpr bool has_parent = Engine::has_parent;
  using Engine::bs;
  using Engine::check_owned;
  using Engine::init_bits;
  using Engine::parent_;
  using Engine::release;
  using Engine::set_runtime_block_size;
  using Engine::shrink;
  using Engine::take;

 public:
  using Engine::aligned_allocate;
  using Engine::allocate;
  using Engine::deallocate;
  using Engine::expand;

  /// No memory: every allocation fails.
  BitmappedBlockImpl() noexcept requires(!runtime_block_size && std::is_default_constructible_v<P>) = default;

  /// Over a caller's memory, which the block never frees: D's layout (bitmap first, payload after, aligned).
  explicit BitmappedBlockImpl(std::span<std::byte> mem) noexcept
    requires(!runtime_block_size && std::is_default_constructible_v<P>)
  {
    if (Layout::init_span(mem, bs())) init_bits();
  }
  BitmappedBlockImpl(std::span<std::byte> mem, std::size_t block_size) noexcept
    requires(runtime_block_size && std::is_default_constructible_v<P>)
  {
    if (set_runtime_block_size(block_size) && Layout::init_span(mem, bs())) init_bits();
  }
  /// Draws ceil(capacity / block_size) blocks from the parent (one allocation of bitmap + payload on the host).
  explicit BitmappedBlockImpl(std::size_t capacity) noexcept
    requires(has_parent && !runtime_block_size && std::is_default_constructible_v<P>)
  {
    if (Layout::init_capacity(capacity, bs())) init_bits();
  }
  BitmappedBlockImpl(std::size_t capacity, std::size_t block_size) noexcept
    requires(has_parent && runtime_block_size && std::is_default_constructible_v<P>)
  {
    if (set_runtime_block_size(block_size) && Layout::init_capacity(capacity, bs())) init_bits();
  }
  BitmappedBlockImpl(P parent, std::size_t capacity) noexcept requires(has_parent && !runtime_block_size)
      : Engine(std::move(parent)) {
    if (Layout::init_capacity(capacity, bs())) init_bits();
  }
  BitmappedBlockImpl(P parent, std::size_t capacity, std::size_t block_size) noexcept
    requires(has_parent && runtime_block_size)
      : Engine(std::move(parent)) {
    if (set_runtime_block_size(block_size) && Layout::init_capacity(capacity, bs())) init_bits();
  }

  BitmappedBlockImpl(const BitmappedBlockImpl&) = delete;
  BitmappedBlockImpl& operator=(const BitmappedBlockImpl&) = delete;
  /// Moving transfers the memory; the source is left with none. Not while another thread uses the source.
  BitmappedBlockImpl(BitmappedBlockImpl&& o) noexcept : Engine(static_cast<const Sizes&>(o), std::move(o.parent_)) {
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

  /// Resizes b: shrinks in place (giving back trailing blocks), grows in place when the following blocks are free,
  /// else allocates, copies (through the parent's copy on device memory) and frees. On failure b is unchanged.
  bool reallocate(Block& b, std::size_t n) noexcept requires(host_accessible<P> || has_copy<P>) {
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
  bool aligned_reallocate(Block& b, std::size_t n, std::size_t a) noexcept requires(host_accessible<P> || has_copy<P>)
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

 private:
  bool move_to(Block& b, Block nb) noexcept {
    return alloy::detail::move_block(b, nb, parent_, [this](Block x) noexcept { return deallocate(x); });
  }
};

}  // namespace alloy::detail
