// The C++ side of tests/adapters_callback_table.c: extern "C" constructors that make CallbackTables over a host stack
// and over device-like stacks (NoAccessAllocator: any host touch of the memory crashes).
#include <alloy/adapters/callback_table.hpp>
#include <alloy/aligned_mallocator.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/region.hpp>

extern "C" {
alloy_callback_table* alloy_test_table_mallocator(void) { return alloy::make_callback_table<alloy::Mallocator>(); }
alloy_callback_table* alloy_test_table_aligned(void) { return alloy::make_callback_table<alloy::AlignedMallocator>(); }
alloy_callback_table* alloy_test_table_noaccess(void) {
  return alloy::make_callback_table<alloy::NoAccessAllocator>();
}
// A device-like arena: a Region over NoAccessAllocator keeps its bump pointer on the host.
alloy_callback_table* alloy_test_table_noaccess_region(size_t capacity) {
  return alloy::make_callback_table<alloy::Region<alloy::NoAccessAllocator>>(capacity);
}
// A device-like pool: 256-byte blocks over NoAccessAllocator, the bitmap on the host.
alloy_callback_table* alloy_test_table_noaccess_pool(size_t capacity) {
  return alloy::make_callback_table<alloy::BitmappedBlock<256, 256, alloy::NoAccessAllocator>>(capacity);
}
size_t alloy_test_noaccess_live_blocks(void) { return alloy::NoAccessAllocator::live_blocks(); }
int alloy_test_noaccess_write(void* dst, const void* src, size_t n) {
  return alloy::NoAccessAllocator::instance.copy(dst, src, n, {}) ? 1 : 0;
}
int alloy_test_noaccess_read(void* dst, const void* src, size_t n) {
  return alloy::NoAccessAllocator::instance.copy(dst, src, n, {}) ? 1 : 0;
}
}
