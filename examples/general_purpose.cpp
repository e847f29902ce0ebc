// A general-purpose host allocator in one type (examples/general_purpose.hpp; docs/cookbook.md explains the layers):
// size classes of free lists that borrow from larger classes, over a growing pool of regions, malloc above 512 bytes.
// This program checks what the type promises and exits non-zero on the first wrong result; then the same for the
// variants kept for comparison (GeneralPurposeFixedClasses, GeneralPurposeBitmapped).
#include "general_purpose.hpp"

#include <alloy/alloy.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

int failures = 0;
void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "general_purpose: FAILED: %s\n", what);
    ++failures;
  }
}

// A byte pattern that depends on the block's id, so that overlapping blocks would be caught.
unsigned char pattern(std::uint64_t id, std::size_t i) { return static_cast<unsigned char>(id * 131 + i * 7); }
void fill(alloy::Block b, std::uint64_t id) {
  for (std::size_t i = 0; i < b.size; ++i) static_cast<unsigned char*>(b.ptr)[i] = pattern(id, i);
}
bool intact(alloy::Block b, std::uint64_t id, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (static_cast<const unsigned char*>(b.ptr)[i] != pattern(id, i)) return false;
  return true;
}

// 3 * 10^5 steps of W3's shape (2048 slots, 1..1024 bytes), every live block filled with its own pattern and checked
// when freed.
template <class A>
void randomized(A& a, const char* what) {
  std::vector<alloy::Block> blocks(2048);
  std::vector<std::uint64_t> ids(2048);
  std::uint64_t x = 0x2545F4914F6CDD1Dull, id = 0;
  bool ok = true;
  for (int step = 0; step < 300'000 && ok; ++step) {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    const std::uint64_t r = x * 0x2545F4914F6CDD1Dull;
    const std::size_t i = r % 2048;
    if (!blocks[i]) {
      const std::size_t n = 1 + (r >> 11) % 1024;
      blocks[i] = a.allocate(n);
      ok = blocks[i] && blocks[i].size == n && alloy::is_aligned(blocks[i].ptr, 16);
      ids[i] = ++id;
      if (ok) fill(blocks[i], ids[i]);
    } else {
      ok = intact(blocks[i], ids[i], blocks[i].size) && a.deallocate(blocks[i]);
      blocks[i] = {};
    }
  }
  check(ok, what);
  for (std::size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i]) check(intact(blocks[i], ids[i], blocks[i].size) && a.deallocate(blocks[i]), what);
}

}  // namespace

