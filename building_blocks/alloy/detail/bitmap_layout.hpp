#pragma once
/// \file alloy/detail/bitmap_layout.hpp
/// Where a BitmappedBlock's bitmap and payload live, and who owns them: D's in-band layout over host memory (the
/// bitmap at the start of the memory, the payload after it, aligned), the out-of-band bitmap from Bookkeeping over
/// device memory (only the payload comes from the parent, and the host never touches it). Internal: no API promise.
/// The base of detail::BitmappedBlockImpl, which initializes the bits once the blocks are laid out.
///
/// Invariants (between the calls of its owner):
///   * bits_ is never null: without blocks it is bitmap::sentinel() (full, read-only words), so a fast path needs no
///     check; then payload_ is null and blocks_, words_ are 0;
///   * with blocks: `maps` bitmaps of words_ = ceil(blocks_ / 64) words each at bits_, and blocks_ blocks of the block
///     size from payload_, aligned to Alignment; in band, bits_ and the payload lie in the caller's span or in mem_;
///     out of band, bits_ came from Bookkeeping (words_ * maps words) and the host never reads or writes the payload;
///   * mem_ is what the parent gave (the owner's destructor gives it back through release); empty over a caller's
///     span, which is never given back.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>

#include <alloy/common.hpp>
#include <alloy/detail/bitmap.hpp>

namespace alloy::detail {

template <std::size_t Alignment, class Parent, class Bookkeeping, std::size_t Maps>
class BitmapLayout {
 public:
  static constexpr bool in_band = host_accessible<Parent>;
  static constexpr std::size_t maps = Maps;  // control bitmap (+ start bitmap)

  constexpr BitmapLayout() noexcept = default;
  explicit BitmapLayout(Parent parent) noexcept : parent_(std::move(parent)) {}
  BitmapLayout(const BitmapLayout&) = delete;
  BitmapLayout& operator=(const BitmapLayout&) = delete;

  /// Bitmap words needed for n blocks (of one bitmap).
  static std::size_t words_for(std::size_t n) noexcept { return divide_round_up(n, 64); }

 protected:
  ~BitmapLayout() = default;  // the owner gives the memory back (release) before

  /// Over a caller's span, with blocks of bs bytes: true when it holds at least one block (bits_ and payload_ set,
  /// the bitmap words not yet initialized). In band, D's layout over [p, p + len): the largest n such that
  /// ceil(n / 64) words per bitmap, padding to Alignment and n blocks fit. Out of band, the span is payload only.
  bool init_span(std::span<std::byte> mem, std::size_t bs) noexcept {
    if constexpr (!in_band) {
      const std::uintptr_t base = address_of(mem.data()), start = align_up(base, Alignment);
      if (!mem.data() || start < base || start - base > mem.size()) return false;
      const std::size_t n = (mem.size() - (start - base)) / bs;
      if (!alloc_out_of_band_bits(n)) return false;
      payload_ = static_cast<std::byte*>(to_pointer(start));
      blocks_ = n;
      return true;
    } else {
      if (!mem.data()) return false;
      const std::uintptr_t base0 = address_of(mem.data()), base = align_up(base0, alignof(std::uint64_t));
      if (base - base0 > mem.size()) return false;
      const std::size_t len = mem.size() - (base - base0);
      // D's first estimate: bits available over bits per block (bitmap included); then down to the largest n that fits.
      std::size_t n = len / bs;
      if (bs <= (SIZE_MAX - maps) / 8) {
        const std::size_t per = 8 * bs + maps;
        n = (len / per) * 8 + (len % per) * 8 / per;
      }
      auto fits = [&](std::size_t c, std::uintptr_t& pay) {
        const std::size_t words = words_for(c) * maps;
        const std::uintptr_t p = align_up(base + words * sizeof(std::uint64_t), Alignment);
        if (p < base) return false;
        std::size_t need = 0;
        if (!mul_checked(c, bs, need) || !add_checked(need, p - base, need)) return false;
        pay = p;
        return need <= len;
      };
      std::uintptr_t pay = 0;
      while (n && !fits(n, pay)) --n;
      if (n == 0) return false;
      bits_ = reinterpret_cast<std::uint64_t*>(to_pointer(base));
      payload_ = static_cast<std::byte*>(to_pointer(pay));
      blocks_ = n;
      words_ = words_for(n);
      return true;
    }
  }

