#pragma once
/// \file examples/general_purpose.hpp
/// General-purpose host allocators composed from alloy's blocks, shared by examples/general_purpose.cpp,
/// tests/general_purpose.cpp, the benchmarks (benchmarks/stacks.hpp, W3 and W6) and alloy-replay
/// (benchmarks/replay/stacks.hpp). They are examples of composition, not library headers: docs/cookbook.md
/// ("A general-purpose allocator in one type") says why each layer is there and what it costs.
///
/// - GeneralPurpose<Parent, RegionBytes>: the showcase. 20 size classes whose lists borrow from larger classes,
///   over regions aligned to RegionBytes with a capacity map each; Parent above 512 bytes.
/// - GeneralPurposeFixedClasses<Parent, ChunkBytes>: 32 classes of 16 bytes without borrowing (each block stays in
///   its class), made of alloy's blocks alone: as many instructions per W3 step (41.0 against 40.9), 1.39x the
///   memory on W6.
/// - GeneralPurposeBitmapped<Parent, CacheNodes, ChunkBytes>: capped lists over bitmapped chunks that give memory back.
#include <alloy/allocator_list.hpp>
#include <alloy/aligned_mallocator.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/bucketizer.hpp>
#include <alloy/common.hpp>
#include <alloy/free_list.hpp>
#include <alloy/ref.hpp>
#include <alloy/region.hpp>
#include <alloy/segregator.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace alloy_examples {

namespace detail {
/// Both types' aligned_allocate: alignments up to G's: allocate; larger ones above small_max: Parent's
/// aligned_allocate; larger ones for a small size: a block of the size class, aligned, straight from the pool, which
/// joins its class's list like any other block of that class when freed.
template <class G>
alloy::Block class_aligned_allocate(typename G::Stack& stack, typename G::Pool& pool, std::size_t n,
                                    std::size_t a) noexcept {
  if (!alloy::is_power_of_two(a)) return {};
  if (a <= G::alignment) return stack.allocate(n);
  if (n > G::small_max) return stack.large().aligned_allocate(n, a);
  if (n == 0) return {};
  const alloy::Block b = pool.aligned_allocate(alloy::round_up(n, G::class_step), a);
  return b ? alloy::Block{b.ptr, n} : alloy::Block{};
}

/// BorrowingClasses' 20 class sizes: 16, 32, ..., 128, then 160, 192, ..., 512.
constexpr std::size_t borrowing_class_size(std::size_t c) noexcept { return c < 8 ? 16 * (c + 1) : 32 * (c - 3); }
/// Entry n, 1 <= n <= 512: the class of a request of n bytes (the smallest class that holds it). Entry 0 is unused.
struct BorrowingClassTable {
  unsigned char c[513];
};
inline constexpr BorrowingClassTable borrowing_class_table = [] {
  BorrowingClassTable t{};
  for (std::size_t n = 1, c = 0; n <= 512; ++n) {
    while (borrowing_class_size(c) < n) ++c;
    t.c[n] = static_cast<unsigned char>(c);
  }
  return t;
}();

/// Parent's memory aligned to A: `allocate(n)` is Parent's `aligned_allocate(n, A)`. It lets a Region<AlignedTo<P, R>>
/// own memory aligned to R (Region's MinAlign would also round every block up to R).
template <alloy::allocator Parent, std::size_t A>
  requires alloy::has_aligned_allocate<Parent> && alloy::has_deallocate<Parent>
struct AlignedTo {
  static constexpr std::size_t alignment = A;
  static constexpr alloy::MemorySpace memory_space = alloy::memory_space_of<Parent>();
  alloy::Block allocate(std::size_t n) noexcept { return parent_.aligned_allocate(n, A); }
  bool deallocate(alloy::Block b) noexcept { return parent_.deallocate(b); }
  [[no_unique_address]] Parent parent_{};
};
}  // namespace detail

