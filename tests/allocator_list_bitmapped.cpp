// AllocatorList of BitmappedBlocks: a pool that grows on demand, over host memory and over device-like memory.
#include <alloy/allocator_list.hpp>

#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>

#include <type_traits>
#include <vector>

#include <doctest/doctest.h>

#include "support/conformance.hpp"
#include "support/differential.hpp"

using alloy::Block;
using alloy::Ternary;

template <class Parent, std::size_t Capacity>
struct Pools {
  std::size_t* made = nullptr;
  alloy::BitmappedBlock<256, 256, Parent> operator()(std::size_t n) const {
    if (made) ++*made;
    return alloy::BitmappedBlock<256, 256, Parent>(n < Capacity ? Capacity : n);
  }
};
using DevicePool = alloy::AllocatorList<Pools<alloy::NoAccessAllocator, 64 * 256>>;
using HostPool = alloy::AllocatorList<Pools<alloy::Mallocator, 64 * 256>>;
using InBandHostPool = alloy::AllocatorList<Pools<alloy::Mallocator, 64 * 256>, alloy::NullAllocator>;

static_assert(DevicePool::memory_space == alloy::MemorySpace::device);
static_assert(alloy::has_copy<DevicePool> && alloy::has_owns<DevicePool> && alloy::has_deallocate<DevicePool> &&
              alloy::has_aligned_allocate<DevicePool> && alloy::has_reallocate<DevicePool>);
static_assert(!alloy::host_accessible<DevicePool>);

TEST_CASE_TEMPLATE("AllocatorList of BitmappedBlocks: conformance", A, DevicePool, HostPool, InBandHostPool) {
  alloy::test::check_allocator([] { return A(); });
}

TEST_CASE("AllocatorList of BitmappedBlock<256, 256, NoAccessAllocator>: long randomized run, memory never touched") {
  const std::size_t before = alloy::NoAccessAllocator::live_blocks();
  std::size_t made = 0;
  {
    DevicePool pool(Pools<alloy::NoAccessAllocator, 64 * 256>{&made});
    alloy::test::DiffOptions o;
    o.ops = 120'000;             // every op crosses mprotect through copy: keep the run within seconds
    o.slots = 256;
    o.max_size = 2000;          // 1 to 8 blocks
    o.max_alignment = 1024;
    o.deallocate_all_every = 100'000;
    const auto st = alloy::test::run_differential(pool, o);  // contents through copy only
    CHECK(st.allocations > 40'000);
    CHECK(st.deallocations > 20'000);
    CHECK(st.reallocations > 5'000);
    CHECK(st.failures == 0);
    CHECK(made > 3);
    CHECK(pool.empty() == Ternary::yes);
    CHECK(pool.allocator_count() <= 1);  // all given back: one empty pool kept at most
    MESSAGE(made << " pools made; peak live blocks " << st.peak_live << ", peak live bytes " << st.peak_live_bytes);
  }
  CHECK(alloy::NoAccessAllocator::live_blocks() == before);
}

TEST_CASE_TEMPLATE("AllocatorList of host BitmappedBlocks: randomized, out-of-band and in-band", A, HostPool,
                   InBandHostPool) {
  A pool;
  alloy::test::DiffOptions o;
  o.ops = 200'000;
  o.slots = 512;
  o.max_size = 3000;
  o.max_alignment = 1024;
  const auto st = alloy::test::run_differential(pool, o);
  CHECK(st.allocations > 50'000);
  CHECK(st.failures == 0);
  CHECK(pool.allocator_count() <= 1 + A::in_band);
}

TEST_CASE("AllocatorList of BitmappedBlocks: growth on demand and release") {
  std::size_t made = 0;
  DevicePool pool(Pools<alloy::NoAccessAllocator, 64 * 256>{&made});
  std::vector<Block> bs;
  for (int i = 0; i < 64 * 4; ++i) bs.push_back(pool.allocate(256));  // four pools' worth
  CHECK(pool.allocator_count() == 4);
  const Block big = pool.allocate(100 * 256);  // larger than a pool: the factory is asked for n
  CHECK(big.size == 100 * 256);
  CHECK(pool.allocator_count() == 5);
  CHECK(pool.deallocate(big));
  for (Block b : bs) CHECK(pool.deallocate(b));
  CHECK(pool.empty() == Ternary::yes);
  CHECK(pool.allocator_count() == 1);
  CHECK(made == 5);
}

// Regression test: in-band, the allocator made to hold a larger node array is asked for the request plus
// the array plus some slack for alignment, but a BitmappedBlock rounds both up to whole blocks; with blocks of 4096
// bytes the request did not fit beside the array, and failed where out-of-band it succeeds. An allocator made for
// the request alone now serves it.
template <std::size_t Min>
struct BigBlockPools {
  alloy::BitmappedBlock<4096, 16, alloy::Mallocator> operator()(std::size_t n) const {
    return alloy::BitmappedBlock<4096, 16, alloy::Mallocator>(n < Min ? Min : n);
  }
};
TEST_CASE_TEMPLATE("AllocatorList of BitmappedBlocks with big blocks: in-band serves what out-of-band serves", F,
                   BigBlockPools<1>, BigBlockPools<16 * 4096>) {
  const std::size_t n = std::is_same_v<F, BigBlockPools<1>> ? 4097 : 16 * 4096 + 1;
  alloy::AllocatorList<F> out;
  alloy::AllocatorList<F, alloy::NullAllocator> in;
  std::vector<Block> live;
  for (int i = 0; i < 40; ++i) {  // the node array grows several times
    const Block a = out.allocate(n), b = in.allocate(n);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(b.size == n);
    live.push_back(b);
  }
  for (Block b : live) CHECK(in.deallocate(b));
  CHECK(in.empty() == Ternary::yes);
  CHECK(in.allocator_count() <= 2);  // the array's home and at most one empty allocator
}
