#pragma once
// The stacks alloy-replay runs a trace on: one descriptor per stack, and the Mp11 list `Stacks` at the bottom.
// To add a stack: write a descriptor (a name and make(stats) returning a target, see replay.hpp) and add it to the
// list (one line). Alloy stacks draw from CountingMallocator so that the bytes they hold are counted.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <memory_resource>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <alloy/common.hpp>

#include "replay.hpp"

namespace alloy::replay {

/// Arena sizes derived from the trace, so that one stack list fits every trace.
/// A never-reusing arena (Region) gets every byte the trace ever requests plus the worst alignment padding; a
/// reusing arena gets twice the peak live bytes (at least 1 MiB).
inline std::size_t region_arena_bytes(const TraceStats& s) noexcept {
  std::size_t pad = 0, n = 0;
  if (!mul_checked(s.allocations + s.reallocations, s.max_alignment, pad)) return SIZE_MAX / 2;
  if (!add_checked(s.total_requested_bytes, pad, n)) return SIZE_MAX / 2;
  return round_up(std::max<std::size_t>(n, 1 << 20), 4096);
}
inline std::size_t reuse_arena_bytes(const TraceStats& s) noexcept {
  return round_up(std::max<std::size_t>(2 * s.peak_live_bytes, 1 << 20), 4096);
}

// ---- anchors ----------------------------------------------------------------------------------------------------
struct GlibcMalloc {
  static constexpr const char* name = "glibc malloc";
  static auto make(const TraceStats&) { return std::make_unique<GlibcTarget>(); }
};
struct PmrUnsyncPool {
  static constexpr const char* name = "std::pmr::unsynchronized_pool_resource";
  static auto make(const TraceStats&) { return std::make_unique<PmrTarget<std::pmr::unsynchronized_pool_resource>>(); }
};
struct PmrMonotonic {
  static constexpr const char* name = "std::pmr::monotonic_buffer_resource";
  static auto make(const TraceStats&) { return std::make_unique<PmrTarget<std::pmr::monotonic_buffer_resource>>(); }
};

// ---- alloy stacks -----------------------------------------------------------------------------------------------
struct AlloyMallocator {
  static constexpr const char* name = "alloy AlignedMallocator";
  static auto make(const TraceStats&) { return std::make_unique<AlloyTarget<CountingMallocator>>(); }
};

using AnchorStacks = boost::mp11::mp_list<GlibcMalloc, PmrUnsyncPool, PmrMonotonic, AlloyMallocator>;

}  // namespace alloy::replay

// Stacks built from blocks, added when their headers exist (so the tool always builds).
#if __has_include(<alloy/region.hpp>)
#include <alloy/region.hpp>
namespace alloy::replay {
struct RegionArena {
  static constexpr const char* name = "Region (arena: all bytes requested)";
  static auto make(const TraceStats& s) {
    return std::make_unique<AlloyTarget<Region<CountingMallocator>>>(region_arena_bytes(s));
  }
};
using RegionStacks = boost::mp11::mp_list<RegionArena>;
}  // namespace alloy::replay
#else
namespace alloy::replay {
using RegionStacks = boost::mp11::mp_list<>;
}
#endif

#if __has_include(<alloy/region.hpp>) && __has_include(<alloy/allocator_list.hpp>)
#include <alloy/allocator_list.hpp>
namespace alloy::replay {
/// 1 MiB regions made on demand (larger for a larger request); a region goes back to the parent once all its blocks
/// are freed (Region frees only its last block, so in practice once it is freed in LIFO order).
struct RegionFactory {
  Region<CountingMallocator> operator()(std::size_t n) const {
    return Region<CountingMallocator>(round_up(std::max<std::size_t>(n + 256, 1 << 20), 4096));
  }
};
struct RegionList {
  static constexpr const char* name = "AllocatorList of 1 MiB Regions";
  static auto make(const TraceStats&) { return std::make_unique<AlloyTarget<AllocatorList<RegionFactory>>>(); }
};
using RegionListStacks = boost::mp11::mp_list<RegionList>;
}  // namespace alloy::replay
#else
namespace alloy::replay {
using RegionListStacks = boost::mp11::mp_list<>;
}
#endif