/// BorrowingClasses<Parent, RegionBytes>: the small side of GeneralPurpose. 20 size classes (16 to 128 bytes in steps
/// of 16, then 160 to 512 in steps of 32), each a LIFO list threaded through its free blocks, over a pool of regions
/// of RegionBytes aligned to RegionBytes. A request whose class list is empty takes, in this order: a free block of a
/// larger class up to 1.2x its class size; a new block carved from the newest region, when that has room (its bytes
/// are held already); a free block of any larger class; a new block from the pool, which adds a region when none has
/// room. A freed block goes back to the list of its own capacity, which a byte map at the start of its region records
/// when the block is carved (one byte per 16-byte granule; found from the pointer by masking, so a block carries no
/// header). A block's capacity never changes: blocks move between lists, never split.
///
/// Written by hand, because no block has its parts: alloy's FreeList (as D's) keeps one size range per list and goes
/// to its parent on a miss, so a Bucketizer of them cannot look at another class's list first; and no block records
/// a block's capacity apart from its size (a Block carries the requested size). The pool is composed: AllocatorList
/// of Region<AlignedTo<Parent, RegionBytes>>, each region's first RegionBytes / 16 bytes its map.
/// Why this order and these classes (docs/design_notes.md, "GeneralPurpose"): a miss costs about 60 cycles on W3 (two
/// mispredicted branches and the call), so the design keeps misses rare (2% of W3's requests) while the memory held
/// stays at the peak of the total; 32-byte steps above 128 bytes halve the classes there, so each list holds more
/// blocks and runs empty less often, at 8 bytes more rounding on average.
///
/// Capabilities: allocate and aligned_allocate (n <= 512; alignments up to RegionBytes / 2, the region's map taking
/// its first bytes), deallocate, expand and reallocate (in place up to the block's capacity), good_alloc_size (the
/// class size). No owns, no deallocate_all (blocks stay on the lists until the allocator is destroyed).
/// Alignment: 16. Thread safety: none. Movable (the lists point into the regions, which do not move), not copyable.
/// Failure: an empty Block for n == 0, n > 512, or when Parent fails and no listed block of a larger class fits.
template <alloy::allocator Parent, std::size_t RegionBytes>
  requires alloy::host_accessible<Parent> && alloy::has_aligned_allocate<Parent> && alloy::has_deallocate<Parent> &&
           std::default_initializable<Parent> && (alloy::is_power_of_two(RegionBytes)) && (RegionBytes >= 4096)
class BorrowingClasses {
 public:
  static constexpr std::size_t alignment = alloy::platform_alignment;
  static constexpr std::size_t small_max = 512;
  static constexpr std::size_t granule = 16;  // every block starts on a granule; the map has a byte for each
  static constexpr std::size_t classes = 20;
  static constexpr std::size_t map_bytes = RegionBytes / granule;

  /// Class c's block size: 16, 32, ..., 128, then 160, 192, ..., 512.
  static constexpr std::size_t class_size(std::size_t c) noexcept { return detail::borrowing_class_size(c); }
  /// The class of a request of n bytes, 1 <= n <= 512: the smallest class whose size is at least n, looked up by n
  /// itself (a table of 513 bytes: one load and no arithmetic; indexing a 32-byte table by (n - 1) >> 4 cost 0.1 ns
  /// more per W3 step, and the arithmetic form, min((n - 1) >> 4, (n + 127) >> 5), 0.3 ns more).
  static constexpr std::size_t class_of_size(std::size_t n) noexcept { return detail::borrowing_class_table.c[n]; }

  using Area = alloy::Region<detail::AlignedTo<Parent, RegionBytes>>;
  /// Every region is exactly RegionBytes (a request is at most 512 bytes), its map carved first.
  struct Regions {
    Area operator()(std::size_t) const noexcept {
      Area r(RegionBytes);
      (void)r.allocate(map_bytes);
      return r;
    }
  };
  using Pool = alloy::AllocatorList<Regions, Parent>;

  BorrowingClasses() noexcept = default;
  BorrowingClasses(BorrowingClasses&& o) noexcept { take(o); }
  BorrowingClasses& operator=(BorrowingClasses&& o) noexcept {
    if (this != &o) take(o);
    return *this;
  }

  alloy::Block allocate(std::size_t n) noexcept {
    if (n - 1 >= small_max) return {};  // n == 0 wraps around
    const std::size_t c = class_of_size(n);
    if (Node* h = heads_[c]) {
      heads_[c] = h->next;
      return {h, n};
    }
    return refill(c, n);
  }

