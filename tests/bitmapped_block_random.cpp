// ctest-labels: heavy
// Randomized differential tests of the BitmappedBlock family against an exact reference model (BitmapModel: one
// byte per block, plain first fit over the same payload address), in lockstep for every primitive: the model
// predicts every pointer. Every block and mode: static and runtime block size, Multiblock yes/no, over a span,
// Mallocator, AlignedMallocator and NoAccessAllocator (device stand-in: any host touch of the payload crashes);
// BitmappedBlockWithInternalPointers over a span, NoAccessAllocator, Mallocator (run-time block size) and
// AlignedMallocator. At least 10^6 operations per block and mode, about 1.4 x 10^7 in all. SharedBitmappedBlock's
// randomized runs are in bitmapped_block_shared.cpp (no model there: its single blocks start at the thread's word).
#include <alloy/aligned_mallocator.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/null_allocator.hpp>

#include <cstddef>
#include <vector>

#include <doctest/doctest.h>

#include "support/bitmapped_block_invariants.hpp"
#include "support/bitmapped_block_model.hpp"
#include "support/differential.hpp"
#include "support/test_length.hpp"

using alloy::AlignedMallocator;
using alloy::BitmappedBlock;
using alloy::BitmappedBlockWithInternalPointers;
using alloy::choose_at_runtime;
using alloy::Mallocator;
using alloy::Multiblock;
using alloy::NoAccessAllocator;
using alloy::test::BitmapModel;
using alloy::test::DiffOptions;

namespace {

// Every block and mode runs at least 10^6 operations under `tools/test.sh --long` (ALLOY_TEST_LONG; a twentieth of that
// otherwise, support/test_length.hpp), the many-seeds case in total over its seeds. The
// exception is the contents check through NoAccessAllocator's copy (an mprotect per copy): a short run with
// contents, then a long one without.
const std::size_t long_run = alloy::test::test_length(1'000'000);

// The model over a's payload: the same blocks at the same addresses.
template <class A>
BitmapModel model_of(const A& a, bool multi, bool starts = false) {
  return BitmapModel(a.payload(), a.block_size(), a.block_count(), A::alignment, multi, starts);
}

template <class A>
alloy::test::DiffStats diff(A& a, bool multi, std::size_t ops, DiffOptions o, bool starts = false) {
  REQUIRE(a.block_count() > 0);
  BitmapModel m = model_of(a, multi, starts);
  o.ops = ops;
  const auto st = alloy::test::run_differential(a, m, o);
  CHECK(st.allocations > ops / 8);
  CHECK(st.failures > 0);  // the arena fills up at times: exhaustion is exercised too
  CHECK(a.empty() == alloy::Ternary::yes);
  // allocate_all succeeds only on an empty block: after the deallocate_alls of a long enough run.
  if (multi && o.allocate_all && st.deallocate_alls >= 8) CHECK(st.allocate_alls > 0);
  MESSAGE("ops " << st.ops << " allocations " << st.allocations << " failures " << st.failures << " expansions "
                 << st.expansions << " reallocations " << st.reallocations << " peak live " << st.peak_live
                 << " allocate_all " << st.allocate_alls);
  return st;
}

DiffOptions opts(std::uint64_t seed, std::size_t max_size, std::size_t slots = 256) {
  DiffOptions o;
  o.seed = seed;
  o.max_size = max_size;
  o.slots = slots;
  o.max_alignment = 1024;
  o.deallocate_all_every = 25'000;
  return o;
}

}  // namespace

TEST_CASE("BitmappedBlock<64> over a span: exact first fit, every primitive") {
  std::vector<std::byte> mem(64 * 1024 + 100);
  BitmappedBlock<64> a{std::span<std::byte>(mem).subspan(3)};  // an odd start: the bitmap is aligned up to 8
  diff(a, true, long_run, opts(1, 512));
}

TEST_CASE("BitmappedBlock<64>: churn around the hint word (its fast paths, stale summary byte, fresh mask)") {
  // Few live blocks, half of the requests one block: most frees land in the hint word through the fast path, which
  // leaves the word's summary byte stale, and the two- and three-block searches that follow must still see it.
  std::vector<std::byte> mem(64 * 1024);
  BitmappedBlock<64> a{std::span<std::byte>(mem)};
  BitmapModel m = model_of(a, true);
  DiffOptions o = opts(11, 160, 40);
  o.deallocate_all_every = 0;
  o.ops = long_run;
  const auto st = alloy::test::run_differential(a, m, o);
  CHECK(st.allocations > long_run * 3 / 20);  // 150 000 of 10^6
  CHECK(a.empty() == alloy::Ternary::yes);
  MESSAGE("ops " << st.ops << " allocations " << st.allocations << " failures " << st.failures);
}

