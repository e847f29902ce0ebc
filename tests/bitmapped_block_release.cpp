// BitmappedBlock with ALLOY_ASSERT compiled out, as in a release build: what the block does where a debug build
// stops at an assertion. Every test preset builds with assertions on, so this file turns them off itself (its own
// executable: tests/main.cpp includes no alloy header that uses ALLOY_ASSERT).
#define ALLOY_ENABLE_ASSERTS 0
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>

#include <cstddef>

#include <doctest/doctest.h>

static_assert(!ALLOY_ENABLE_ASSERTS);

using alloy::BitmappedBlock;
using alloy::Block;
using alloy::choose_at_runtime;
using alloy::Mallocator;
using alloy::Ternary;

TEST_CASE("BitmappedBlock, assertions off: a bad run-time block size leaves a usable block with no blocks") {
  // not a positive multiple of Alignment (a debug build asserts instead; found by a mutation sweep:
  // no preset built the subcase that checks this)
  for (std::size_t bs : {std::size_t{0}, std::size_t{24}, std::size_t{8}}) {
    CAPTURE(bs);
    BitmappedBlock<choose_at_runtime, 16, Mallocator> r(4096, bs);
    CHECK(r.block_count() == 0);
    CHECK(r.block_size() == 16);  // Alignment, the size kept instead (docs/bitmapped_block.md)
    CHECK(!r.allocate(1));
    CHECK(!r.aligned_allocate(1, 64));
    CHECK(r.good_alloc_size(1) == 16);  // the rounding to the block size kept; allocate refuses
    CHECK(r.empty() == Ternary::yes);
    CHECK(r.deallocate_all());
  }
  BitmappedBlock<choose_at_runtime, 16, Mallocator> ok(4096, 32);
  CHECK(ok.block_count() == 128);
}

TEST_CASE("BitmappedBlock, assertions off: the multi-block free refuses a block outside the payload") {
  BitmappedBlock<64, 16, Mallocator> a(4096);
  Block b = a.allocate(200);
  REQUIRE(b);
  alignas(64) static std::byte other[512];
  CHECK(!a.deallocate(Block{other, 200}));  // docs/bitmapped_block.md, "Failure"
  CHECK(a.owns(Block{other, 200}) == Ternary::no);
  CHECK(a.deallocate(b));
  CHECK(a.empty() == Ternary::yes);
}

TEST_CASE("BitmappedBlock, assertions off: a block whose size wraps the single-block test is refused") {
  // offset % BlockSize + size wrapped to a small number, so such a block took the single-block path and freed the
  // live block at its start (found in review). BlockSize != Alignment: only then is the offset read.
  auto check = [](auto& a) {
    const Block b = a.allocate(64);
    REQUIRE(b);
    const Block bogus{static_cast<std::byte*>(b.ptr) + 16, SIZE_MAX - 15};
    CHECK(a.owns(bogus) == Ternary::no);
    CHECK(!a.deallocate(bogus));
    const Block c = a.allocate(64);  // b is still live: c is another block
    REQUIRE(c);
    CHECK(c.ptr != b.ptr);
    CHECK(a.deallocate(c));
    CHECK(a.deallocate(b));
    CHECK(a.empty() == Ternary::yes);
  };
  BitmappedBlock<64, 16, Mallocator> plain(4096);
  check(plain);
  alloy::SharedBitmappedBlock<64, 16, Mallocator> shared(4096);
  check(shared);
  alloy::BitmappedBlockWithInternalPointers<64, 16, Mallocator> internal(4096);
  check(internal);
}