  /// ceil(capacity / bs) blocks from the parent: true when they were laid out (as init_span). In band, one parent
  /// allocation of D's totalAllocation size; out of band, the payload from the parent (aligned_allocate when it has
  /// it, else over-allocated) and the bitmap from Bookkeeping.
  bool init_capacity(std::size_t capacity, std::size_t bs) noexcept {
    const std::size_t n = capacity / bs + (capacity % bs != 0);
    if (n == 0) return false;
    std::size_t payload_len = 0;
    if (!mul_checked(n, bs, payload_len)) return false;
    if constexpr (in_band) {
      // D's totalAllocation: bitmap words, the worst-case slack to reach Alignment, then the blocks.
      const std::size_t bitmap_bytes = words_for(n) * maps * sizeof(std::uint64_t);
      const std::size_t initial =
          std::min<std::size_t>(Parent::alignment, std::size_t{1} << std::min(31, std::countr_zero(bitmap_bytes)));
      const std::size_t slack = Alignment <= initial ? 0 : Alignment - initial;
      std::size_t total = 0;
      if (!add_checked(bitmap_bytes, slack, total) || !add_checked(total, payload_len, total)) return false;
      Block m = parent_.allocate(total);
      if (!m) return false;
      mem_ = m;
      bits_ = static_cast<std::uint64_t*>(m.ptr);
      payload_ = static_cast<std::byte*>(
          align_up(static_cast<void*>(static_cast<std::byte*>(m.ptr) + bitmap_bytes), Alignment));
      blocks_ = n;
      words_ = words_for(n);
      return true;
    } else {
      Block m{};
      if constexpr (Alignment > Parent::alignment && has_aligned_allocate<Parent>) {
        m = parent_.aligned_allocate(payload_len, Alignment);
      } else {
        std::size_t total = payload_len;
        if (Alignment > Parent::alignment && !add_checked(total, Alignment - Parent::alignment, total)) return false;
        m = parent_.allocate(total);
      }
      if (!m) return false;
      if (!alloc_out_of_band_bits(n)) {
        if constexpr (has_deallocate<Parent>) parent_.deallocate(m);
        return false;
      }
      mem_ = m;
      payload_ = static_cast<std::byte*>(align_up(m.ptr, Alignment));  // address arithmetic only: never touched
      blocks_ = n;
      return true;
    }
  }

  /// Gives back the out-of-band bitmap and the parent's memory; no blocks after.
  void release() noexcept {
    if constexpr (!in_band) {
      if (bits_ != bitmap::sentinel()) Bookkeeping{}.deallocate({bits_, words_ * maps * sizeof(std::uint64_t)});
    }
    if constexpr (has_deallocate<Parent>) {
      if (mem_) parent_.deallocate(mem_);
    }
    bits_ = bitmap::sentinel();
    payload_ = nullptr;
    blocks_ = words_ = 0;
    mem_ = {};
  }
  /// Takes o's memory (not its parent: the owner moves that first); o is left with none.
  void take(BitmapLayout& o) noexcept {
    bits_ = std::exchange(o.bits_, bitmap::sentinel());
    payload_ = std::exchange(o.payload_, nullptr);
    blocks_ = std::exchange(o.blocks_, 0);
    words_ = std::exchange(o.words_, 0);
    mem_ = std::exchange(o.mem_, Block{});
  }

  [[no_unique_address]] Parent parent_{};
  std::uint64_t* bits_ = bitmap::sentinel();  // never null, so the fast path needs no check
  std::byte* payload_ = nullptr;
  std::size_t blocks_ = 0;
  std::size_t words_ = 0;  // words per bitmap: ceil(blocks_ / 64)
  Block mem_{};            // what the parent gave (given back by release); empty over a caller's span

 private:
  bool alloc_out_of_band_bits(std::size_t n) noexcept {
    if (n == 0) return false;
    const std::size_t bytes = words_for(n) * maps * sizeof(std::uint64_t);
    Block b = Bookkeeping{}.allocate(bytes);
    if (!b) return false;
    ALLOY_ASSERT(is_aligned(b.ptr, alignof(std::uint64_t)),
                 "BitmappedBlock: the bookkeeping allocator returned memory not aligned to 8 bytes");
    bits_ = static_cast<std::uint64_t*>(b.ptr);
    words_ = words_for(n);
    return true;
  }
};

}  // namespace alloy::detail