int main() {
  using GP = alloy_examples::GeneralPurpose<>;
  static_assert(alloy::allocator<GP> && alloy::has_deallocate<GP> && alloy::has_reallocate<GP> &&
                alloy::has_expand<GP> && alloy::has_aligned_allocate<GP> && GP::alignment == 16);
  static_assert(!alloy::has_owns<GP>);  // malloc cannot answer owns, so the stack does not declare it
  GP gp;

  // Small sizes: exactly n bytes, 16-aligned, the class's size as the hint; a freed block is the next one handed out
  // for its class (the lists are LIFO).
  {
    alloy::Block a = gp.allocate(24);
    check(a && a.size == 24 && alloy::is_aligned(a.ptr, 16), "allocate(24)");
    check(gp.good_alloc_size(24) == 32 && gp.good_alloc_size(512) == 512 && gp.good_alloc_size(1) == 16,
          "good_alloc_size: the class size");
    check(gp.deallocate(a), "deallocate(24)");
    alloy::Block b = gp.allocate(17);  // same class (17..32 bytes)
    check(b.ptr == a.ptr && b.size == 17, "a freed block is reused by its class");
    alloy::Block c = gp.allocate(33);  // the next class: another block
    check(c && c.ptr != b.ptr, "another class, another block");
    check(gp.deallocate(b) && gp.deallocate(c), "deallocate");
    check(gp.pool().allocator_count() == 1, "one 16 KiB region so far");
  }

  // Borrowing: a class whose list is empty takes a free block of a larger class (up to 1.2x its size), which goes
  // back to the list of its own capacity when freed; the bytes up to that capacity are usable in place (expand).
  {
    alloy::Block a = gp.allocate(90);  // class 96
    check(gp.deallocate(a), "deallocate(90)");
    alloy::Block b = gp.allocate(70);  // class 80 is empty: borrows the 96-byte block
    check(b.ptr == a.ptr && b.size == 70, "a class borrows a larger free block");
    check(gp.expand(b, 26) && b.size == 96 && !gp.expand(b, 1), "expand in place up to the block's capacity");
    check(gp.deallocate(b), "deallocate the borrowed block");
    alloy::Block c = gp.allocate(96);  // back in the 96-byte class
    check(c.ptr == a.ptr, "a freed block goes back to its own capacity's class");
    check(gp.deallocate(c), "deallocate");
  }

  // Large sizes go to malloc, and the pool does not grow for them.
  {
    alloy::Block big = gp.allocate(100'000);
    check(big && big.size == 100'000 && gp.pool().allocator_count() == 1, "allocate(100000) from malloc");
    fill(big, 7);
    check(intact(big, 7, big.size), "large block writable");
    check(gp.deallocate(big), "deallocate large");
  }

  // Aligned requests: small ones come from the pool at the class size and join the class's list when freed.
  {
    alloy::Block a = gp.aligned_allocate(100, 256);
    check(a && a.size == 100 && alloy::is_aligned(a.ptr, 256), "aligned_allocate(100, 256)");
    alloy::Block l = gp.aligned_allocate(5000, 4096);
    check(l && alloy::is_aligned(l.ptr, 4096), "aligned_allocate(5000, 4096)");
    check(!gp.aligned_allocate(100, 24), "aligned_allocate with an alignment that is not a power of two fails");
    check(gp.deallocate(a) && gp.deallocate(l), "deallocate aligned");
    alloy::Block again = gp.allocate(112);  // the same class as 100 bytes: the aligned block, reused
    check(again.ptr == a.ptr, "an aligned small block joins its class's list");
    check(gp.deallocate(again), "deallocate");
  }

  // reallocate keeps the bytes: within a class (in place), across classes, and across the 512-byte threshold.
  {
    alloy::Block b = gp.allocate(20);
    fill(b, 3);
    void* const p = b.ptr;
    check(gp.reallocate(b, 30) && b.ptr == p && intact(b, 3, 20), "reallocate within the class is in place");
    b.size = 20;  // what was filled
    check(gp.reallocate(b, 300) && intact(b, 3, 20), "reallocate to another class keeps the bytes");
    fill(b, 4);
    check(gp.reallocate(b, 4000) && intact(b, 4, 300), "reallocate past 512 bytes keeps the bytes");
    fill(b, 5);
    check(gp.reallocate(b, 64) && intact(b, 5, 64), "reallocate back into a class keeps the bytes");
    check(gp.deallocate(b), "deallocate");
  }

  // Randomized: 3 * 10^5 steps of W3's shape (2048 slots; an empty slot gets 1..1024 bytes, a full one is freed), every
  // live block filled with its own pattern and checked when freed; aligned requests now and then.
  {
    struct Slot {
      alloy::Block b;
      std::uint64_t id = 0;
    };
    std::vector<Slot> slots(2048);
    std::uint64_t x = 0x9E3779B97F4A7C15ull, id = 0;
    auto next = [&x] {
      x ^= x >> 12;
      x ^= x << 25;
      x ^= x >> 27;
      return x * 0x2545F4914F6CDD1Dull;
    };
    bool ok = true;
    for (int step = 0; step < 300'000 && ok; ++step) {
      Slot& s = slots[next() % slots.size()];
      if (!s.b) {
        const std::size_t n = 1 + next() % 1024;
        s.b = step % 97 == 0 ? gp.aligned_allocate(n, 64) : gp.allocate(n);
        ok = s.b && s.b.size == n && alloy::is_aligned(s.b.ptr, step % 97 == 0 ? 64 : 16);
        s.id = ++id;
        if (ok) fill(s.b, s.id);
      } else {
        ok = intact(s.b, s.id, s.b.size) && gp.deallocate(s.b);
        s.b = {};
      }
    }
    check(ok, "randomized: every block intact, sizes and alignments as asked");
    for (Slot& s : slots)
      if (s.b) check(intact(s.b, s.id, s.b.size) && gp.deallocate(s.b), "randomized: final blocks intact");
    std::printf("general_purpose: 3 * 10^5 random steps; the pool holds %zu regions of 16 KiB\n",
                gp.pool().allocator_count());
  }

  // GeneralPurposeFixedClasses: the same classes without borrowing (alloy's blocks only): a block stays in its class.
  {
    using GPF = alloy_examples::GeneralPurposeFixedClasses<>;
    static_assert(alloy::allocator<GPF> && alloy::has_reallocate<GPF> && alloy::has_aligned_allocate<GPF>);
    GPF f;
    alloy::Block a = f.allocate(90);
    check(f.deallocate(a), "GeneralPurposeFixedClasses: deallocate");
    alloy::Block b = f.allocate(70);
    check(b && b.ptr != a.ptr, "GeneralPurposeFixedClasses: no borrowing across classes");
    check(f.deallocate(b), "GeneralPurposeFixedClasses: deallocate");
    randomized(f, "GeneralPurposeFixedClasses");
  }

  // GeneralPurposeBitmapped: the same shape with at most K blocks cached per class over bitmapped chunks, so that
  // freed blocks go back to a pool that reuses them across sizes and gives empty chunks back.
  {
    using GPB = alloy_examples::GeneralPurposeBitmapped<alloy::AlignedMallocator, 8>;
    static_assert(alloy::allocator<GPB> && alloy::has_deallocate<GPB> && GPB::alignment == 16);
    GPB g;
    std::vector<alloy::Block> v;
    for (int i = 0; i < 1000; ++i) v.push_back(g.allocate(32));
    check(g.pool().allocator_count() == 1, "GeneralPurposeBitmapped: 1000 x 32 B in one 64 KiB chunk");
    for (alloy::Block b : v) check(g.deallocate(b), "GeneralPurposeBitmapped: deallocate");
    check(g.stack().small().buckets()[1].nodes() == 8, "GeneralPurposeBitmapped: a class caches 8 blocks");
    alloy::Block big = g.allocate(480);  // another class: from the chunk, where the 32-byte blocks were
    check(big && alloy::is_aligned(big.ptr, 16) && static_cast<char*>(big.ptr) < static_cast<char*>(v[100].ptr),
          "GeneralPurposeBitmapped: freed blocks are reused by another size");
    check(g.deallocate(big), "GeneralPurposeBitmapped: deallocate");
    alloy::Block al = g.aligned_allocate(100, 256), ll = g.aligned_allocate(5000, 4096);
    check(al && al.size == 100 && alloy::is_aligned(al.ptr, 256) && ll && alloy::is_aligned(ll.ptr, 4096),
          "GeneralPurposeBitmapped: aligned_allocate, small and large");
    check(g.deallocate(al) && g.deallocate(ll), "GeneralPurposeBitmapped: deallocate aligned");
    randomized(g, "GeneralPurposeBitmapped<K=8>");
    alloy_examples::GeneralPurposeBitmapped<alloy::AlignedMallocator, 0> g0;
    randomized(g0, "GeneralPurposeBitmapped<K=0>");
    check(g0.pool().allocator_count() == 1, "GeneralPurposeBitmapped<K=0>: every block freed, one chunk kept");
  }

  if (failures == 0) std::printf("general_purpose: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
