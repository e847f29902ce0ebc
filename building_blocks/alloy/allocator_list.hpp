#pragma once
/// \file alloy/allocator_list.hpp
/// AllocatorList and SharedAllocatorList: a list of allocators created on demand by a factory (D's
/// building_blocks/allocator_list.d).
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <type_traits>
#include <utility>

#include <alloy/common.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/null_allocator.hpp>

namespace alloy {

namespace detail {
template <class Factory>
using allocator_list_product_t = std::remove_cvref_t<std::invoke_result_t<const Factory&, std::size_t>>;

/// One slot of an AllocatorList's node array: room for an allocator, and the list's links.
template <class A>
struct AllocatorListNode {
  alignas(A) std::byte raw[sizeof(A)];
  std::size_t live;  // blocks the list's caller holds from this allocator (the node array never counts)
  std::size_t next;  // the list's most-recently-used order while used, the chain of free slots while not
  bool used;
  A& a() noexcept { return *std::launder(reinterpret_cast<A*>(raw)); }
};

/// What both forms of AllocatorListNodes share: the slots, their capacity, the chain of free slots.
template <class A>
class AllocatorListSlots {
 public:
  using Node = AllocatorListNode<A>;
  static constexpr std::size_t npos = SIZE_MAX;
  /// acquire's answer: the slot of the new allocator (npos: none was made), and the slot of an allocator that held
  /// the node array until this call and holds it no more (npos: none).
  struct Acquired {
    std::size_t slot = npos;
    std::size_t vacated = npos;
  };

  AllocatorListSlots(const AllocatorListSlots&) = delete;
  AllocatorListSlots& operator=(const AllocatorListSlots&) = delete;

  /// Both forms' check of the allocator that holds the node array (Bookkeeping out of band, the list's own allocator
  /// type in band), with its message in one place.
  template <std::size_t HolderAlignment>
  static constexpr bool holder_aligns_nodes() noexcept {
    static_assert(HolderAlignment >= alignof(Node),
                  "AllocatorList: the allocator that holds the nodes must align them to alignof(Node) (alignof of the "
                  "factory's allocator type, at least alignof(std::size_t)): use a bookkeeping allocator whose "
                  "alignment is at least that (alloy::Mallocator for allocator types aligned to 16 bytes or less)");
    return true;
  }

  Node& operator[](std::size_t i) noexcept { return nodes_[i]; }
  const Node& operator[](std::size_t i) const noexcept { return nodes_[i]; }
  /// Slots in the array, used or free.
  std::size_t capacity() const noexcept { return capacity_; }
  /// Destroys the allocator in used slot p, whose slot joins the free chain (the caller has unlinked it).
  [[gnu::cold]] void release(std::size_t p) noexcept {
    nodes_[p].a().~A();
    nodes_[p].used = false;
    nodes_[p].next = free_;
    free_ = p;
  }

 protected:
  AllocatorListSlots() = default;
  AllocatorListSlots(AllocatorListSlots&& o) noexcept
      : nodes_(std::exchange(o.nodes_, nullptr)),
        capacity_(std::exchange(o.capacity_, 0)),
        free_(std::exchange(o.free_, npos)) {}
  // o's slots, into this (empty) one.
  void take(AllocatorListSlots& o) noexcept {
    nodes_ = std::exchange(o.nodes_, nullptr);
    capacity_ = std::exchange(o.capacity_, 0);
    free_ = std::exchange(o.free_, npos);
  }

  Block array_block() const noexcept { return {nodes_, capacity_ * sizeof(Node)}; }
  bool full() const noexcept { return free_ == npos; }

  // The free slot at the head of the chain, holding a new allocator made by make(where, n); npos if make fails.
  template <class Make>
  std::size_t fill_free_slot(std::size_t n, Make& make) noexcept {
    const std::size_t p = free_;
    if (!make(static_cast<void*>(nodes_[p].raw), n)) return npos;
    occupy_free_slot();
    return p;
  }
  // Marks the free slot at the head of the chain used (its allocator is, or is about to be, constructed); its index.
  std::size_t occupy_free_slot() noexcept {
    const std::size_t p = free_;
    free_ = nodes_[p].next;
    nodes_[p].used = true;
    nodes_[p].live = 0;
    nodes_[p].next = npos;
    return p;
  }

  // The next capacity and its size in bytes; false on overflow.
  bool next_capacity(std::size_t& cap, std::size_t& bytes) const noexcept {
    cap = capacity_ ? capacity_ * 2 : 4;
    return cap > capacity_ && mul_checked(cap, sizeof(Node), bytes) && bytes <= PTRDIFF_MAX;
  }

