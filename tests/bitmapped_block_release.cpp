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

// docs/primitives.md, "Misuse": a release build refuses what it can tell cheaply (false, nothing changed) instead of
// corrupting the bitmap. Checked on each form, for a block in the hint word (the fast path), outside it, and a run.
template <class A>
static void check_refuses_misuse(A& a) {
  Block b = a.allocate(100);  // a run of 2 blocks (one with Multiblock::no: 64 bytes)
  if (!b) b = a.allocate(64);
  Block one = a.allocate(64);
  REQUIRE(b);
  REQUIRE(one);
  Block far[70];  // past the first word
  for (auto& x : far) REQUIRE((x = a.allocate(64)));
  CHECK(a.deallocate(b));
  CHECK(!a.deallocate(b));  // double free of a run, or of the hint word's block
  CHECK(a.deallocate(far[69]));
  CHECK(!a.deallocate(far[69]));  // double free outside the hint word
  CHECK(a.deallocate(one));
  CHECK(!a.deallocate(one));
  alignas(64) static std::byte other[256];
  CHECK(!a.deallocate(Block{other, 8}));    // foreign, one block
  CHECK(!a.deallocate(Block{other, 200}));  // foreign, a run
  CHECK(!a.deallocate(Block{far[0].ptr, 0}));  // size 0: never handed out
  // Nothing changed: the live blocks are still live (first fit takes b's and one's blocks again, not theirs).
  for (int i = 0; i < 69; ++i) {
    CHECK(a.owns(far[i]) == Ternary::yes);
    CHECK(a.deallocate(far[i]));
  }
  CHECK(a.empty() == Ternary::yes);
}

TEST_CASE("BitmappedBlock, assertions off: a double free, a foreign block and a Block of size 0 are refused") {
  BitmappedBlock<64, 16, Mallocator> plain(64 * 128);
  check_refuses_misuse(plain);
  BitmappedBlock<64, 16, Mallocator, alloy::Multiblock::no> single(64 * 128);
  check_refuses_misuse(single);
  alloy::SharedBitmappedBlock<64, 16, Mallocator> shared(64 * 128);
  check_refuses_misuse(shared);
  alloy::BitmappedBlockWithInternalPointers<64, 16, Mallocator> internal(64 * 128);
  check_refuses_misuse(internal);
}

TEST_CASE("BitmappedBlockWithInternalPointers, assertions off: a Block that is not one allocation is refused") {
  alloy::BitmappedBlockWithInternalPointers<64, 16, Mallocator> a(64 * 128);
  Block v = a.allocate(130), w = a.allocate(64);  // blocks 0-2, then 3
  REQUIRE(v);
  REQUIRE(w);
  CHECK(!a.deallocate(Block{v.ptr, 64}));      // smaller: would leak blocks 1-2
  CHECK(!a.deallocate(Block{v.ptr, 4 * 64}));  // larger: would free w
  CHECK(!a.deallocate(Block{static_cast<std::byte*>(v.ptr) + 64, 66}));  // a pointer inside it
  CHECK(!a.deallocate(Block{static_cast<std::byte*>(v.ptr) + 128, 2}));  // its last block alone
  Block r{};
  CHECK(a.resolve_internal_pointer(static_cast<std::byte*>(v.ptr) + 150, r) == Ternary::yes);
  CHECK(r == Block{v.ptr, 3 * 64});  // unchanged
  CHECK(a.deallocate(Block{v.ptr, 129}));  // any size that covers the same blocks is the same allocation
  CHECK(a.deallocate(w));
  CHECK(a.empty() == Ternary::yes);
}
