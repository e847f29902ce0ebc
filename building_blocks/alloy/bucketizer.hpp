#pragma once
/// \file alloy/bucketizer.hpp
/// Bucketizer: one allocator per size class of Step bytes (D's building_blocks/bucketizer.d).
#include <array>
#include <concepts>
#include <cstddef>
#include <type_traits>
#include <utility>

#include <alloy/common.hpp>
#include <alloy/detail/combinator.hpp>

namespace alloy {

/// Bucketizer<A, Min, Max, Step>
///
/// Semantics: (Max - Min + 1) / Step allocators of type A, one per bucket of sizes [Min, Min + Step - 1],
/// [Min + Step, Min + 2 Step - 1], ..., [Max - Step + 1, Max]. A request of n bytes in [Min, Max] asks its bucket for
/// the bucket's largest size, `bucket_size(i)`, and returns n bytes of it; a block goes back (and is asked about) by
/// its size the same way. Requests below Min or above Max fail (a Segregator in front can send them elsewhere).
/// The buckets are default-constructed, or made by `Bucketizer(make)`, which calls `make(i)` for bucket i (it must
/// return an A by value; copy elision builds it in place, so A need not be movable). They are public through
/// `buckets()`, as D's array. All state is the buckets; nothing is written into the memory they hand out.
/// Capabilities: allocate; expand (within the block's bucket: b.size + delta <= bucket_size of b's bucket; no parent
/// call); good_alloc_size (in [Min, Max]: A's good_alloc_size of the bucket's size; elsewhere n rounded up to the
/// alignment); reallocate iff A's memory is host-accessible or A has copy (within the bucket in place, else allocate,
/// copy, deallocate); aligned_allocate iff A has it; aligned_reallocate iff A has aligned_allocate and reallocate's
/// condition holds; owns, deallocate, deallocate_all, empty and resolve_internal_pointer iff A has them; copy iff A
/// has it; stream-ordered allocate and deallocate iff A is stream-ordered; `buckets()`, `bucket_size(i)`.
/// Alignment and memory space: A's.
/// Thread safety: that of A (none added).
/// Failure: an empty Block for n == 0, n outside [Min, Max], and when the bucket refuses.
/// Example:
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// #include <alloy/region.hpp>
/// using Bucket = alloy::Region<alloy::Mallocator>;
/// alloy::Bucketizer<Bucket, 1, 256, 64> a([](std::size_t) { return Bucket(1 << 12); });  // 4 buckets, 4 regions
/// CHECK(a.good_alloc_size(100) == 128);                 // bucket [65, 128]
/// alloy::Block b = a.allocate(100);
/// CHECK(a.buckets()[1].owns(b) == alloy::Ternary::yes);
/// CHECK(a.expand(b, 28));                               // still inside the bucket's 128 bytes
/// CHECK(!a.expand(b, 1));
/// CHECK(a.reallocate(b, 200));                          // to bucket [193, 256]
/// CHECK(a.buckets()[3].owns(b) == alloy::Ternary::yes);
/// CHECK(!a.allocate(257));                              // above Max
/// CHECK(a.deallocate(b));
/// ```
template <class A, std::size_t Min, std::size_t Max, std::size_t Step>
class Bucketizer {
  static_assert(allocator<A>,
                "Bucketizer: A must be an alloy allocator (a type with `static constexpr std::size_t alignment` and "
                "`Block allocate(std::size_t) noexcept`, e.g. alloy::Region<alloy::Mallocator> or "
                "alloy::FreeList<alloy::Mallocator, 64>); a std allocator, a std::pmr::memory_resource or a type "
                "whose allocate returns void* is not one");
  static_assert(Step > 0, "Bucketizer: Step must be positive");
  static_assert(Min <= Max, "Bucketizer: Min must not exceed Max");
  static_assert(Step == 0 || Min > Max || (Max - Min) % Step == Step - 1,
                "Bucketizer: the sizes [Min, Max] must split into whole buckets: (Max - Min + 1) must be a multiple of "
                "Step (D's rule), e.g. Bucketizer<A, 1, 512, 64> or Bucketizer<A, 65, 512, 64>");