  // Moves the nodes into `fresh` (room for `cap` nodes), which becomes the array; the new slots join the free chain.
  void move_to(Node* fresh, std::size_t cap) noexcept {
    for (std::size_t i = 0; i < capacity_; ++i) {
      Node& o = nodes_[i];
      Node* n = ::new (static_cast<void*>(fresh + i)) Node;
      n->live = o.live;
      n->next = o.next;
      n->used = o.used;
      if (o.used) {
        ::new (static_cast<void*>(n->raw)) A(std::move(o.a()));
        o.a().~A();
      }
    }
    nodes_ = fresh;
    add_free_slots(cap);
  }
  // The array has room for `cap` nodes where it is: the new slots join the free chain, lowest first.
  void add_free_slots(std::size_t cap) noexcept {
    for (std::size_t i = cap; i-- > capacity_;) {
      Node* n = ::new (static_cast<void*>(nodes_ + i)) Node;
      n->live = 0;
      n->used = false;
      n->next = free_;
      free_ = i;
    }
    capacity_ = cap;
  }

  // Destroys every allocator but the one in slot `keep` (npos: all of them).
  [[gnu::cold]] void destroy_allocators_except(std::size_t keep) noexcept {
    for (std::size_t i = 0; i < capacity_; ++i)
      if (nodes_[i].used && i != keep) nodes_[i].a().~A();
  }
  void forget_array() noexcept {
    nodes_ = nullptr;
    capacity_ = 0;
    free_ = npos;
  }

  Node* nodes_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t free_ = npos;
};

/// AllocatorListNodes<A, Bookkeeping>: an AllocatorList's node array, in memory from `Bookkeeping` (out-of-band).
/// The partial specialization for NullAllocator keeps it inside the allocators themselves (in-band). Both forms own
/// the array's growth and relocation and its free slots, and answer the list's questions: `capacity()`, `[i]`,
/// `acquire(n, make)` (a slot holding a new allocator), `release(p)`, `holds_array(p)` (whether allocator p holds
/// the array, so it must stay), `is_array(b)` (whether b is the array: never a caller's block), `clear()`.
/// Growth, relocation and destruction are `[[gnu::cold]]`: they are rare, and an allocator's destructor inlined
/// into them took g++'s inlining budget (a unit-wide limit) from the allocators' hot paths (docs/design_notes.md).
template <class A, class Bookkeeping>
class AllocatorListNodes : public AllocatorListSlots<A> {
  using Base = AllocatorListSlots<A>;

 public:
  using typename Base::Acquired;
  using typename Base::Node;
  using Base::npos;
  static constexpr bool in_band = false;
  static_assert(Base::template holder_aligns_nodes<Bookkeeping::alignment>());

  AllocatorListNodes() noexcept requires std::default_initializable<Bookkeeping> = default;
  explicit AllocatorListNodes(Bookkeeping bk) noexcept : bk_(std::move(bk)) {}
  AllocatorListNodes(AllocatorListNodes&& o) noexcept : Base(std::move(o)), bk_(std::move(o.bk_)) {}
  AllocatorListNodes& operator=(AllocatorListNodes&& o) noexcept {
    if (this != &o) {
      clear();
      bk_ = std::move(o.bk_);
      this->take(o);
    }
    return *this;
  }
  ~AllocatorListNodes() { clear(); }

  /// Out-of-band, no allocator holds the array and no block of theirs is it.
  static constexpr bool holds_array(std::size_t) noexcept { return false; }
  static constexpr bool is_array(Block) noexcept { return false; }

  /// A slot holding a new allocator, made by `make(void* where, std::size_t n) -> bool` (false: none made); the
  /// array doubles (from 4) when no slot is free. The slot is used, its live count 0 and its link npos.
  template <class Make>
  Acquired acquire(std::size_t n, Make&& make) noexcept {
    if (this->full() && !grow()) return {};
    return {this->fill_free_slot(n, make), npos};
  }

  /// Destroys every allocator and gives the array back.
  [[gnu::cold]] void clear() noexcept {
    if (!this->nodes_) return;
    this->destroy_allocators_except(npos);
    alloy::deallocate(bk_, this->array_block());
    this->forget_array();
  }

  Bookkeeping& bookkeeping() noexcept { return bk_; }

 private:
  [[gnu::cold]] bool grow() noexcept {
    std::size_t cap = 0, bytes = 0;
    if (!this->next_capacity(cap, bytes)) return false;
    const Block nb = bk_.allocate(bytes);
    if (!nb) return false;
    ALLOY_ASSERT(is_aligned(nb.ptr, alignof(Node)),
                 "AllocatorList: the allocator that holds the nodes returned memory not aligned to alignof(Node)");
    const Block old = this->array_block();
    this->move_to(static_cast<Node*>(nb.ptr), cap);
    if (old) alloy::deallocate(bk_, old);
    return true;
  }