  /// A small block aligned to `a`, carved at the class size from the pool, so it joins its class's list when freed.
  /// The padding before the aligned spot is carved too, into free blocks of up to 512 bytes on their classes' lists,
  /// so that aligned requests lose no memory. Alignments up to 16 are allocate; above RegionBytes / 2 no spot fits
  /// beside the region's map, and the request fails.
  alloy::Block aligned_allocate(std::size_t n, std::size_t a) noexcept {
    if (!alloy::is_power_of_two(a)) return {};
    if (a <= alignment) return allocate(n);
    if (n - 1 >= small_max || a > RegionBytes / 2) return {};
    return carve_aligned(class_of_size(n), n, a);
  }

  bool deallocate(alloy::Block b) noexcept {
    if (!b) return true;
    push(class_of(b.ptr), b.ptr);
    return true;
  }

  /// In place, up to the block's capacity (its class's size, or the larger class it was borrowed from).
  bool expand(alloy::Block& b, std::size_t delta) noexcept {
    if (delta == 0) return true;
    if (!b) return false;
    std::size_t m = 0;
    if (!alloy::add_checked(b.size, delta, m) || m > capacity(b.ptr)) return false;
    b.size = m;
    return true;
  }
  /// In place when n fits the block's capacity; otherwise another block (n <= 512), the bytes copied.
  bool reallocate(alloy::Block& b, std::size_t n) noexcept {
    if (bool r; alloy::detail::reallocate_ends(*this, b, n, r)) return r;
    if (n <= capacity(b.ptr)) {
      b.size = n;
      return true;
    }
    const alloy::Block nb = allocate(n);
    if (!nb) return false;
    std::memcpy(nb.ptr, b.ptr, b.size);
    (void)deallocate(b);
    b = nb;
    return true;
  }
  /// The class size for 1..512 bytes; above that (not served here) n rounded up to the alignment; 0 on overflow.
  std::size_t good_alloc_size(std::size_t n) const noexcept {
    if (n == 0) return 0;
    if (n <= small_max) return class_size(class_of_size(n));
    std::size_t r = 0;
    return alloy::round_up_checked(n, alignment, r) ? r : 0;
  }

  /// The block's capacity in bytes (from its region's map).
  static std::size_t capacity(const void* p) noexcept { return class_size(class_of(p)); }
  /// The largest class that class c borrows from before it carves: capacity at most 1.2x c's size.
  static constexpr std::size_t borrow_limit(std::size_t c) noexcept {
    std::size_t d = c;
    while (d + 1 < classes && 5 * class_size(d + 1) <= 6 * class_size(c)) ++d;
    return d;
  }
  [[nodiscard]] const Pool& pool() const noexcept { return pool_; }
  /// Blocks on class c's list (a walk: for tests).
  [[nodiscard]] std::size_t listed(std::size_t c) const noexcept {
    std::size_t k = 0;
    for (const Node* h = heads_[c]; h; h = h->next) ++k;
    return k;
  }
  /// Bytes the newest region has left for carving: the pool's room without a new region (the others are full).
  [[nodiscard]] std::size_t room() const noexcept { return room_; }

 private:
  struct Node {
    Node* next;
  };
  void take(BorrowingClasses& o) noexcept {
    pool_ = std::move(o.pool_);
    for (std::size_t c = 0; c < classes; ++c) heads_[c] = std::exchange(o.heads_[c], nullptr);
    newest_ = std::exchange(o.newest_, nullptr);
    room_ = std::exchange(o.room_, 0);
    spare_ = std::exchange(o.spare_, nullptr);
    spare_room_ = std::exchange(o.spare_room_, 0);
  }
  // p's region (its first byte) and p's offset in it: pointer arithmetic within the region, no integer casts.
  static std::uintptr_t offset_in_region(const void* p) noexcept { return alloy::address_of(p) & (RegionBytes - 1); }
  static unsigned char* region_of(const void* p) noexcept {
    return static_cast<unsigned char*>(const_cast<void*>(p)) - offset_in_region(p);
  }
  static unsigned char* map_entry(const void* p) noexcept { return region_of(p) + offset_in_region(p) / granule; }
  static std::size_t class_of(const void* p) noexcept { return *map_entry(p); }
  static void set_class(void* p, std::size_t c) noexcept { *map_entry(p) = static_cast<unsigned char>(c); }
  void push(std::size_t c, void* p) noexcept { heads_[c] = ::new (p) Node{heads_[c]}; }

