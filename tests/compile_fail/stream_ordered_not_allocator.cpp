// StreamOrdered over something that is not an alloy allocator says so.
// expect: StreamOrdered: A must be an alloy allocator
// needs: cuda
#include <alloy/stream_ordered.hpp>

#include <memory>

int main() {
  alloy::StreamOrdered<std::allocator<std::byte>> pool;
  (void)pool;
}