  [[no_unique_address]] Bookkeeping bk_{};
};

/// In-band: the array lives in one of the allocators (its "home"), which stays while it holds the array.
template <class A>
class AllocatorListNodes<A, NullAllocator> : public AllocatorListSlots<A> {
  using Base = AllocatorListSlots<A>;

 public:
  using typename Base::Acquired;
  using typename Base::Node;
  using Base::npos;
  static constexpr bool in_band = true;
  static_assert(Base::template holder_aligns_nodes<A::alignment>());

  AllocatorListNodes() = default;
  AllocatorListNodes(AllocatorListNodes&& o) noexcept : Base(std::move(o)), home_(std::exchange(o.home_, npos)) {}
  AllocatorListNodes& operator=(AllocatorListNodes&& o) noexcept {
    if (this != &o) {
      clear();
      this->take(o);
      home_ = std::exchange(o.home_, npos);
    }
    return *this;
  }
  ~AllocatorListNodes() { clear(); }

  /// Whether allocator p holds the array (then it must not be destroyed).
  bool holds_array(std::size_t p) const noexcept { return p == home_; }
  /// Whether b is the array, i.e. starts where it does (its home owns it, but no caller ever got it).
  bool is_array(Block b) const noexcept { return b.ptr != nullptr && b.ptr == this->nodes_; }

  /// As the out-of-band form, but more slots come from the allocators: the home expands the array in place, or a
  /// new allocator, made by make for n plus the larger array plus slack for alignment, takes the array and is the
  /// answer (made for the request too); the old home gets its array back and is `vacated`. A Region keeps that
  /// array unless it was its last block, but nothing uses it any more.
  template <class Make>
  Acquired acquire(std::size_t n, Make&& make) noexcept {
    if (this->full() && !expand_in_place()) return relocate(n, make);
    return {this->fill_free_slot(n, make), npos};
  }

  /// Destroys every allocator, the home last (the array lives in its memory: it is moved out first).
  [[gnu::cold]] void clear() noexcept {
    if (!this->nodes_) return;
    this->destroy_allocators_except(home_);
    A last(std::move((*this)[home_].a()));
    (*this)[home_].a().~A();
    this->forget_array();
    home_ = npos;
  }

  NullAllocator& bookkeeping() noexcept { return bk_; }

 private:
  bool expand_in_place() noexcept {
    if constexpr (has_expand<A>) {
      std::size_t cap = 0, bytes = 0;
      if (!this->nodes_ || !this->next_capacity(cap, bytes)) return false;
      Block arr = this->array_block();
      if (!(*this)[home_].a().expand(arr, bytes - arr.size)) return false;
      this->add_free_slots(cap);
      return true;
    } else {
      return false;
    }
  }

  template <class Make>
  [[gnu::cold]] Acquired relocate(std::size_t n, Make& make) noexcept {
    std::size_t cap = 0, bytes = 0, want = 0;
    if (!this->next_capacity(cap, bytes)) return {};
    const std::size_t slack = 2 * (A::alignment > 128 ? A::alignment : 128);
    if (!add_checked(n, bytes, want) || !add_checked(want, slack, want)) return {};
    alignas(A) unsigned char raw[sizeof(A)];
    if (!make(static_cast<void*>(raw), want)) return {};
    A& fresh = *std::launder(reinterpret_cast<A*>(raw));
    struct Destroy {
      A& a;
      ~Destroy() { a.~A(); }
    } destroy{fresh};
    const Block nb = fresh.allocate(bytes);
    if (!nb) return {};
    if (!is_aligned(nb.ptr, alignof(Node))) {
      alloy::deallocate(fresh, nb);
      return {};
    }
    const Block old = this->array_block();
    const std::size_t old_home = home_;
    this->move_to(static_cast<Node*>(nb.ptr), cap);
    const std::size_t p = this->occupy_free_slot();  // the first new slot
    ::new (static_cast<void*>((*this)[p].raw)) A(std::move(fresh));
    home_ = p;
    if (old) {
      if constexpr (has_deallocate<A>) (void)(*this)[old_home].a().deallocate(old);
    }
    return {p, old_home};
  }

