// PmrResource over a std::pmr::memory_resource: that is what PmrResource makes, not what it takes.
// expect: PmrResource: A must be an alloy allocator: a type with `static constexpr std::size_t alignment`.*a std::pmr::memory_resource or a standard allocator is not an alloy allocator
#include <alloy/adapters/pmr_resource.hpp>

#include <memory_resource>
#include <vector>

int main() {
  alloy::PmrResource<std::pmr::unsynchronized_pool_resource> r;
  std::pmr::vector<int> v(&r);
  v.push_back(1);
}
