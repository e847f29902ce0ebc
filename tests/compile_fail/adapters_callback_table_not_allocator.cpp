// CallbackTable over a struct that has an alignment but whose allocate may throw (not noexcept): not an alloy
// allocator. Through make_callback_table, so the factory reports the class's message rather than "no matching
// function".
// expect: CallbackTable: A must be an alloy allocator: a type with `static constexpr std::size_t alignment`.*alloy::Mallocator wraps malloc and free
#include <alloy/adapters/callback_table.hpp>

#include <cstdlib>

struct ThrowingMalloc {
  static constexpr std::size_t alignment = 16;
  alloy::Block allocate(std::size_t n) { return {std::malloc(n), n}; }  // not noexcept
  bool deallocate(alloy::Block b) noexcept { return std::free(b.ptr), true; }
};

int main() {
  alloy_callback_table* t = alloy::make_callback_table<ThrowingMalloc>();
  t->destroy(t->obj);
}