  std::size_t home_ = npos;  // the slot whose allocator holds the array
  [[no_unique_address]] NullAllocator bk_{};
};
}  // namespace detail

/// AllocatorList<Factory, BookkeepingAllocator = Mallocator>
///
/// Semantics: a growing list of allocators made on demand by `Factory` (a class type whose
/// `operator()(std::size_t n) const` returns, by value, an allocator able to serve n bytes; a stateless factory is
/// default-constructed, a stateful one is passed to the constructor and stored). The allocators are kept in
/// most-recently-used order: `allocate` tries them in that order and, when none can serve the request, makes a new one
/// with `factory(n)` (a factory that throws fails the request); a block is given back to its owner, found through
/// `owns`. When a deallocation leaves an
/// allocator empty, at most one empty allocator is kept (the others are destroyed, so their memory goes back to their
/// parent), which avoids thrashing at a boundary. The bookkeeping (one node per allocator, in an array whose freed
/// slots are reused) comes from `BookkeepingAllocator`; with `NullAllocator` it lives inside the managed allocators
/// themselves (D's "ouroboros" mode), which needs host-accessible allocators: the allocator holding the node array
/// stays while it does, its `owns` answers yes for the array (as D), and the array is no caller's block (`empty()`
/// does not count it; `deallocate`, `expand` and `reallocate` refuse it).
/// Capabilities: allocate, deallocate_all (destroys every allocator), empty (no live block), `allocator_count()`;
/// owns iff the allocators have owns; deallocate iff they have owns and deallocate; aligned_allocate iff they have
/// aligned_allocate (a new allocator is asked for n + a - 1 bytes); expand iff they have owns and expand (the owner
/// expands); reallocate iff they have owns and deallocate and their memory is host-accessible or they have copy (the
/// owner's reallocate or expand first, else a new block from the list, copy, free); aligned_reallocate iff they have
/// aligned_allocate besides what reallocate needs (the same, keeping the alignment); copy iff they have copy.
/// Alignment: the allocators'. Memory space: the allocators' (bookkeeping always stays on the host).
/// Requirements: the allocators are nothrow-move-constructible (the node array moves them when it grows).
/// Thread safety: none (see SharedAllocatorList).
/// Failure: an empty Block for n == 0, when the factory's new allocator cannot serve the request (that allocator is
/// destroyed at once), and when the bookkeeping allocator refuses memory for a node.
/// Example:
/// ```cpp
/// #include <alloy/region.hpp>
/// #include <algorithm>
/// struct Regions {  // 1 MiB regions from malloc, larger on demand
///   alloy::Region<alloy::Mallocator> operator()(std::size_t n) const {
///     return alloy::Region<alloy::Mallocator>(std::max<std::size_t>(n, 1 << 20));
///   }
/// };
/// alloy::AllocatorList<Regions> list;
/// alloy::Block a = list.allocate(101);
/// CHECK(list.allocator_count() == 1);
/// alloy::Block b = list.allocate(2 << 20);  // does not fit: a second region
/// CHECK(list.allocator_count() == 2);
/// CHECK(list.owns(a) == alloy::Ternary::yes);
/// CHECK(list.deallocate(b));
/// CHECK(list.deallocate(a));
/// CHECK(list.empty() == alloy::Ternary::yes);
/// CHECK(list.allocator_count() == 1);  // one empty allocator is kept
/// ```
template <class Factory, class BookkeepingAllocator = Mallocator>
class AllocatorList {
  static_assert(allocator<BookkeepingAllocator>,
                "AllocatorList: BookkeepingAllocator must be an alloy allocator (a type with `static constexpr "
                "std::size_t alignment` and `Block allocate(std::size_t) noexcept`, e.g. alloy::Mallocator, the "
                "default; NullAllocator keeps the bookkeeping inside the managed allocators)");
  static_assert(std::is_class_v<Factory> && std::is_invocable_v<const Factory&, std::size_t>,
                "AllocatorList: Factory must be a class type with `operator()(std::size_t n) const` returning an "
                "allocator (a captureless lambda's type works)");

 public:
  using allocator_type = detail::allocator_list_product_t<Factory>;
  using factory_type = Factory;
  static_assert(allocator<allocator_type>,
                "AllocatorList: Factory's operator()(std::size_t) must return an alloy allocator by value");
  static_assert(std::is_nothrow_move_constructible_v<allocator_type>,
                "AllocatorList: the allocators must be nothrow-move-constructible (the node array moves them); "
                "make the factory return a movable allocator (e.g. Region, not InSituRegion)");
  /// Nodes live inside the managed allocators (BookkeepingAllocator = NullAllocator).
  static constexpr bool in_band = std::is_same_v<BookkeepingAllocator, NullAllocator>;
  static_assert(!in_band || host_accessible<allocator_type>,
                "AllocatorList<Factory, NullAllocator> keeps its bookkeeping inside the allocators it manages, but "
                "their memory is not host-accessible (device memory): use a host bookkeeping allocator, e.g. "
                "AllocatorList<Factory, alloy::Mallocator>");
  static_assert(host_accessible<BookkeepingAllocator>,
                "AllocatorList: the bookkeeping allocator must give host-accessible memory; use alloy::Mallocator");

