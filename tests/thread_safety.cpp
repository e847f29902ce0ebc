// ctest-labels: tsan
// Every Shared block through one suite (support/thread_safety.hpp): 8 and 16 threads of random allocate / owns /
// deallocate with per-thread ownership checks, run under the tsan preset; and a stress of 10^7 operations per block
// without TSan (ALLOY_TEST_LONG; the test command runs a twentieth). SharedStreamOrdered runs the same suite in
// tests/stream_ordered.cpp: its header includes the CUDA runtime API, so its test links the CPU stand-in for it,
// which this host-only file does not. cmake/conformance_coverage.cmake fails when a Shared block runs it nowhere.
#include <alloy/allocator_list.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/free_list.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/null_allocator.hpp>
#include <alloy/region.hpp>

#include <algorithm>

#include <doctest/doctest.h>

#include "support/rewinding_arena.hpp"
#include "support/test_length.hpp"
#include "support/thread_safety.hpp"

#if defined(__SANITIZE_THREAD__)
#define ALLOY_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ALLOY_UNDER_TSAN 1
#endif
#endif
#ifndef ALLOY_UNDER_TSAN
#define ALLOY_UNDER_TSAN 0
#endif

using alloy::Mallocator;
using alloy::test::check_thread_safe;
using alloy::test::ThreadSafeOptions;

namespace {
using SBB = alloy::SharedBitmappedBlock<64, 16, Mallocator>;
using SBB1 = alloy::SharedBitmappedBlock<64, 16, Mallocator, alloy::Multiblock::no>;
using SR = alloy::SharedRegion<Mallocator>;
using SFL = alloy::SharedFreeList<Mallocator, 16, 64>;
using SFLCapped = alloy::SharedFreeList<Mallocator, 16, 64, 32>;
using SFLRuntime = alloy::SharedFreeList<Mallocator, alloy::choose_at_runtime, alloy::choose_at_runtime,
                                         alloy::choose_at_runtime>;
struct Pools {  // an AllocatorList that grows by 256-block BitmappedBlocks and drops empty ones
  alloy::BitmappedBlock<64, 16, Mallocator> operator()(std::size_t n) const {
    return alloy::BitmappedBlock<64, 16, Mallocator>(std::max<std::size_t>(n, 64 * 256));
  }
};
using SAL = alloy::SharedAllocatorList<Pools>;
struct Arenas {  // arenas that take every block back and have no empty(): the list's other policy
  alloy::test::RewindingArena<false> operator()(std::size_t n) const {
    return {alloy::Region<Mallocator>(std::max<std::size_t>(n, 2048)), 0};
  }
};
template <class Bookkeeping>
using SALArenas = alloy::SharedAllocatorList<Arenas, Bookkeeping>;

// Each case: its block made fresh for 8 threads, then for 16; `after` as check_thread_safe's.
template <class Make, class After>
void both_counts(Make make, ThreadSafeOptions o, After after) {
  for (unsigned threads : {8u, 16u}) {
    o.threads = threads;
    o.steps = (ALLOY_UNDER_TSAN ? 24'000 : 48'000) / threads;
    check_thread_safe(make, o, after);
  }
}
template <class Make>
void both_counts(Make make, ThreadSafeOptions o) {
  both_counts(make, o, [](auto&) {});
}

// 10^7 operations per block in the long run (a twentieth in the test command), 8 threads; not under TSan (too slow).
template <class Make>
void stress(Make make, ThreadSafeOptions o) {
  if (ALLOY_UNDER_TSAN) return;
  o.threads = 8;
  o.steps = alloy::test::test_length(10'000'000) / o.threads;
  check_thread_safe(make, o);
}
}  // namespace

TEST_CASE("thread safety: SharedBitmappedBlock, multiblock and single-block") {
  both_counts([] { return SBB(64 * 4096); }, {.max_size = 256});
  both_counts([] { return SBB(64 * 64); }, {.max_size = 200, .seed = 2});  // under pressure: allocations fail
  both_counts([] { return SBB1(64 * 512); }, {.max_size = 64, .seed = 3});
}

TEST_CASE("thread safety: SharedRegion (frees only its last block)") {
  both_counts([] { return SR(1 << 22); }, {.max_size = 128, .frees_last_only = true});
}

TEST_CASE("thread safety: SharedFreeList, unbounded and capped (at compile time and at run time)") {
  both_counts([] { return SFL(); }, {.max_size = 128});  // 16..64 from the list, the rest from malloc
  both_counts([] { return SFLCapped(); }, {.max_size = 64, .seed = 4});
  both_counts([] { return SFLRuntime(16, 64, 4); }, {.max_size = 80, .seed = 5});
}

// Once every block is back, at most one empty allocator is kept (+ the one holding the nodes, in band).
template <class Factory, class Bookkeeping>
void kept_at_most_one(alloy::SharedAllocatorList<Factory, Bookkeeping>& list) {
  CHECK(list.allocator_count() <= 1 + alloy::AllocatorList<Factory, Bookkeeping>::in_band);
}

TEST_CASE("thread safety: SharedAllocatorList of BitmappedBlocks, and of arenas with the nodes apart and in band") {
  auto kept = [](auto& list) { kept_at_most_one(list); };
  both_counts([] { return SAL(); }, {.max_size = 256}, kept);
  both_counts([] { return SALArenas<Mallocator>(); }, {.max_size = 700, .seed = 6}, kept);
  both_counts([] { return SALArenas<alloy::NullAllocator>(); }, {.max_size = 700, .seed = 7}, kept);
}

TEST_CASE("thread safety: stress, 10^7 operations per block with ALLOY_TEST_LONG") {
  stress([] { return SBB(64 * 4096); }, {.max_size = 256});
  stress([] { return SR(std::size_t{1} << 28); }, {.max_size = 128, .frees_last_only = true});
  stress([] { return SFL(); }, {.max_size = 128});
  stress([] { return SAL(); }, {.max_size = 256});
}