 public:
  static constexpr std::size_t alignment = A::alignment;
  static constexpr MemorySpace memory_space = memory_space_of<A>();
  static constexpr std::size_t bucket_count = Step == 0 || Min > Max ? 1 : (Max - Min) / Step + 1;
  static constexpr std::size_t min_size = Min, max_size = Max, step = Step;
  using allocator_type = A;

  Bucketizer() noexcept(std::is_nothrow_default_constructible_v<A>)
    requires std::default_initializable<A>
  = default;
  /// Bucket i is `make(i)` (an A returned by value).
  template <class Make>
    requires std::same_as<std::remove_cvref_t<std::invoke_result_t<Make&, std::size_t>>, A>
  explicit Bucketizer(Make make) : Bucketizer(make, std::make_index_sequence<bucket_count>{}) {}

  /// The size each allocation of bucket i asks its allocator for: the bucket's largest size.
  static constexpr std::size_t bucket_size(std::size_t i) noexcept { return Min + (i + 1) * Step - 1; }

  Block allocate(std::size_t n) noexcept {
    if (!in_range(n)) return {};
    const Block b = buckets_[index(n)].allocate(top(n));
    return b ? Block{b.ptr, n} : Block{};
  }

  Block aligned_allocate(std::size_t n, std::size_t a) noexcept
    requires has_aligned_allocate<A>
  {
    if (!in_range(n)) return {};
    const Block b = buckets_[index(n)].aligned_allocate(top(n), a);
    return b ? Block{b.ptr, n} : Block{};
  }

  /// Grows b in place within its bucket (b.size + delta <= bucket_size of b's bucket).
  bool expand(Block& b, std::size_t delta) noexcept {
    if (delta == 0) return true;
    if (!b) return false;
    ALLOY_ASSERT(in_range(b.size), "Bucketizer::expand: the block's size is outside [Min, Max]: not from here");
    std::size_t m = 0;
    if (!in_range(b.size) || !add_checked(b.size, delta, m) || m > top(b.size)) return false;
    b.size = m;
    return true;
  }

  /// Within b's bucket in place; else a block from n's bucket, a copy, and b given back.
  bool reallocate(Block& b, std::size_t n) noexcept
    requires detail::copyable_memory<A>
  {
    if (bool r; detail::reallocate_ends_by(
            b, n, r, [this](std::size_t m) noexcept { return allocate(m); },
            [this](Block x) noexcept { return drop(x); }))
      return r;
    if (b.size == n) return true;
    if (in_range(b.size) && in_range(n) && index(b.size) == index(n)) {
      b.size = n;
      return true;
    }
    return move(b, n, [this](std::size_t m) noexcept { return allocate(m); });
  }

  bool aligned_reallocate(Block& b, std::size_t n, std::size_t a) noexcept
    requires has_aligned_allocate<A> && detail::copyable_memory<A>
  {
    if (!is_power_of_two(a)) return false;
    if (bool r; detail::reallocate_ends_by(
            b, n, r, [this, a](std::size_t m) noexcept { return aligned_allocate(m, a); },
            [this](Block x) noexcept { return drop(x); }))
      return r;
    if (is_aligned(b.ptr, a) && in_range(b.size) && in_range(n) && index(b.size) == index(n)) {
      b.size = n;
      return true;
    }
    return move(b, n, [this, a](std::size_t m) noexcept { return aligned_allocate(m, a); });
  }

  Ternary owns(Block b) noexcept
    requires has_owns<A>
  {
    if (!b || !in_range(b.size)) return Ternary::no;
    return buckets_[index(b.size)].owns(Block{b.ptr, top(b.size)});
  }

