// Where a BitmappedBlock's bitmap and payload live (alloy/detail/bitmap_layout.hpp), alone: D's in-band block count
// over every span size against a brute-force search, the capacity layouts in band and out of band (over
// NoAccessAllocator, whose pages crash on any host touch), release and take.
#include <alloy/detail/bitmap_layout.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/null_allocator.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

namespace {

namespace bm = alloy::detail::bitmap;

// The layout with its state open to the test (its members are for its owner only).
template <std::size_t Alignment, class Parent, std::size_t Maps>
struct Open : alloy::detail::BitmapLayout<Alignment, Parent, alloy::Mallocator, Maps> {
  using L = alloy::detail::BitmapLayout<Alignment, Parent, alloy::Mallocator, Maps>;
  using L::bits_, L::blocks_, L::mem_, L::payload_, L::words_;
  using L::L;
  bool span(std::span<std::byte> m, std::size_t bs) { return L::init_span(m, bs); }
  bool capacity(std::size_t c, std::size_t bs) { return L::init_capacity(c, bs); }
  void release() { L::release(); }
  void take(Open& o) { L::take(o); }
  ~Open() { L::release(); }
};

std::uintptr_t up(std::uintptr_t x, std::size_t a) { return (x + a - 1) / a * a; }

// D's count, brute force: the largest n whose Maps * ceil(n / 64) words, the padding to Alignment and n blocks fit.
template <std::size_t Alignment, std::size_t Maps>
std::size_t d_count(std::uintptr_t base, std::size_t len, std::size_t bs) {
  for (std::size_t n = len / bs + 1; n-- > 0;) {
    const std::uintptr_t pay = up(base + (n + 63) / 64 * Maps * 8, Alignment);
    if (pay - base + n * bs <= len) return n;
  }
  return 0;
}

template <std::size_t Alignment, std::size_t Maps>
void check_spans(std::size_t bs) {
  alignas(64) static std::byte mem[6000];
  for (std::size_t off : {0, 8, 24}) {
    for (std::size_t len = 0; len + off <= sizeof mem; len += 7) {
      Open<Alignment, alloy::NullAllocator, Maps> l;
      const bool any = l.span({mem + off, len}, bs);
      const std::size_t want = d_count<Alignment, Maps>(reinterpret_cast<std::uintptr_t>(mem + off), len, bs);
      REQUIRE(any == (want > 0));
      REQUIRE(l.blocks_ == want);
      if (!any) {
        CHECK(l.bits_ == bm::sentinel());
        continue;
      }
      CHECK(l.words_ == (want + 63) / 64);
      CHECK(reinterpret_cast<std::byte*>(l.bits_) == mem + off);
      CHECK(reinterpret_cast<std::uintptr_t>(l.payload_) % Alignment == 0);
      CHECK(l.payload_ >= reinterpret_cast<std::byte*>(l.bits_ + l.words_ * Maps));
      CHECK(l.payload_ + want * bs <= mem + off + len);
      CHECK(!l.mem_);  // a caller's span is never given back
    }
  }
}

}  // namespace

TEST_CASE("bitmap layout: D's block count over every span size, one and two bitmaps") {
  check_spans<16, 1>(16);
  check_spans<16, 1>(64);
  check_spans<64, 1>(64);
  check_spans<16, 2>(48);
  check_spans<64, 2>(128);
}

TEST_CASE("bitmap layout: from a parent, in band and out of band; release and take") {
  for (std::size_t c : {1, 63, 64, 4096, 100000}) {
    Open<64, alloy::Mallocator, 1> in;
    REQUIRE(in.capacity(c, 64));
    CHECK(in.blocks_ == (c + 63) / 64);
    CHECK(in.mem_);
    CHECK(reinterpret_cast<std::uint64_t*>(in.mem_.ptr) == in.bits_);
    CHECK(reinterpret_cast<std::uintptr_t>(in.payload_) % 64 == 0);
    CHECK(in.payload_ + in.blocks_ * 64 <= static_cast<std::byte*>(in.mem_.ptr) + in.mem_.size);

    Open<256, alloy::NoAccessAllocator, 2> out;
    REQUIRE(out.capacity(c, 256));
    CHECK(out.blocks_ == (c + 255) / 256);
    CHECK(out.words_ == (out.blocks_ + 63) / 64);
    CHECK(reinterpret_cast<std::uintptr_t>(out.payload_) % 256 == 0);
    out.bits_[0] = 1;  // the bitmap is host memory (from Bookkeeping); the payload is never touched
    out.bits_[2 * out.words_ - 1] = 1;

    Open<256, alloy::NoAccessAllocator, 2> moved;
    moved.take(out);
    CHECK(out.bits_ == bm::sentinel());
    CHECK((out.payload_ == nullptr && out.blocks_ == 0 && out.words_ == 0 && !out.mem_));
    CHECK(moved.bits_[0] == 1);
    moved.release();
    CHECK(moved.bits_ == bm::sentinel());
  }
  Open<64, alloy::Mallocator, 1> none;
  CHECK(!none.capacity(0, 64));
  CHECK(none.bits_ == bm::sentinel());
}