  // Class c's list is empty (docs/design_notes.md, "GeneralPurpose", has the measurements behind this order).
  [[gnu::noinline]] alloy::Block refill(std::size_t c, std::size_t n) noexcept {
    const std::size_t lim = borrow_limit(c);
    if (Node* h = pop_from(c + 1, lim)) return {h, n};  // a free block up to 1.2x
    const std::size_t bytes = class_size(c);
    if (bytes <= room_) return carve(c, n);                       // bytes held already: the newest region's
    if (bytes <= spare_room_) return carve_spare(c, n);           // or the spare's
    if (Node* h = pop_from(lim + 1, classes - 1)) return {h, n};  // any free larger block, before the pool grows
    return carve(c, n);                                           // a new region
  }
  alloy::Block carve(std::size_t c, std::size_t n) noexcept {
    const alloy::Block b = take_from_pool(class_size(c));
    if (!b) return {};
    set_class(b.ptr, c);
    return {b.ptr, n};
  }
  alloy::Block carve_spare(std::size_t c, std::size_t n) noexcept { return {take_spare(c), n}; }
  // A block of class c from the spare's start (the caller has checked that it fits), its class in the map.
  unsigned char* take_spare(std::size_t c) noexcept {
    unsigned char* const p = spare_;
    spare_ += class_size(c);
    spare_room_ -= class_size(c);
    set_class(p, c);
    return p;
  }
  // Every block carved from the pool goes through here. It keeps room_: a block at the first spot after a map is the
  // first of a new region, which becomes the newest; one carved from the newest region lowers its room. Before a
  // request that the newest region cannot hold goes to the pool (which then adds a region), the newest region is
  // retired: what is left of it becomes the spare, and the previous spare's bytes become free blocks. So no region
  // but the newest has room in the pool, and carving within room_ never makes the pool add a region.
  alloy::Block take_from_pool(std::size_t bytes) noexcept {
    if (bytes > room_) retire_newest();
    const alloy::Block b = pool_.allocate(bytes);
    if (!b) return {};
    unsigned char* const region = region_of(b.ptr);
    if (offset_in_region(b.ptr) == map_bytes) {
      newest_ = region;
      room_ = RegionBytes - map_bytes - bytes;
    } else if (region == newest_) {
      room_ -= bytes;
    }
    return b;
  }
  // The spare's bytes into free blocks (each the largest class that fits what is left); then the newest region's room,
  // taken from the pool in one piece, is the new spare. (Carving the room into blocks at once instead holds as much
  // on W6 but runs lists empty twice as often: the small classes then borrow the tail's large blocks.)
  void retire_newest() noexcept {
    while (spare_room_ >= granule) {
      const std::size_t c = class_within(std::min(spare_room_, small_max));
      push(c, take_spare(c));
    }
    const std::size_t rest = std::exchange(room_, 0);
    if (rest < granule) return;
    if (const alloy::Block b = pool_.allocate(rest)) {
      spare_ = static_cast<unsigned char*>(b.ptr);
      spare_room_ = rest;
    }
  }
  // The head of the first non-empty list of classes [from, to], removed; null if all are empty.
  Node* pop_from(std::size_t from, std::size_t to) noexcept {
    for (std::size_t d = from; d <= to; ++d)
      if (Node* h = heads_[d]) {
        heads_[d] = h->next;
        return h;
      }
    return nullptr;
  }

