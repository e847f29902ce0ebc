/* alloy/adapters/callback_table.h: the C side of alloy::CallbackTable (see callback_table.hpp).
 *
 * A table of C function pointers over an alloy stack, in the shape of CANN's aclrtAllocatorDesc callbacks:
 *   alloc(obj, size)                -> block handle, or NULL on failure or for size 0
 *   free(obj, block)                   gives the block's memory back and frees the handle; NULL is a no-op
 *   alloc_advise(obj, size, hint)   -> block handle; `hint` is advice only (see callback_table.hpp)
 *   addr_of_block(block)            -> the block's address (NULL for a NULL handle)
 * Handles are `void*`, as CANN's aclrtAllocatorBlock, and point to an `alloy_block` record in host memory, so C
 * code may also read `((alloy_block*)handle)->size`. The memory itself is wherever the stack puts it (a device
 * stack's address must not be dereferenced on the host).
 * `destroy(obj)` ends the table's stack and its records: call it once, after the last free.
 * Tables are made in C++ by alloy::make_callback_table<Stack>() and handed to C through an extern "C" function of
 * the application's own (a header-only library cannot export one per stack); see docs/interop.md. */
#ifndef ALLOY_ADAPTERS_CALLBACK_TABLE_H
#define ALLOY_ADAPTERS_CALLBACK_TABLE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A C header: typedef, not using (the markers keep clang-tidy's C++ modernize check off these lines). */
/* NOLINTBEGIN(modernize-use-using) */
/* The host record behind every block handle. */
typedef struct alloy_block {
  void* address;
  size_t size;
} alloy_block;

typedef void* (*alloy_alloc_fn)(void* obj, size_t size);
typedef void (*alloy_free_fn)(void* obj, void* block);
typedef void* (*alloy_alloc_advise_fn)(void* obj, size_t size, void* addr_hint);
typedef void* (*alloy_addr_of_block_fn)(void* block);

typedef struct alloy_callback_table {
  void* obj; /* the allocator object: pass it to alloc, free and alloc_advise */
  alloy_alloc_fn alloc;
  alloy_free_fn free;
  alloy_alloc_advise_fn alloc_advise;
  alloy_addr_of_block_fn addr_of_block;
  void (*destroy)(void* obj);
  size_t alignment;  /* every address is aligned to at least this */
  int memory_space;  /* 0 host, 1 device, 2 host_pinned, 3 managed (alloy::MemorySpace) */
} alloy_callback_table;
/* NOLINTEND(modernize-use-using) */

enum { ALLOY_MEMORY_HOST = 0, ALLOY_MEMORY_DEVICE = 1, ALLOY_MEMORY_HOST_PINNED = 2, ALLOY_MEMORY_MANAGED = 3 };

#ifdef __cplusplus
}
#endif

#endif /* ALLOY_ADAPTERS_CALLBACK_TABLE_H */