#if __has_include(<alloy/bitmapped_block.hpp>) && __has_include(<alloy/allocator_list.hpp>)
#include <alloy/allocator_list.hpp>
#include <alloy/bitmapped_block.hpp>
namespace alloy::replay {
using Bitmapped64 = BitmappedBlock<64, platform_alignment, CountingMallocator>;
struct BitmappedArena {
  static constexpr const char* name = "BitmappedBlock<64> (arena: 2x peak live)";
  static auto make(const TraceStats& s) { return std::make_unique<AlloyTarget<Bitmapped64>>(reuse_arena_bytes(s)); }
};
/// BitmappedBlocks of 1 MiB made on demand (twice the request when larger); emptied ones go back to the parent
/// (AllocatorList keeps one).
struct BitmappedFactory {
  Bitmapped64 operator()(std::size_t n) const { return Bitmapped64(std::max<std::size_t>(2 * n, 1 << 20)); }
};
struct BitmappedList {
  static constexpr const char* name = "AllocatorList of BitmappedBlock<64> (1 MiB)";
  static auto make(const TraceStats&) { return std::make_unique<AlloyTarget<AllocatorList<BitmappedFactory>>>(); }
};
using BitmappedStacks = boost::mp11::mp_list<BitmappedArena, BitmappedList>;
}  // namespace alloy::replay
#else
namespace alloy::replay {
using BitmappedStacks = boost::mp11::mp_list<>;
}
#endif

#if __has_include("../../examples/general_purpose.hpp")
#include "../../examples/general_purpose.hpp"
namespace alloy::replay {
/// The showcase (examples/general_purpose.hpp): 20 size classes that borrow from larger ones, over 16 KiB regions
/// aligned to 16 KiB with a capacity map each, the C heap above 512 bytes and for aligned blocks above 512;
/// everything from CountingMallocator.
struct GeneralPurposeStack {
  static constexpr const char* name =
      "GeneralPurpose (20 classes borrowing up to 1.2x, capacity map per 16 KiB region, malloc above 512 B)";
  static auto make(const TraceStats&) {
    return std::make_unique<AlloyTarget<alloy_examples::GeneralPurpose<CountingMallocator>>>();
  }
};
/// The first showcase, without borrowing: size-class free lists over a growing pool of 32 KiB regions.
struct GeneralPurposeFixedStack {
  static constexpr const char* name =
      "GeneralPurposeFixedClasses (size-class free lists over regions, malloc above 512 B)";
  static auto make(const TraceStats&) {
    return std::make_unique<AlloyTarget<alloy_examples::GeneralPurposeFixedClasses<CountingMallocator>>>();
  }
};
/// The variant that gives freed blocks back (8 cached per class over 64 KiB BitmappedBlock<16> chunks).
struct GeneralPurposeBitmappedStack {
  static constexpr const char* name = "GeneralPurposeBitmapped<K=8> (8-node lists over BitmappedBlock<16> chunks)";
  static auto make(const TraceStats&) {
    return std::make_unique<AlloyTarget<alloy_examples::GeneralPurposeBitmapped<CountingMallocator, 8>>>();
  }
};
using GeneralPurposeStacks =
    boost::mp11::mp_list<GeneralPurposeStack, GeneralPurposeFixedStack, GeneralPurposeBitmappedStack>;
}  // namespace alloy::replay
#else
namespace alloy::replay {
using GeneralPurposeStacks = boost::mp11::mp_list<>;
}
#endif

namespace alloy::replay {
/// Every stack alloy-replay runs, in table order.
using Stacks = boost::mp11::mp_append<AnchorStacks, RegionStacks, RegionListStacks, BitmappedStacks,
                                      GeneralPurposeStacks>;
}  // namespace alloy::replay