  static constexpr std::size_t alignment = allocator_type::alignment;
  static constexpr MemorySpace memory_space = memory_space_of<allocator_type>();

 private:
  using A = allocator_type;
  // The one place where in-band and out-of-band differ: where the node array lives.
  using Nodes = detail::AllocatorListNodes<A, BookkeepingAllocator>;
  static constexpr std::size_t npos = Nodes::npos;

 public:
  AllocatorList() noexcept
    requires std::default_initializable<Factory> && std::default_initializable<BookkeepingAllocator>
  = default;
  explicit AllocatorList(Factory factory) noexcept
    requires std::default_initializable<BookkeepingAllocator>
      : factory_(std::move(factory)) {}
  AllocatorList(Factory factory, BookkeepingAllocator bookkeeping) noexcept
    requires(!in_band)
      : factory_(std::move(factory)), nodes_(std::move(bookkeeping)) {}

  AllocatorList(const AllocatorList&) = delete;
  AllocatorList& operator=(const AllocatorList&) = delete;
  AllocatorList(AllocatorList&& o) noexcept
      : factory_(std::move(o.factory_)),
        nodes_(std::move(o.nodes_)),
        root_(std::exchange(o.root_, npos)),
        count_(std::exchange(o.count_, 0)),
        live_(std::exchange(o.live_, 0)) {}
  AllocatorList& operator=(AllocatorList&& o) noexcept {
    if (this != &o) {
      clear();
      factory_ = std::move(o.factory_);
      nodes_ = std::move(o.nodes_);
      root_ = std::exchange(o.root_, npos);
      count_ = std::exchange(o.count_, 0);
      live_ = std::exchange(o.live_, 0);
    }
    return *this;
  }
  ~AllocatorList() = default;  // the node storage destroys the allocators

  Block allocate(std::size_t n) noexcept {
    if (n == 0) return {};
    for (std::size_t p = root_, prev = npos; p != npos; prev = p, p = nodes_[p].next) {
      if (Block b = nodes_[p].a().allocate(n)) {
        took(p, prev);
        return b;
      }
    }
    return from_new_allocator(n, [n](A& a) noexcept { return a.allocate(n); });
  }

  Block aligned_allocate(std::size_t n, std::size_t al) noexcept requires has_aligned_allocate<A> {
    if (n == 0 || !is_power_of_two(al)) return {};
    for (std::size_t p = root_, prev = npos; p != npos; prev = p, p = nodes_[p].next) {
      if (Block b = nodes_[p].a().aligned_allocate(n, al)) {
        took(p, prev);
        return b;
      }
    }
    std::size_t want = 0;
    if (!add_checked(n, al - 1, want)) return {};
    return from_new_allocator(want, [n, al](A& a) noexcept { return a.aligned_allocate(n, al); });
  }

  /// Gives `b` back to its owner (moved to the front of the list). If that leaves the owner empty, every other
  /// empty allocator is destroyed.
  bool deallocate(Block b) noexcept requires has_owns<A> && has_deallocate<A> {
    if (!b) return true;
    std::size_t prev = npos;
    const std::size_t p = find_owner(b, prev);
    ALLOY_ASSERT(p != npos, "AllocatorList::deallocate: the block did not come from this list");
    if (p == npos) return false;
    const bool r = nodes_[p].a().deallocate(b);
    to_front(p, prev);
    if (r) {
      --live_;
      if (--nodes_[p].live == 0) release_empty_except(p);
    }
    return r;
  }

  /// Whether one of the allocators owns `b` (that allocator moves to the front): yes if one says yes, no if all say
  /// no, else unknown. In-band, the node array is owned too (by the allocator that holds it), as in D.
  Ternary owns(Block b) noexcept requires has_owns<A> {
    if (!b) return Ternary::no;
    Ternary result = Ternary::no;
    for (std::size_t p = root_, prev = npos; p != npos; prev = p, p = nodes_[p].next) {
      const Ternary t = nodes_[p].a().owns(b);
      if (t == Ternary::yes) {
        to_front(p, prev);
        return t;
      }
      if (t == Ternary::unknown) result = t;
    }
    return result;
  }