  // A listed block of class c up to 1.2x (the borrowing rule) at an address aligned to a, removed from its list.
  // Only the heads are looked at for alignments up to 512 (a fresh spot costs at most 496 bytes of padding, which
  // becomes free blocks); for larger ones the first `aligned_search` nodes of each list (aligned blocks freed lately
  // are near the heads), since a fresh spot would cost up to a bytes.
  static constexpr std::size_t aligned_search = 16;
  void* find_aligned(std::size_t c, std::size_t a) noexcept {
    const std::size_t depth = a <= small_max ? 1 : aligned_search;
    for (std::size_t d = c, lim = borrow_limit(c); d <= lim; ++d) {
      Node** link = &heads_[d];
      for (std::size_t k = 0; *link && k < depth; ++k, link = &(*link)->next)
        if (alloy::is_aligned(*link, a)) {
          Node* const h = *link;
          *link = h->next;
          return h;
        }
    }
    return nullptr;
  }
  // The largest class whose size is at most `bytes` (bytes >= 16, a multiple of 16): padding becomes such blocks.
  static constexpr std::size_t class_within(std::size_t bytes) noexcept {
    std::size_t c = 0;
    while (c + 1 < classes && class_size(c + 1) <= bytes) ++c;
    return c;
  }
  // A new block of class c at an address aligned to a, from the pool: the block carved at the bump position; if it is
  // not aligned, it becomes a free block of its class, the padding up to the next aligned spot is carved into free
  // blocks (of up to 512 bytes, each the largest class that fits the rest), and the next block is tried there (the
  // pool serves from the region it served last while that has room). Each round carves at least the class size, and
  // a fresh region has an aligned spot for it (a <= RegionBytes / 2), so the loop ends.
  [[gnu::cold]] alloy::Block carve_aligned(std::size_t c, std::size_t n, std::size_t a) noexcept {
    if (void* p = find_aligned(c, a)) return {p, n};
    const std::size_t bytes = class_size(c);
    for (;;) {
      const alloy::Block b = carve(c, n);
      if (!b) return {};
      if (alloy::is_aligned(b.ptr, a)) return b;
      push(c, b.ptr);
      const std::uintptr_t end = alloy::address_of(b.ptr) + bytes;
      for (std::size_t gap = alloy::align_up(end, a) - end; gap > 0;) {
        const std::size_t pc = class_within(std::min(gap, small_max));
        const alloy::Block pad = carve(pc, class_size(pc));
        if (!pad) return {};
        push(pc, pad.ptr);
        gap -= class_size(pc);
      }
    }
  }

  // The list heads first: at offset 0 of the object, a head's address is the object's plus 8c, with no offset to add
  // on the fast paths (0.19 ns per W3 step less than with the pool first).
  Node* heads_[classes] = {};
  Pool pool_;
  unsigned char* newest_ = nullptr;  // the region that served the last first-block (null: none yet)
  std::size_t room_ = 0;             // bytes left in newest_ after its last carve
  unsigned char* spare_ = nullptr;   // the previous newest region's rest, carved from its start
  std::size_t spare_room_ = 0;       // bytes left at spare_
};

/// GeneralPurpose<Parent, RegionBytes>: the showcase. Size classes that borrow from each other, Parent above 512 B.
///
///   Segregator<512, BorrowingClasses<Parent, RegionBytes>, Parent>
///
/// A request of n <= 512 bytes pops its class's list (16, 32, ..., 128, then 160, 192, ..., 512 bytes); when that is
/// empty it borrows a free block of a larger class up to 1.2x its class size, else carves from the newest region while
/// that has room, else borrows any larger free block, and only then lets the pool add a region. A freed small block
/// goes on the list of its capacity (the class it was carved for, read from its region's map), so memory held tracks
/// the peak of the total rather than the sum of each class's peak. Requests above 512 bytes go to Parent.
/// Small blocks are never given back to Parent before the allocator is destroyed; every region goes back then.
///
/// Capabilities: allocate, deallocate, expand (in place up to the block's capacity; above 512 bytes Parent's, when it
/// has one), reallocate, good_alloc_size (the class size), aligned_allocate (small sizes: alignments up to
/// RegionBytes / 2, larger ones fail; above 512 bytes Parent's). No owns (Parent, malloc, cannot answer it), no
/// deallocate_all. Alignment: 16. Thread safety: none. Movable, not copyable.
/// Parent: host-accessible (the lists and maps are written into the regions), with aligned_allocate (the regions are
/// aligned to their size) and deallocate, default-constructible.
template <alloy::allocator Parent = alloy::AlignedMallocator, std::size_t RegionBytes = 16 * 1024>
  requires alloy::host_accessible<Parent> && alloy::has_aligned_allocate<Parent> && alloy::has_deallocate<Parent> &&
           std::default_initializable<Parent>
