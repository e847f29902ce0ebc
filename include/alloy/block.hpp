#pragma once
/// \file alloy/block.hpp
/// The vocabulary every allocator speaks: Block (D's `void[]`), Multiblock, MemorySpace and the size sentinels.
#include <cstddef>
#include <cstdint>

#include <alloy/ternary.hpp>

namespace alloy {

/// Block
///
/// Semantics: a piece of memory, D's `void[]`: a pointer and a size, passed by value. An empty Block
/// (`ptr == nullptr`) is how every primitive reports failure, whatever its size. The size is the size the caller
/// asked for, not what the allocator reserved (see `good_alloc_size`). Two Blocks are equal when both fields are.
/// Example:
/// ```cpp
/// unsigned char buf[64];
/// alloy::Block b{buf, sizeof buf};
/// CHECK(static_cast<bool>(b));
/// CHECK(b.end_address() - reinterpret_cast<std::uintptr_t>(buf) == 64);
/// CHECK(!alloy::Block{});                     // empty: failure
/// CHECK(b == alloy::Block{buf, 64});
/// ```
struct Block {
  void* ptr = nullptr;
  std::size_t size = 0;
  explicit constexpr operator bool() const noexcept { return ptr != nullptr; }
  friend constexpr bool operator==(Block, Block) = default;
  /// One past the last byte, as an address (never dereferenced).
  [[nodiscard]] std::uintptr_t end_address() const noexcept { return reinterpret_cast<std::uintptr_t>(ptr) + size; }
};

/// Whether a block allocator may serve a request with more than one of its blocks (D's `Flag!"multiblock"`).
enum class Multiblock : bool { no = false, yes = true };

/// Whether a region hands out memory from the end of its chunk downwards (D's `Flag!"growDownwards"`).
enum class GrowDownwards : bool { no = false, yes = true };

/// The alignment that `malloc` guarantees: 16 on x86-64, as D's `platformAlignment`.
inline constexpr std::size_t platform_alignment = alignof(std::max_align_t);
/// A template parameter whose value is given to the constructor instead (D's `chooseAtRuntime`).
inline constexpr std::size_t choose_at_runtime = SIZE_MAX - 1;
/// No upper bound (D's `unbounded`).
inline constexpr std::size_t unbounded = SIZE_MAX;

/// Where an allocator's memory lives. A static property of every allocator (`A::memory_space`, default `host`):
/// `host` (pageable), `device` (GPU memory the host must not touch), `host_pinned` (page-locked host memory, reachable
/// from the device), `managed` (unified memory, reachable from both).
enum class MemorySpace : std::uint8_t { host, device, host_pinned, managed };

constexpr const char* to_string(MemorySpace s) noexcept {
  switch (s) {
    case MemorySpace::host: return "host";
    case MemorySpace::device: return "device";
    case MemorySpace::host_pinned: return "host_pinned";
    case MemorySpace::managed: return "managed";
  }
  return "?";
}

}  // namespace alloy