TEST_CASE("BitmappedBlock<64>: a small arena of four words, many seeds (the summary at word boundaries)") {
  // Four bitmap words and a live set that fills about half of them: runs cross word boundaries all the time, the
  // hint moves back and forth, and single- and multi-block frees meet at the hint word's tail and the next word's
  // head. (The stale-snapshot case found in review needs a narrower sequence than random runs reach, 4 million
  // biased steps did not: tests/bitmapped_block.cpp replays it directly.)
  for (std::uint64_t seed = 21; seed < 29; ++seed) {
    std::vector<std::byte> mem(256 * 64 + 64);
    BitmappedBlock<64, 64> a{std::span<std::byte>(mem)};
    REQUIRE(a.block_count() >= 250);
    BitmapModel m = model_of(a, true);
    DiffOptions o = opts(seed, 300, 64);
    o.deallocate_all_every = 0;
    o.ops = long_run / 8;
    const auto st = alloy::test::run_differential(a, m, o);
    CHECK(st.allocations > long_run / 100);  // 10 000 of 10^6 / 8
  }
}

TEST_CASE("BitmappedBlock<64>: two words, a nearly full hint word, one- and two-block requests") {
  // About 160 live requests of one or two blocks in 128 blocks: the hint word stays nearly full, the fast paths take
  // and free its last blocks while multi-block frees grow the next word's head, the ground of the stale-snapshot
  // case found in review. With the invariants checked after every operation, random runs of this shape do reach it
  // (measured with that fix undone: 2 of 300 runs of 60 000 operations, seeds 1-100 at 150, 160 and 170 slots; seed
  // 24 at 160 slots within 27 003 operations, kept below). tests/bitmapped_block.cpp replays it directly as well.
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    std::vector<std::byte> mem(2 * 64 * 64 + 64);
    BitmappedBlock<64, 64> a{std::span<std::byte>(mem)};
    REQUIRE(a.block_count() == 128);
    BitmapModel m = model_of(a, true);
    DiffOptions o;
    o.seed = seed;
    o.max_size = 128;
    o.slots = 160;
    o.ops = 40'000;
    o.deallocate_all_every = 0;
    o.contents = false;
    o.aligned_allocate = o.allocate_fresh = o.expand = o.reallocate = o.aligned_reallocate = false;
    const auto st = alloy::test::run_differential(a, m, o);
    CHECK(st.ops == o.ops);
    CHECK(st.failures > 0);
  }
}

TEST_CASE("BitmappedBlock over a span with NullAllocator bookkeeping: no summary index, same first fit") {
  // No memory outside the span at all (D's word-by-word search from the hint); the model predicts the same offsets.
  using BB = BitmappedBlock<64, 16, alloy::NullAllocator, Multiblock::yes, alloy::NullAllocator>;
  std::vector<std::byte> mem(64 * 1024 + 40);
  BB a{std::span<std::byte>(mem).subspan(5)};
  diff(a, true, long_run, opts(12, 700));
}

TEST_CASE("BitmappedBlock<16, 16> over a span: runs of more than 64 blocks") {
  std::vector<std::byte> mem(24 * 1024);
  BitmappedBlock<16, 16> a{std::span<std::byte>(mem)};
  const auto st = diff(a, true, long_run, opts(2, 2500, 128));
  CHECK(st.expansions > 100);
}

TEST_CASE("BitmappedBlock<choose_at_runtime> (48-byte blocks) over Mallocator") {
  BitmappedBlock<choose_at_runtime, 16, Mallocator> a(48 * 1500, 48);
  CHECK(a.block_size() == 48);
  CHECK(a.block_count() == 1500);
  diff(a, true, long_run, opts(3, 700));
}

TEST_CASE("BitmappedBlock<128, 64, AlignedMallocator>") {
  BitmappedBlock<128, 64, AlignedMallocator> a(128 * 700);
  diff(a, true, long_run, opts(4, 1500));
}

TEST_CASE("BitmappedBlock<64, 16, Mallocator, Multiblock::no>") {
  BitmappedBlock<64, 16, Mallocator, Multiblock::no> a(64 * 200);
  diff(a, false, long_run, opts(5, 64));
}

TEST_CASE("BitmappedBlock<choose_at_runtime, 32, NullAllocator, Multiblock::no> over a span") {
  std::vector<std::byte> mem(96 * 300);
  BitmappedBlock<choose_at_runtime, 32, alloy::NullAllocator, Multiblock::no> a(std::span<std::byte>(mem), 96);
  diff(a, false, long_run, opts(6, 96));
}

