#include <alloy/block.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

#include <doctest/doctest.h>

using alloy::Block;

static_assert(std::is_trivially_copyable_v<Block> && std::is_standard_layout_v<Block>);
static_assert(sizeof(Block) == 2 * sizeof(void*));
static_assert(Block{}.ptr == nullptr && Block{}.size == 0);
static_assert(!Block{});                                  // empty is failure
static_assert(!std::is_convertible_v<Block, bool>);      // explicit: no accidental arithmetic
static_assert(std::is_constructible_v<bool, Block>);
static_assert(Block{} == Block{nullptr, 0} && !(Block{nullptr, 1} == Block{}));

static_assert(alloy::platform_alignment == alignof(std::max_align_t));
static_assert(alloy::choose_at_runtime == SIZE_MAX - 1 && alloy::unbounded == SIZE_MAX);
static_assert(alloy::choose_at_runtime != alloy::unbounded);
static_assert(static_cast<bool>(alloy::Multiblock::yes) && !static_cast<bool>(alloy::Multiblock::no));
static_assert(alloy::MemorySpace{} == alloy::MemorySpace::host);

TEST_CASE("Block: truthiness, equality, end_address") {
  int x[4] = {};
  Block b{x, sizeof x};
  CHECK(static_cast<bool>(b));
  CHECK(b == Block{x, 16});
  CHECK_FALSE(b == Block{x, 15});
  CHECK_FALSE(b == Block{x + 1, 16});
  CHECK(b.end_address() == reinterpret_cast<std::uintptr_t>(x) + 16);
  Block z{nullptr, 8};  // a null pointer is empty whatever its size
  CHECK_FALSE(static_cast<bool>(z));
  CHECK(Block{}.end_address() == 0);
}

TEST_CASE("MemorySpace: to_string") {
  CHECK(std::string_view(alloy::to_string(alloy::MemorySpace::host)) == "host");
  CHECK(std::string_view(alloy::to_string(alloy::MemorySpace::device)) == "device");
  CHECK(std::string_view(alloy::to_string(alloy::MemorySpace::host_pinned)) == "host_pinned");
  CHECK(std::string_view(alloy::to_string(alloy::MemorySpace::managed)) == "managed");
  CHECK(std::string_view(alloy::to_string(static_cast<alloy::MemorySpace>(9))) == "?");
}
