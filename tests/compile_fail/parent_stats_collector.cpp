// StatsCollector<std::allocator<int>>:
// std::allocator is not an alloy allocator, and the block says so in a static_assert.
// expect: StatsCollector: A must be an alloy allocator \(a type with `static constexpr std::size_t alignment`.*a std allocator, a std::pmr::memory_resource or a type whose allocate returns void\* is not one
#include <alloy/stats_collector.hpp>
#include <memory>

int main() {
  alloy::StatsCollector<std::allocator<int>> s;
  return s.allocate(16) ? 0 : 1;
}