  /// The owner's expand.
  bool expand(Block& b, std::size_t delta) noexcept requires has_owns<A> && has_expand<A> {
    if (delta == 0) return true;
    if (!b) return false;
    std::size_t prev = npos;
    const std::size_t p = find_owner(b, prev);
    ALLOY_ASSERT(p != npos, "AllocatorList::expand: the block did not come from this list");
    return p != npos && nodes_[p].a().expand(b, delta);
  }

  /// The owner's reallocate (or expand, when growing) first; else a new block from the list, a copy (through the
  /// allocators' copy when they have one), and the old block given back. n == 0 frees; an empty `b` allocates.
  /// On failure `b` is unchanged.
  bool reallocate(Block& b, std::size_t n) noexcept
    requires has_owns<A> && has_deallocate<A> && (host_accessible<A> || has_copy<A>)
  {
    if (b.size == n && (b || n == 0)) return true;
    if (bool r; detail::reallocate_ends(*this, b, n, r)) return r;
    std::size_t prev = npos;
    const std::size_t p = find_owner(b, prev);
    ALLOY_ASSERT(p != npos, "AllocatorList::reallocate: the block did not come from this list");
    if (p == npos) return false;
    if constexpr (has_reallocate<A>) {
      if (nodes_[p].a().reallocate(b, n)) return true;
    } else if constexpr (has_expand<A>) {
      if (n > b.size && nodes_[p].a().expand(b, n - b.size)) return true;
    }
    return move_into(b, allocate(n), p);
  }

  /// As reallocate, keeping alignment `al` (a power of two, else false): the owner's aligned_reallocate (or its
  /// expand, when growing a block that is already aligned) first; else a block from aligned_allocate, a copy, and
  /// the old block given back, or forgotten when its owner keeps it (D's generic fallback would leave such a block
  /// counted, so a list of Regions would never become empty again after make's expand_array of an over-aligned T).
  bool aligned_reallocate(Block& b, std::size_t n, std::size_t al) noexcept
    requires has_aligned_allocate<A> && has_owns<A> && has_deallocate<A> && (host_accessible<A> || has_copy<A>)
  {
    if (!is_power_of_two(al)) return false;
    auto aligned_alloc = [this, al](std::size_t m) noexcept { return aligned_allocate(m, al); };
    if (bool r; detail::reallocate_ends(*this, b, n, r, aligned_alloc)) return r;
    if (b.size == n && is_aligned(b.ptr, al)) return true;
    std::size_t prev = npos;
    const std::size_t p = find_owner(b, prev);
    ALLOY_ASSERT(p != npos, "AllocatorList::aligned_reallocate: the block did not come from this list");
    if (p == npos) return false;
    if constexpr (has_aligned_reallocate<A>) {
      if (nodes_[p].a().aligned_reallocate(b, n, al)) return true;
    } else if constexpr (has_expand<A>) {
      if (n > b.size && is_aligned(b.ptr, al) && nodes_[p].a().expand(b, n - b.size)) return true;
    }
    return move_into(b, aligned_alloc(n), p);
  }

  /// Destroys every allocator (their memory goes back to their parents) and the bookkeeping.
  bool deallocate_all() noexcept {
    clear();
    return true;
  }

  /// Whether no block is allocated (empty allocators may still be kept; in-band, the node array is not a block).
  Ternary empty() const noexcept { return to_ternary(live_ == 0); }

  /// Copies through the allocators' copy (they share one memory space). With no allocator alive, only n == 0 works.
  bool copy(void* dst, const void* src, std::size_t n, stream_view s) noexcept requires has_copy<A> {
    if (root_ == npos) return n == 0;
    return nodes_[root_].a().copy(dst, src, n, s);
  }

  /// Allocators alive (empty ones included).
  std::size_t allocator_count() const noexcept { return count_; }
  /// Node slots in the bookkeeping array (reused after an allocator is destroyed).
  std::size_t node_capacity() const noexcept { return nodes_.capacity(); }
  /// Calls f(allocator&) for each allocator, most recently used first.
  template <class F>
  void for_each_allocator(F&& f) {
    for (std::size_t p = root_; p != npos; p = nodes_[p].next) f(nodes_[p].a());
  }

  Factory& factory() noexcept { return factory_; }
  BookkeepingAllocator& bookkeeping_allocator() noexcept { return nodes_.bookkeeping(); }

 private:
  void took(std::size_t p, std::size_t prev) noexcept {
    ++nodes_[p].live;
    ++live_;
    to_front(p, prev);
  }

