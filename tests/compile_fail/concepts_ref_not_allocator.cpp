// Ref<A> of a type that is not an allocator (its allocate is not noexcept).
// expect: Ref<A>: A must be an alloy allocator
#include <alloy/block.hpp>
#include <alloy/ref.hpp>

struct Throwing {
  static constexpr std::size_t alignment = 16;
  alloy::Block allocate(std::size_t) { return {}; }  // not noexcept: not an alloy::allocator
};

int main() {
  Throwing t;
  alloy::Ref<Throwing> r(t);
  (void)r;
}
