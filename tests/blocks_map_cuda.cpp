// docs/blocks.md, the rows of the headers that need the CUDA runtime: their capabilities and memory spaces are what
// the has_x concepts and memory_space_of say (tests/blocks_map.cpp checks the rest of the page). Compile-time facts
// only: nothing here calls the runtime, so the stand-in build is as good as the real one.
// needs: cuda
#include <alloy/bitmapped_block.hpp>
#include <alloy/cuda_mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/stream_ordered.hpp>

#include <doctest/doctest.h>

#include "support/blocks_map.hpp"

namespace {
using namespace alloy;

blocks_map::Registry registry() {
  using blocks_map::add;
  blocks_map::Registry r;
  add<CudaMallocator>(r, "CudaMallocator");
  add<CudaAsyncMallocator>(r, "CudaAsyncMallocator");
  add<CudaHostMallocator>(r, "CudaHostMallocator");
  add<CudaManagedMallocator>(r, "CudaManagedMallocator");
  // Checked over a host parent like every "parent's" row; the device instantiation is the one the row names.
  add<StreamOrdered<BitmappedBlock<256, 256, Mallocator>>, StreamOrdered<BitmappedBlock<256, 256, CudaMallocator>>>(
      r, "StreamOrdered<BitmappedBlock<256, 256, Mallocator>>");
  add<SharedStreamOrdered<BitmappedBlock<256, 256, Mallocator>>,
      SharedStreamOrdered<BitmappedBlock<256, 256, CudaMallocator>>>(
      r, "SharedStreamOrdered<BitmappedBlock<256, 256, Mallocator>>");
  return r;
}

}  // namespace

TEST_CASE("docs/blocks.md: capabilities and memory spaces are the concepts' (CUDA headers)") {
  std::vector<std::string> errors;
  const auto rows = blocks_map::read_table(errors);
  blocks_map::check_facts(rows, registry(), true, errors);
  for (const auto& e : errors) MESSAGE(e);
  CHECK(errors.empty());
}

TEST_CASE("docs/blocks.md: print the facts (CUDA headers)" * doctest::skip()) {
  for (const auto& [name, f] : registry())
    MESSAGE(name << " | " << f.capabilities << " | " << f.memory_space
                 << std::string(f.device_parent_checked ? " (device parents: yes)" : ""));
}