  Ternary resolve_internal_pointer(const void* p, Block& result) noexcept
    requires has_resolve_internal_pointer<A>
  {
    Ternary acc = Ternary::no;
    for (auto& a : buckets_) {
      const Ternary r = a.resolve_internal_pointer(p, result);
      if (r == Ternary::yes) return r;
      acc = acc | r;
    }
    return acc;
  }

  bool deallocate(Block b) noexcept
    requires has_deallocate<A>
  {
    if (!b) return true;
    ALLOY_ASSERT(in_range(b.size), "Bucketizer::deallocate: the block's size is outside [Min, Max]: not from here");
    if (!in_range(b.size)) return false;
    return buckets_[index(b.size)].deallocate(Block{b.ptr, top(b.size)});
  }

  bool deallocate_all() noexcept
    requires has_deallocate_all<A>
  {
    bool ok = true;
    for (auto& a : buckets_) ok = a.deallocate_all() && ok;
    return ok;
  }

  Ternary empty() noexcept
    requires has_empty<A>
  {
    Ternary e = Ternary::yes;
    for (auto& a : buckets_) e = e & a.empty();
    return e;
  }

  /// In [Min, Max]: what the bucket reserves for its size (A's good_alloc_size of bucket_size(i)); elsewhere, where
  /// every request fails, n rounded up to the alignment (0 when that overflows).
  std::size_t good_alloc_size(std::size_t n) noexcept {
    if (in_range(n))
      if (const std::size_t g = alloy::good_alloc_size(buckets_[index(n)], top(n))) return g;
    std::size_t r = 0;
    return round_up_checked(n, alignment, r) ? r : 0;
  }

  bool copy(void* dst, const void* src, std::size_t n, stream_view s) noexcept
    requires has_copy<A>
  {
    return buckets_[0].copy(dst, src, n, s);
  }

  Block allocate(stream_view s, std::size_t n) noexcept
    requires has_stream_ordered<A>
  {
    if (!in_range(n)) return {};
    const Block b = buckets_[index(n)].allocate(s, top(n));
    return b ? Block{b.ptr, n} : Block{};
  }
  bool deallocate(stream_view s, Block b) noexcept
    requires has_stream_ordered<A>
  {
    if (!b) return true;
    ALLOY_ASSERT(in_range(b.size), "Bucketizer::deallocate: the block's size is outside [Min, Max]: not from here");
    if (!in_range(b.size)) return false;
    return buckets_[index(b.size)].deallocate(s, Block{b.ptr, top(b.size)});
  }

  std::array<A, bucket_count>& buckets() noexcept { return buckets_; }
  const std::array<A, bucket_count>& buckets() const noexcept { return buckets_; }

 private:
  template <class Make, std::size_t... I>
  Bucketizer(Make& make, std::index_sequence<I...>) : buckets_{{make(I)...}} {}

  static constexpr bool in_range(std::size_t n) noexcept { return n >= Min && n <= Max && n != 0; }
  static constexpr std::size_t index(std::size_t n) noexcept { return (n - Min) / Step; }
  static constexpr std::size_t top(std::size_t n) noexcept { return bucket_size(index(n)); }

  // reallocate(b, 0): without deallocate the block is dropped (the generic reallocate's rule, as D).
  bool drop(Block b) noexcept {
    if constexpr (has_deallocate<A>) return deallocate(b);
    else return (void)b, true;
  }
  template <class Alloc>
  bool move(Block& b, std::size_t n, Alloc&& alloc) noexcept {
    const Block nb = alloc(n);
    if (!nb) return false;
    if (!detail::copy_within(nb.ptr, b.ptr, n < b.size ? n : b.size, buckets_[0])) {
      if constexpr (has_deallocate<A>) deallocate(nb);
      return false;
    }
    if constexpr (has_deallocate<A>) deallocate(b);
    b = nb;
    return true;
  }

  std::array<A, bucket_count> buckets_{};
};

}  // namespace alloy
