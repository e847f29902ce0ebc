// ctest-labels: tsan
// SharedAllocatorList: AllocatorList under one mutex.
#include <alloy/allocator_list.hpp>

#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/region.hpp>

#include <algorithm>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "support/conformance.hpp"

using alloy::Block;
using alloy::Ternary;

template <class Parent, std::size_t Min>
struct Regions {
  alloy::Region<Parent> operator()(std::size_t n) const { return alloy::Region<Parent>(std::max(n, Min)); }
};
using SL = alloy::SharedAllocatorList<Regions<alloy::Mallocator, 4096>>;
using DeviceSL = alloy::SharedAllocatorList<Regions<alloy::NoAccessAllocator, 1 << 16>>;

namespace alloy::test {
template <class F, class B>
inline constexpr bool deallocates_last_only<alloy::SharedAllocatorList<F, B>> = true;  // over Regions
}

static_assert(alloy::has_owns<SL> && alloy::has_deallocate<SL> && alloy::has_aligned_allocate<SL> &&
              alloy::has_expand<SL> && alloy::has_reallocate<SL> && alloy::has_deallocate_all<SL> &&
              alloy::has_empty<SL>);
static_assert(!alloy::has_copy<SL> && alloy::has_copy<DeviceSL> && DeviceSL::memory_space == alloy::MemorySpace::device);
static_assert(!std::is_copy_constructible_v<SL> && !std::is_move_constructible_v<SL>);

TEST_CASE_TEMPLATE("SharedAllocatorList: conformance", A, SL, DeviceSL,
                   alloy::SharedAllocatorList<Regions<alloy::Mallocator, 4096>, alloy::NullAllocator>) {
  alloy::test::check_allocator([] { return A(); });
}

// The threaded churn (Regions' kin that take every block back, the nodes apart and in band; contents, overlaps,
// the empty allocators dropped) is the suite every Shared block runs, in tests/thread_safety.cpp. Kept here: the
// race for new regions over device memory, which that suite (host blocks only: it writes into every block) cannot
// run, and which checks the exact number of regions made.
TEST_CASE("SharedAllocatorList: threads racing for new regions over device-like memory") {
  DeviceSL list;
  constexpr int n_threads = 4;
  std::vector<std::vector<Block>> got(n_threads);
  std::vector<std::thread> ts;
  for (int t = 0; t < n_threads; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) got[static_cast<std::size_t>(t)].push_back(list.allocate(1000));
    });
  for (auto& t : ts) t.join();
  std::vector<Block> all;
  for (auto& v : got) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end(), [](Block x, Block y) { return x.ptr < y.ptr; });
  for (std::size_t i = 0; i + 1 < all.size(); ++i) {
    REQUIRE(all[i]);
    CHECK(all[i].end_address() <= alloy::address_of(all[i + 1].ptr));
  }
  for (Block b : all) CHECK(list.owns(b) == Ternary::yes);
  CHECK(list.allocator_count() == (2000 + 64) / 65);  // 65 blocks of 1008 bytes per 64 KiB region
  CHECK(list.deallocate_all());
  CHECK(list.empty() == Ternary::yes);
}
