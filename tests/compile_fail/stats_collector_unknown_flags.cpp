// Flags with a bit that is no alloy::Options value.
// expect: unknown bits in Flags or PerCallFlags
#include <alloy/mallocator.hpp>
#include <alloy/stats_collector.hpp>

int main() {
  alloy::StatsCollector<alloy::Mallocator, static_cast<alloy::Options>(1ull << 40)> a;
  return a.allocate(8) ? 0 : 1;
}