class GeneralPurpose {
 public:
  using Small = BorrowingClasses<Parent, RegionBytes>;
  using Stack = alloy::Segregator<Small::small_max, Small, Parent>;
  using Pool = typename Small::Pool;
  static constexpr std::size_t alignment = Stack::alignment;
  static constexpr std::size_t small_max = Small::small_max;

  GeneralPurpose() noexcept = default;
  GeneralPurpose(GeneralPurpose&&) noexcept = default;
  GeneralPurpose& operator=(GeneralPurpose&&) noexcept = default;
  GeneralPurpose(const GeneralPurpose&) = delete;
  GeneralPurpose& operator=(const GeneralPurpose&) = delete;

  alloy::Block allocate(std::size_t n) noexcept { return stack_.allocate(n); }
  bool deallocate(alloy::Block b) noexcept { return stack_.deallocate(b); }
  bool expand(alloy::Block& b, std::size_t delta) noexcept { return stack_.expand(b, delta); }
  bool reallocate(alloy::Block& b, std::size_t n) noexcept { return stack_.reallocate(b, n); }
  std::size_t good_alloc_size(std::size_t n) noexcept { return stack_.good_alloc_size(n); }
  alloy::Block aligned_allocate(std::size_t n, std::size_t a) noexcept { return stack_.aligned_allocate(n, a); }

  [[nodiscard]] const Pool& pool() const noexcept { return stack_.small().pool(); }
  [[nodiscard]] Stack& stack() noexcept { return stack_; }

 private:
  Stack stack_;
};

/// GeneralPurposeFixedClasses<Parent, ChunkBytes>: the first showcase, kept for comparison (docs/cookbook.md's table):
/// 16-byte size classes without borrowing, over alloy's blocks only.
///
///   Segregator<512,
///              Bucketizer<FreeList<Ref<Pool>, 0, unbounded>, 1, 512, 16>,   32 size classes of 16 B steps
///              Parent>                                                      above 512 B: Parent (malloc)
///   Pool = AllocatorList<Chunks, Parent>, Chunks making Region<Parent>s of ChunkBytes (larger on demand)
///
/// A request of n <= 512 bytes goes to the free list of its class; a miss takes one class-sized block from the pool,
/// which bumps through its newest region and adds a region when none has room. A freed small block goes on its
/// class's list (found by its size: no header, no lookup), so a block never serves another class and memory held is
/// the sum of each class's high-water mark (W6: 512.9 KiB against GeneralPurpose's 369.8 KiB).
/// Capabilities: allocate, deallocate, expand and reallocate (the Segregator's), good_alloc_size (the class size),
/// aligned_allocate when Parent has it. No owns, no deallocate_all. Alignment: 16. Thread safety: none.
/// Not copyable or movable: the free lists refer to the pool inside the same object.
template <alloy::allocator Parent = alloy::AlignedMallocator, std::size_t ChunkBytes = 32 * 1024>
  requires alloy::host_accessible<Parent> && std::default_initializable<Parent>
class GeneralPurposeFixedClasses {
 public:
  static constexpr std::size_t small_max = 512;  // the largest size served by the free lists
  static constexpr std::size_t class_step = 16;  // the size classes: 16, 32, ..., 512 bytes

  /// The pool behind the free lists: regions of ChunkBytes (or of the request, when larger) made on demand, their
  /// list nodes from Parent too, so that everything the allocator holds is counted where Parent counts.
  struct Chunks {
    alloy::Region<Parent> operator()(std::size_t n) const noexcept {
      return alloy::Region<Parent>(std::max(n, ChunkBytes));
    }
  };
  using Pool = alloy::AllocatorList<Chunks, Parent>;
  /// D's unchecked free list: each bucket of the Bucketizer sees one size only, so the list checks none.
  using Bucket = alloy::FreeList<alloy::Ref<Pool>, 0, alloy::unbounded>;
  using Small = alloy::Bucketizer<Bucket, 1, small_max, class_step>;
  using Stack = alloy::Segregator<small_max, Small, Parent>;

