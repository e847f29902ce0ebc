// docs/blocks.md cannot go stale: every public header has a row, every test file and doc page it names exists,
// every test file is named, and each row's capabilities and memory space are what the has_x concepts and
// memory_space_of say for its "checked as" instantiation (registered below; the CUDA headers' rows in
// tests/blocks_map_cuda.cpp). A failing check prints the row's facts as the library sees them.
#include <alloy/adapters/any_allocator.hpp>
#include <alloy/affix_allocator.hpp>
#include <alloy/aligned_mallocator.hpp>
#include <alloy/allocator_list.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/bucketizer.hpp>
#include <alloy/checked.hpp>
#include <alloy/fallback_allocator.hpp>
#include <alloy/free_list.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/mmap_allocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/null_allocator.hpp>
#include <alloy/quantizer.hpp>
#include <alloy/recording_allocator.hpp>
#include <alloy/ref.hpp>
#include <alloy/region.hpp>
#include <alloy/segregator.hpp>
#include <alloy/stats_collector.hpp>

#include <doctest/doctest.h>

#include "support/blocks_map.hpp"

namespace {
using namespace alloy;

// The factories that the page's "checked as" cells name.
struct RegionFactory {
  Region<Mallocator> operator()(std::size_t n) const { return Region<Mallocator>(n < 4096 ? 4096 : n); }
};
struct DeviceRegionFactory {
  Region<NoAccessAllocator> operator()(std::size_t n) const { return Region<NoAccessAllocator>(n < 4096 ? 4096 : n); }
};

blocks_map::Registry registry() {
  using blocks_map::add;
  blocks_map::Registry r;
  add<NullAllocator>(r, "NullAllocator");
  add<Mallocator>(r, "Mallocator");
  add<AlignedMallocator>(r, "AlignedMallocator");
  add<MmapAllocator>(r, "MmapAllocator");
  add<NoAccessAllocator>(r, "NoAccessAllocator");
  add<Ref<Region<Mallocator>>, Ref<Region<NoAccessAllocator>>>(r, "Ref<Region<Mallocator>>");
  add<AnyAllocator>(r, "AnyAllocator");
  add<AffixAllocator<Mallocator, std::size_t>>(r, "AffixAllocator<Mallocator, std::size_t>");
  add<Checked<Mallocator>>(r, "Checked<Mallocator>");
  add<AllocatorList<RegionFactory>, AllocatorList<DeviceRegionFactory>>(r, "AllocatorList<RegionFactory>");
  add<SharedAllocatorList<RegionFactory>, SharedAllocatorList<DeviceRegionFactory>>(
      r, "SharedAllocatorList<RegionFactory>");
  add<BitmappedBlock<64, 16, Mallocator>, BitmappedBlock<64, 16, NoAccessAllocator>>(
      r, "BitmappedBlock<64, 16, Mallocator>");
  add<BitmappedBlock<64, 16, Mallocator, Multiblock::no>, BitmappedBlock<64, 16, NoAccessAllocator, Multiblock::no>>(
      r, "BitmappedBlock<64, 16, Mallocator, Multiblock::no>");
  add<SharedBitmappedBlock<64, 16, Mallocator>, SharedBitmappedBlock<64, 16, NoAccessAllocator>>(
      r, "SharedBitmappedBlock<64, 16, Mallocator>");
  add<BitmappedBlockWithInternalPointers<64, 16, Mallocator>,
      BitmappedBlockWithInternalPointers<64, 16, NoAccessAllocator>>(
      r, "BitmappedBlockWithInternalPointers<64, 16, Mallocator>");
  add<Bucketizer<Region<Mallocator>, 1, 512, 64>, Bucketizer<Region<NoAccessAllocator>, 1, 512, 64>>(
      r, "Bucketizer<Region<Mallocator>, 1, 512, 64>");
  add<FallbackAllocator<Region<Mallocator>, Mallocator>,
      FallbackAllocator<Region<NoAccessAllocator>, NoAccessAllocator>>(
      r, "FallbackAllocator<Region<Mallocator>, Mallocator>");
  add<FreeList<Mallocator, 64>>(r, "FreeList<Mallocator, 64>");
  add<ContiguousFreeList<Mallocator, 64>>(r, "ContiguousFreeList<Mallocator, 64>");
  add<SharedFreeList<Mallocator, 64>>(r, "SharedFreeList<Mallocator, 64>");
  add<Quantizer<Mallocator, RoundUpToMultipleOf<64>>, Quantizer<NoAccessAllocator, RoundUpToMultipleOf<64>>>(
      r, "Quantizer<Mallocator, RoundUpToMultipleOf<64>>");
  add<RecordingAllocator<Mallocator>, RecordingAllocator<NoAccessAllocator>>(r, "RecordingAllocator<Mallocator>");
  add<Region<Mallocator>, Region<NoAccessAllocator>>(r, "Region<Mallocator>");
  add<SharedRegion<Mallocator>, SharedRegion<NoAccessAllocator>>(r, "SharedRegion<Mallocator>");
  add<InSituRegion<4096>>(r, "InSituRegion<4096>");
  add<Segregator<256, Region<Mallocator>, Mallocator>, Segregator<256, Region<NoAccessAllocator>, NoAccessAllocator>>(
      r, "Segregator<256, Region<Mallocator>, Mallocator>");
  add<StatsCollector<Mallocator>, StatsCollector<NoAccessAllocator>>(r, "StatsCollector<Mallocator>");
  return r;
}

void report(const std::vector<std::string>& errors) {
  for (const auto& e : errors) MESSAGE(e);
  CHECK(errors.empty());
}

}  // namespace

TEST_CASE("docs/blocks.md: every header, test file and page named, every name real") {
  std::vector<std::string> errors;
  const auto rows = blocks_map::read_table(errors);
  blocks_map::check_structure(rows, errors);
  report(errors);
}

TEST_CASE("docs/blocks.md: capabilities and memory spaces are the concepts' (host headers)") {
  std::vector<std::string> errors;
  const auto rows = blocks_map::read_table(errors);
  blocks_map::check_facts(rows, registry(), false, errors);
  report(errors);
}

// Prints the "checked as" facts, for writing a row: test_blocks_map -tc=*print* --no-skip -s
TEST_CASE("docs/blocks.md: print the facts" * doctest::skip()) {
  for (const auto& [name, f] : registry())
    MESSAGE(name << " | " << f.capabilities << " | " << f.memory_space
                 << std::string(f.device_parent_checked ? " (device parents: yes)" : ""));
}