  // A new allocator for a request that no allocator could serve (want: the bytes to ask the factory for), and the
  // block `op` takes from it. A new allocator that cannot serve it is destroyed, unless it took the node array
  // (in-band growth makes it for the request and the larger array together, but its own rounding may still leave
  // the request out: a BitmappedBlock rounds both up to whole blocks); then one more, made for the request alone,
  // takes one of the slots the growth made, so that the request does not fail where out-of-band it succeeds.
  // Cold: a new allocator is rare (as the node storage's growth, docs/design_notes.md).
  template <class Op>
  [[gnu::cold]] Block from_new_allocator(std::size_t want, Op op) noexcept {
    for (int attempt = 0; attempt < 2; ++attempt) {
      const std::size_t p = add_allocator(want);
      if (p == npos) return {};
      if (Block b = op(nodes_[p].a())) {
        ++nodes_[p].live;
        ++live_;
        return b;
      }
      if (!nodes_.holds_array(p)) {
        destroy_node(p, npos);
        return {};
      }
    }
    return {};
  }

  // The end of a moving reallocate: b's bytes (as many as fit) into nb, a block of this list (empty: the move
  // failed, b unchanged), then b goes back to its owner, node p. A stack-like owner (Region) keeps the old block
  // unless it was its last; the caller no longer holds it either way, so the list stops counting it (else its owner,
  // and empty(), could never see the list empty again).
  bool move_into(Block& b, Block nb, std::size_t p) noexcept {
    return detail::move_block(b, nb, nodes_[p].a(), [this](Block x) noexcept {
      if (!deallocate(x)) forget(x);  // an owner that keeps x (a Region's inner block) no longer counts it
      return true;
    });
  }

  // The owner kept b (its deallocate failed) though nobody holds it any more: no longer counted as live.
  void forget(Block b) noexcept {
    std::size_t prev = npos;
    const std::size_t p = find_owner(b, prev);
    if (p == npos) return;
    to_front(p, prev);
    --live_;
    if (--nodes_[p].live == 0) release_empty_except(p);
  }

  // Constructs factory(n) at `where`. A factory that throws (out of memory, say) fails the request: the primitives
  // are noexcept and report failure by value.
  bool make_at(void* where, std::size_t n) noexcept {
#if defined(__cpp_exceptions)
    try {
      ::new (where) A(factory_(n));
    } catch (...) {
      return false;
    }
#else
    ::new (where) A(factory_(n));
#endif
    return true;
  }

  void to_front(std::size_t p, std::size_t prev) noexcept {
    if (prev == npos) return;
    nodes_[prev].next = nodes_[p].next;
    nodes_[p].next = root_;
    root_ = p;
  }

  // The owner of b, a caller's block (the node array is none: no owner), and its predecessor in the list.
  std::size_t find_owner(Block b, std::size_t& prev) noexcept {
    prev = npos;
    if (nodes_.is_array(b)) return npos;
    for (std::size_t p = root_; p != npos; prev = p, p = nodes_[p].next)
      if (alloy::owns(nodes_[p].a(), b) == Ternary::yes) return p;
    return npos;
  }

  // Destroys node p (prev: its predecessor in the list, or npos when p is the root or unknown).
  void destroy_node(std::size_t p, std::size_t prev) noexcept {
    if (prev == npos && root_ != p) {
      for (std::size_t q = root_; q != npos; q = nodes_[q].next)
        if (nodes_[q].next == p) prev = q;
    }
    (prev == npos ? root_ : nodes_[prev].next) = nodes_[p].next;
    nodes_.release(p);
    --count_;
  }

  // Keeps `keep` (just emptied) and destroys any other empty allocator (but not one that holds the node array).
  void release_empty_except(std::size_t keep) noexcept {
    for (std::size_t p = root_, prev = npos; p != npos;) {
      const std::size_t next = nodes_[p].next;
      if (p != keep && nodes_[p].live == 0 && !nodes_.holds_array(p)) {
        destroy_node(p, prev);
      } else {
        prev = p;
      }
      p = next;
    }
  }

  // Creates an allocator for a request of n bytes at the front of the list; its index, or npos. When the new
  // allocator took the node array (in-band growth), the allocator the array left goes at once if it holds no block.
  std::size_t add_allocator(std::size_t n) noexcept {
    const auto [p, vacated] =
        nodes_.acquire(n, [this](void* where, std::size_t m) noexcept { return make_at(where, m); });
    if (p == npos) return npos;
    nodes_[p].next = root_;
    root_ = p;
    ++count_;
    if (nodes_.holds_array(p) && vacated != npos && nodes_[vacated].live == 0) destroy_node(vacated, npos);
    return p;
  }