  static constexpr std::size_t alignment = Stack::alignment;

  GeneralPurposeFixedClasses() noexcept
      : stack_(Small([this](std::size_t) { return Bucket(alloy::Ref<Pool>(pool_)); }), Parent{}) {}
  GeneralPurposeFixedClasses(const GeneralPurposeFixedClasses&) = delete;
  GeneralPurposeFixedClasses& operator=(const GeneralPurposeFixedClasses&) = delete;

  alloy::Block allocate(std::size_t n) noexcept { return stack_.allocate(n); }
  bool deallocate(alloy::Block b) noexcept { return stack_.deallocate(b); }
  bool expand(alloy::Block& b, std::size_t delta) noexcept requires alloy::has_expand<Stack> {
    return stack_.expand(b, delta);
  }
  bool reallocate(alloy::Block& b, std::size_t n) noexcept requires alloy::has_reallocate<Stack> {
    return stack_.reallocate(b, n);
  }
  std::size_t good_alloc_size(std::size_t n) noexcept { return stack_.good_alloc_size(n); }

  /// Alignments up to 16: allocate. Larger ones above 512 bytes: Parent's aligned_allocate. Larger ones for a small
  /// size: a block of the size class, aligned, straight from the pool (a Region bumps to any alignment); freed, it
  /// joins its class's list like any other block of that class. The one member written by hand: the free lists
  /// (Phobos' and alloy's) have no aligned_allocate, and a Segregator declares one only when both parts do.
  alloy::Block aligned_allocate(std::size_t n, std::size_t a) noexcept requires alloy::has_aligned_allocate<Parent> {
    return detail::class_aligned_allocate<GeneralPurposeFixedClasses>(stack_, pool_, n, a);
  }

  /// The parts, for tests and statistics.
  [[nodiscard]] const Pool& pool() const noexcept { return pool_; }
  [[nodiscard]] Stack& stack() noexcept { return stack_; }

 private:
  Pool pool_;    // declared first: destroyed last, after the free lists that refer to it
  Stack stack_;
};

/// CappedFreeList<Parent, MaxNodes>: an unchecked free list (one size per list, as FreeList<P, 0, unbounded> under a
/// Bucketizer) that holds at most MaxNodes blocks: a block freed beyond that goes back to Parent. alloy's FreeList has
/// no such bound (D's has none either: only SharedFreeList's ApproxMaxNodes, which costs a 128-bit CAS per
/// operation), so this example writes the twenty lines itself. MaxNodes = 0 forwards everything to Parent.
template <alloy::allocator Parent, std::size_t MaxNodes>
  requires alloy::host_accessible<Parent> && alloy::has_deallocate<Parent>
class CappedFreeList {
 public:
  static constexpr std::size_t alignment = Parent::alignment;
  explicit CappedFreeList(Parent p) noexcept : parent_(p) {}
  CappedFreeList(CappedFreeList&& o) noexcept
      : parent_(o.parent_), root_(std::exchange(o.root_, nullptr)), nodes_(std::exchange(o.nodes_, 0)) {}
  CappedFreeList(const CappedFreeList&) = delete;
  CappedFreeList& operator=(const CappedFreeList&) = delete;
  ~CappedFreeList() { minimize(); }

  alloy::Block allocate(std::size_t n) noexcept {
    if (root_) {
      void* p = root_;
      root_ = *static_cast<void**>(p);
      --nodes_;
      return {p, n};
    }
    return parent_.allocate(n);
  }
  bool deallocate(alloy::Block b) noexcept {
    if (!b) return true;
    if (nodes_ >= MaxNodes) return parent_.deallocate(b);
    ::new (b.ptr) void*(root_);
    root_ = b.ptr;
    ++nodes_;
    size_ = b.size;
    return true;
  }
  std::size_t good_alloc_size(std::size_t n) noexcept { return alloy::good_alloc_size(parent_, n); }
  /// Gives every listed block back to Parent.
  void minimize() noexcept {
    while (root_) {
      void* p = root_;
      root_ = *static_cast<void**>(p);
      parent_.deallocate(alloy::Block{p, size_});
    }
    nodes_ = 0;
  }
  [[nodiscard]] std::size_t nodes() const noexcept { return nodes_; }