TEST_CASE("BitmappedBlock over NoAccessAllocator: the payload is never touched by the host") {
  const std::size_t before = NoAccessAllocator::live_blocks();
  {
    BitmappedBlock<256, 64, NoAccessAllocator> a(256 * 600);
    static_assert(alloy::memory_space_of<decltype(a)>() == alloy::MemorySpace::device);
    CHECK(NoAccessAllocator::live_blocks() == before + 1);  // one parent allocation: the payload only
    DiffOptions o = opts(7, 3000, 64);
    diff(a, true, 20'000, o);  // contents through copy (slow: mprotect per copy)
  }
  {
    BitmappedBlock<256, 64, NoAccessAllocator> a(256 * 600);
    DiffOptions o = opts(8, 3000, 64);
    o.contents = false;
    diff(a, true, long_run, o);  // a long run: any host touch of the payload would crash
  }
  {
    BitmappedBlock<choose_at_runtime, 64, NoAccessAllocator, Multiblock::no> a(64 * 100, 64);
    DiffOptions o = opts(9, 64, 128);
    o.contents = false;
    diff(a, false, long_run, o);
  }
  CHECK(NoAccessAllocator::live_blocks() == before);
}

TEST_CASE("BitmappedBlockWithInternalPointers: resolve_internal_pointer against the model's live set") {
  std::vector<std::byte> mem(32 * 1024);
  BitmappedBlockWithInternalPointers<32> a{std::span<std::byte>(mem)};
  diff(a, true, long_run, opts(10, 1200), true);
  BitmappedBlockWithInternalPointers<64, 64, NoAccessAllocator> d(64 * 500);
  DiffOptions o = opts(11, 2000, 64);
  o.contents = false;
  diff(d, true, long_run, o, true);
  BitmappedBlockWithInternalPointers<choose_at_runtime, 16, Mallocator> r(48 * 3000, 48);
  diff(r, true, long_run, opts(12, 1500), true);
  BitmappedBlockWithInternalPointers<128, 64, AlignedMallocator> al(128 * 1200);
  diff(al, true, long_run, opts(13, 2500), true);
}

TEST_CASE("BitmappedBlock family: every arena size from 1 to 135 blocks, then every fifth to 260") {
  // Short runs over many block counts: the padding bits of a last word that is not full, runs that end at the last
  // block, single-word and two-word bitmaps, spans that start at odd addresses.
  auto run = [](auto& a, bool multi, std::uint64_t seed, std::size_t max_size, std::size_t slots, bool starts) {
    REQUIRE(a.block_count() > 0);
    BitmapModel m = model_of(a, multi, starts);
    DiffOptions o = opts(seed, max_size, slots);
    o.ops = 4000;
    o.deallocate_all_every = 1500;
    o.expect_allocations = false;
    const auto st = alloy::test::run_differential(a, m, o);
    CHECK(st.allocations > 0);
    CHECK(st.ops == o.ops);
  };
  for (std::size_t blocks = 1; blocks <= 260; blocks += blocks < 135 ? 1 : 5) {
    std::vector<std::byte> mem(blocks * 128 + 512);
    BitmappedBlock<64, 64> span64{std::span<std::byte>(mem).first(blocks * 64 + 64 + 8 * ((blocks + 63) / 64))};
    CHECK(span64.block_count() >= blocks);  // one more when the span's start leaves no padding after the bitmap
    run(span64, true, 1000 + blocks, 64 * (1 + blocks % 9) + 3, 8 + blocks % 50, false);
    BitmappedBlock<128, 128> odd{std::span<std::byte>(mem).subspan(blocks % 13)};
    run(odd, true, 2000 + blocks, 128 * (1 + blocks % 5) + 1, 8 + blocks % 40, false);
    BitmappedBlock<choose_at_runtime, 16, Mallocator> rt(48 * blocks, 48);
    run(rt, true, 3000 + blocks, 48 * (1 + blocks % 70), 4 + blocks % 30, false);
    BitmappedBlock<32, 32, Mallocator, Multiblock::no> single(32 * blocks);
    run(single, false, 4000 + blocks, 32, 4 + blocks % 60, false);
    BitmappedBlockWithInternalPointers<64, 16, Mallocator> ip(64 * blocks);
    run(ip, true, 5000 + blocks, 700, 6 + blocks % 40, true);
    BitmappedBlock<64, 16, alloy::NullAllocator, Multiblock::yes, alloy::NullAllocator> nosum{
        std::span<std::byte>(mem)};
    run(nosum, true, 6000 + blocks, 600, 8 + blocks % 30, false);
  }
}