  void clear() noexcept {
    nodes_.clear();
    root_ = npos;
    count_ = live_ = 0;
  }

  [[no_unique_address]] Factory factory_{};
  Nodes nodes_;
  std::size_t root_ = npos;
  std::size_t count_ = 0;
  std::size_t live_ = 0;
};

/// SharedAllocatorList<Factory, BookkeepingAllocator = Mallocator>
///
/// Semantics: AllocatorList for many threads: every primitive runs under one `std::mutex` (not lock-free: the
/// allocators are made, reordered and destroyed under the lock, so any allocator type works inside).
/// Capabilities: exactly AllocatorList's for the same arguments. Not copyable or movable.
/// Alignment, memory space: as AllocatorList. Thread safety: every primitive may be called concurrently.
/// Example:
/// ```cpp
/// #include <alloy/region.hpp>
/// #include <thread>
/// struct Regions {
///   alloy::Region<alloy::Mallocator> operator()(std::size_t n) const {
///     return alloy::Region<alloy::Mallocator>(n < 4096 ? 4096 : n);
///   }
/// };
/// alloy::SharedAllocatorList<Regions> list;
/// int failed = 0;
/// std::thread t([&] { for (int i = 0; i < 100; ++i) failed += !list.allocate(100); });
/// for (int i = 0; i < 100; ++i) CHECK(list.allocate(100));
/// t.join();
/// CHECK(failed == 0);
/// CHECK(list.allocator_count() == 6);  // 200 blocks of 112 bytes, 36 to a 4 KiB region
/// ```
template <class Factory, class BookkeepingAllocator = Mallocator>
class SharedAllocatorList {
  static_assert(allocator<BookkeepingAllocator>,
                "SharedAllocatorList: BookkeepingAllocator must be an alloy allocator (a type with `static constexpr "
                "std::size_t alignment` and `Block allocate(std::size_t) noexcept`, e.g. alloy::Mallocator, the "
                "default; NullAllocator keeps the bookkeeping inside the managed allocators)");
  using List = AllocatorList<Factory, BookkeepingAllocator>;

 public:
  using allocator_type = typename List::allocator_type;
  static constexpr std::size_t alignment = List::alignment;
  static constexpr MemorySpace memory_space = List::memory_space;

  SharedAllocatorList() noexcept requires std::default_initializable<List> = default;
  explicit SharedAllocatorList(Factory f) noexcept requires std::constructible_from<List, Factory>
      : list_(std::move(f)) {}
  SharedAllocatorList(Factory f, BookkeepingAllocator bk) noexcept
    requires std::constructible_from<List, Factory, BookkeepingAllocator>
      : list_(std::move(f), std::move(bk)) {}
  SharedAllocatorList(const SharedAllocatorList&) = delete;
  SharedAllocatorList& operator=(const SharedAllocatorList&) = delete;

  Block allocate(std::size_t n) noexcept {
    std::lock_guard lock(m_);
    return list_.allocate(n);
  }
  Block aligned_allocate(std::size_t n, std::size_t a) noexcept requires has_aligned_allocate<List> {
    std::lock_guard lock(m_);
    return list_.aligned_allocate(n, a);
  }
  bool deallocate(Block b) noexcept requires has_deallocate<List> {
    std::lock_guard lock(m_);
    return list_.deallocate(b);
  }
  Ternary owns(Block b) noexcept requires has_owns<List> {
    std::lock_guard lock(m_);
    return list_.owns(b);
  }
  bool expand(Block& b, std::size_t d) noexcept requires has_expand<List> {
    std::lock_guard lock(m_);
    return list_.expand(b, d);
  }
  bool reallocate(Block& b, std::size_t n) noexcept requires has_reallocate<List> {
    std::lock_guard lock(m_);
    return list_.reallocate(b, n);
  }
  bool aligned_reallocate(Block& b, std::size_t n, std::size_t a) noexcept requires has_aligned_reallocate<List> {
    std::lock_guard lock(m_);
    return list_.aligned_reallocate(b, n, a);
  }
  bool deallocate_all() noexcept {
    std::lock_guard lock(m_);
    return list_.deallocate_all();
  }
  Ternary empty() noexcept {
    std::lock_guard lock(m_);
    return list_.empty();
  }
  bool copy(void* dst, const void* src, std::size_t n, stream_view s) noexcept requires has_copy<List> {
    std::lock_guard lock(m_);
    return list_.copy(dst, src, n, s);
  }
  std::size_t allocator_count() noexcept {
    std::lock_guard lock(m_);
    return list_.allocator_count();
  }

 private:
  List list_;
  std::mutex m_;
};

}  // namespace alloy