 private:
  Parent parent_;
  void* root_ = nullptr;
  std::size_t nodes_ = 0;
  std::size_t size_ = 0;  // the list's one block size (set by the first deallocate)
};

/// GeneralPurposeBitmapped<Parent, CacheNodes, ChunkBytes>: GeneralPurposeFixedClasses' shape with memory that goes
/// back.
///
///   Segregator<512,
///              Bucketizer<CappedFreeList<Ref<Pool>, CacheNodes>, 1, 512, 16>,   at most CacheNodes per class
///              Parent>
///   Pool = AllocatorList<Chunks, Parent>, Chunks making BitmappedBlock<16, 16, Parent, yes, Parent>s of ChunkBytes
///
/// A freed block beyond its class's cache goes back to its bitmapped chunk, where it coalesces with its free
/// neighbours and is reusable by any size (first fit); a chunk left empty goes back to Parent (the AllocatorList keeps
/// one). CacheNodes = 0: no free lists, the small side is the pool itself. Everything, the bitmaps' summary index
/// included, comes from Parent, so a counting Parent sees all the memory held.
template <alloy::allocator Parent = alloy::AlignedMallocator, std::size_t CacheNodes = 8,
          std::size_t ChunkBytes = 64 * 1024>
  requires alloy::host_accessible<Parent> && std::default_initializable<Parent>
class GeneralPurposeBitmapped {
 public:
  static constexpr std::size_t small_max = 512;
  static constexpr std::size_t class_step = 16;
  using Chunk = alloy::BitmappedBlock<16, 16, Parent, alloy::Multiblock::yes, Parent>;
  struct Chunks {
    Chunk operator()(std::size_t n) const noexcept { return Chunk(std::max(n, ChunkBytes)); }
  };
  using Pool = alloy::AllocatorList<Chunks, Parent>;
  using Bucket = CappedFreeList<alloy::Ref<Pool>, CacheNodes>;
  using Small = std::conditional_t<CacheNodes == 0, alloy::Ref<Pool>,
                                   alloy::Bucketizer<Bucket, 1, small_max, class_step>>;
  using Stack = alloy::Segregator<small_max, Small, Parent>;
  static constexpr std::size_t alignment = Stack::alignment;

  GeneralPurposeBitmapped() noexcept : stack_(make_small(), Parent{}) {}
  GeneralPurposeBitmapped(const GeneralPurposeBitmapped&) = delete;
  GeneralPurposeBitmapped& operator=(const GeneralPurposeBitmapped&) = delete;

  alloy::Block allocate(std::size_t n) noexcept { return stack_.allocate(n); }
  bool deallocate(alloy::Block b) noexcept { return stack_.deallocate(b); }
  bool reallocate(alloy::Block& b, std::size_t n) noexcept requires alloy::has_reallocate<Stack> {
    return stack_.reallocate(b, n);
  }
  std::size_t good_alloc_size(std::size_t n) noexcept { return stack_.good_alloc_size(n); }
  /// As GeneralPurpose's: a small size with a larger alignment takes a class-sized run from the pool (a bitmapped
  /// chunk aligns by its search); freed, it goes to its class like any other block of that class.
  alloy::Block aligned_allocate(std::size_t n, std::size_t a) noexcept requires alloy::has_aligned_allocate<Parent> {
    return detail::class_aligned_allocate<GeneralPurposeBitmapped>(stack_, pool_, n, a);
  }

  [[nodiscard]] const Pool& pool() const noexcept { return pool_; }
  [[nodiscard]] Stack& stack() noexcept { return stack_; }

 private:
  Small make_small() noexcept {
    if constexpr (CacheNodes == 0) return Small(pool_);
    else return Small([this](std::size_t) { return Bucket(alloy::Ref<Pool>(pool_)); });
  }
  Pool pool_;    // declared first: destroyed last
  Stack stack_;
};


}  // namespace alloy_examples
