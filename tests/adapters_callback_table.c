/* CallbackTable driven from C: the program a C runtime (CANN's aclrtAllocatorDesc shape) would be. Exit 0 on
 * success, 1 on the first failed check (with a message). */
#include <alloy/adapters/callback_table.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

alloy_callback_table* alloy_test_table_mallocator(void);
alloy_callback_table* alloy_test_table_aligned(void);
alloy_callback_table* alloy_test_table_noaccess(void);
alloy_callback_table* alloy_test_table_noaccess_region(size_t capacity);
alloy_callback_table* alloy_test_table_noaccess_pool(size_t capacity);
size_t alloy_test_noaccess_live_blocks(void);
int alloy_test_noaccess_write(void* dst, const void* src, size_t n);
int alloy_test_noaccess_read(void* dst, const void* src, size_t n);

static int failures = 0;
#define EXPECT(cond)                                                       \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                          \
    }                                                                      \
  } while (0)

static int aligned(const void* p, size_t a) { return ((uintptr_t)p & (a - 1)) == 0; }

/* Allocates, checks and frees blocks of many sizes; writes and reads back through `write`/`read` (memcpy for host
 * memory, the NoAccessAllocator's copy for "device" memory). */
static void churn(alloy_callback_table* t, int host, unsigned steps) {
  enum { SLOTS = 64 };
  void* live[SLOTS] = {0};
  unsigned char tag[SLOTS] = {0};
  uint64_t x = 0x9E3779B97F4A7C15ull;
  unsigned i;
  for (i = 0; i < steps; ++i) {
    unsigned s;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    s = (unsigned)(x % SLOTS);
    if (live[s] == NULL) {
      size_t n = 1 + (size_t)((x >> 8) % 3000);
      void* hint = (x >> 40) % 4 == 0 ? (void*)(uintptr_t)0x10000 : NULL; /* a 64 KiB-aligned hint: 4096 alignment */
      void* b = hint ? t->alloc_advise(t->obj, n, hint) : t->alloc(t->obj, n);
      if (b == NULL) continue; /* a finite arena may be full */
      EXPECT(((alloy_block*)b)->size == n);
      EXPECT(t->addr_of_block(b) == ((alloy_block*)b)->address);
      EXPECT(aligned(t->addr_of_block(b), t->alignment));
      tag[s] = (unsigned char)(x >> 24);
      if (host) {
        memset(t->addr_of_block(b), tag[s], n);
      } else {
        unsigned char buf[16];
        memset(buf, tag[s], sizeof buf);
        EXPECT(alloy_test_noaccess_write(t->addr_of_block(b), buf, n < 16 ? n : 16));
      }
      live[s] = b;
    } else {
      alloy_block* b = (alloy_block*)live[s];
      unsigned char buf[16];
      size_t k, n = b->size < 16 ? b->size : 16;
      if (host) memcpy(buf, b->address, n);
      else EXPECT(alloy_test_noaccess_read(buf, b->address, n));
      for (k = 0; k < n; ++k) EXPECT(buf[k] == tag[s]);
      t->free(t->obj, live[s]);
      live[s] = NULL;
    }
  }
  for (i = 0; i < SLOTS; ++i)
    if (live[i]) t->free(t->obj, live[i]);
}

int main(void) {
  alloy_callback_table* t = alloy_test_table_mallocator();
  EXPECT(t != NULL);
  EXPECT(t->memory_space == ALLOY_MEMORY_HOST);
  EXPECT(t->alignment == 16);
  EXPECT(t->alloc(t->obj, 0) == NULL);    /* size 0: no block */
  EXPECT(t->addr_of_block(NULL) == NULL);
  t->free(t->obj, NULL);                  /* a no-op */
  EXPECT(t->alloc(t->obj, SIZE_MAX) == NULL);
  churn(t, 1, 100000);
  {
    void* leak = t->alloc(t->obj, 100);   /* left live: destroy gives it back (ASan would see a leak) */
    EXPECT(leak != NULL);
  }
  t->destroy(t->obj);

  t = alloy_test_table_aligned();
  {
    void* b = t->alloc_advise(t->obj, 10, (void*)(uintptr_t)0x3000); /* hint aligned to 4096 */
    EXPECT(b != NULL && aligned(t->addr_of_block(b), 4096));
    t->free(t->obj, b);
    b = t->alloc_advise(t->obj, 10, (void*)(uintptr_t)0x1040);       /* hint aligned to 64 */
    EXPECT(b != NULL && aligned(t->addr_of_block(b), 64));
    t->free(t->obj, b);
  }
  churn(t, 1, 50000);
  t->destroy(t->obj);

  t = alloy_test_table_noaccess();
  EXPECT(t->memory_space == ALLOY_MEMORY_DEVICE);
  EXPECT(t->alignment == 4096);
  churn(t, 0, 20000);
  EXPECT(alloy_test_noaccess_live_blocks() == 0);
  t->destroy(t->obj);

  t = alloy_test_table_noaccess_region((size_t)1 << 20);
  EXPECT(t->memory_space == ALLOY_MEMORY_DEVICE);
  churn(t, 0, 20000);
  t->destroy(t->obj);
  EXPECT(alloy_test_noaccess_live_blocks() == 0);

  t = alloy_test_table_noaccess_pool((size_t)1 << 21);
  EXPECT(t->alignment == 256);
  churn(t, 0, 20000);
  t->destroy(t->obj);
  EXPECT(alloy_test_noaccess_live_blocks() == 0);

  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  puts("CallbackTable from C: all checks passed");
  return 0;
}
