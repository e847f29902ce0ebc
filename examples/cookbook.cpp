// The recipes of docs/cookbook.md, each as a function that checks what it claims. Built and run by the test command.
#include <alloy/alloy.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory_resource>
#include <string>
#include <string_view>
#include <vector>

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "cookbook: %s:%d: %s failed\n", __FILE__, __LINE__, #cond); \
      return false;                                                            \
    }                                                                          \
  } while (0)

// 1. A scratch arena on the stack: InSituRegion, reset in O(1) per frame.
static bool frame_arena() {
  alloy::InSituRegion<16 * 1024> arena;
  for (int frame = 0; frame < 3; ++frame) {
    alloy::Block a = arena.allocate(1000), b = arena.allocate(3000);
    EXPECT(a && b);
    EXPECT(arena.deallocate_all());
    EXPECT(arena.empty() == alloy::Ternary::yes);
  }
  return true;
}

// 2. Fixed-size objects from a bitmap arena, in a std::map: StlAllocator over a stateful stack (held by pointer).
static bool node_pool_for_map() {
  using Pool = alloy::BitmappedBlock<64, 16, alloy::Mallocator, alloy::Multiblock::no>;
  Pool pool(1 << 20);
  {
    using Alloc = alloy::StlAllocator<std::pair<const int, int>, Pool>;
    std::map<int, int, std::less<int>, Alloc> m{Alloc(pool)};
    for (int i = 0; i < 1000; ++i) m[i] = i * i;
    EXPECT(m.size() == 1000 && m[31] == 961);
    EXPECT(pool.empty() == alloy::Ternary::no);
  }
  EXPECT(pool.empty() == alloy::Ternary::yes);  // every node went back
  return true;
}

// 3. A growing pool for variable sizes: AllocatorList of 1 MiB bitmaps, empty chunks returned to the OS.
struct MiB {
  auto operator()(std::size_t n) const {
    return alloy::BitmappedBlock<64, 64, alloy::MmapAllocator>(std::max<std::size_t>(n, 1 << 20));
  }
};
static bool growing_pool() {
  alloy::AllocatorList<MiB> pool;
  std::vector<alloy::Block> live;
  for (int i = 0; i < 5000; ++i) live.push_back(pool.allocate(64 + (i % 7) * 100));
  EXPECT(std::all_of(live.begin(), live.end(), [](alloy::Block b) { return static_cast<bool>(b); }));
  EXPECT(pool.allocator_count() > 1);
  for (alloy::Block b : live) EXPECT(pool.deallocate(b));
  EXPECT(pool.allocator_count() == 1);  // one empty chunk kept, the others unmapped
  return true;
}

// 4. std::pmr code on an alloy stack.
static bool pmr_over_region() {
  alloy::PmrResource<alloy::Region<alloy::Mallocator>> res(1 << 20);
  std::pmr::vector<std::pmr::string> words(&res);
  for (int i = 0; i < 100; ++i) words.emplace_back(std::string(40, static_cast<char>('a' + i % 26)));
  EXPECT(std::string_view(words[27]) == std::string(40, 'b'));
  return true;
}

// 5. Device memory without a GPU: the same pool over NoAccessAllocator, fed to device_buffer. The host never touches
//    the payload; bytes move through copy.
struct DeviceChunk {
  auto operator()(std::size_t n) const {
    return alloy::BitmappedBlock<256, 256, alloy::NoAccessAllocator>(std::max<std::size_t>(n, 1 << 20));
  }
};
static bool device_pool_on_cpu() {
  using Pool = alloy::AllocatorList<DeviceChunk>;
  Pool pool;
  const char msg[] = "device bytes";
  alloy::device_buffer<Pool> buf(msg, sizeof msg, alloy::stream_view{}, pool);
  buf.resize(4096, alloy::stream_view{});
  char back[sizeof msg] = {};
  EXPECT(alloy::copy(pool, back, buf.data(), sizeof msg));
  EXPECT(std::strcmp(back, msg) == 0);
  return true;
}

// 6. One runtime boundary: AnyAllocator for code that picks its allocator at run time.
static bool runtime_choice(bool device) {
  alloy::AnyAllocator a = device ? alloy::AnyAllocator(alloy::NoAccessAllocator{})
                                 : alloy::AnyAllocator(alloy::Mallocator{});
  alloy::Block b = a.allocate(128);
  EXPECT(b);
  EXPECT(a.memory_space() == (device ? alloy::MemorySpace::device : alloy::MemorySpace::host));
  EXPECT(a.deallocate(b));
  return true;
}

int main() {
  const bool ok = frame_arena() && node_pool_for_map() && growing_pool() && pmr_over_region() &&
                  device_pool_on_cpu() && runtime_choice(false) && runtime_choice(true);
  std::puts(ok ? "cookbook: all recipes ok" : "cookbook: a recipe failed");
  return ok ? 0 : 1;
}
