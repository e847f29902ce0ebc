// ContiguousFreeList<NullAllocator, 33, 64> over a caller's buffer, in lockstep with ContiguousModel.
#include <alloy/free_list.hpp>
#include <alloy/null_allocator.hpp>

#include <span>

#include "fuzz_driver.hpp"
#include "support/free_list_model.hpp"

ALLOY_FUZZ(in) {
  alignas(64) static std::byte buf[64 * 64];
  const std::size_t bytes = 64 * (in.u8() % 65);
  alloy::ContiguousFreeList<alloy::NullAllocator, 33, 64> a{std::span<std::byte>(buf, bytes)};
  alloy::test::ContiguousModel m(buf, bytes / 64, 64, 33, 64);
  alloy::fuzz::Config c;
  c.arena = bytes;
  c.granule = 64;
  c.lo = buf;
  c.span = bytes;
  alloy::fuzz::run(a, m, c, in);
}
