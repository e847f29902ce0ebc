#pragma once
/// \file alloy/adapters/callback_table.hpp
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <type_traits>
#include <utility>

#include <alloy/adapters/callback_table.h>
#include <alloy/common.hpp>

namespace alloy {

/// CallbackTable<A>
///
/// Semantics: a C ABI over a stack: an `alloy_callback_table` (see <alloy/adapters/callback_table.h>) of plain
/// function pointers, `alloc(obj, size)`, `free(obj, block)`, `alloc_advise(obj, size, addr_hint)`,
/// `addr_of_block(block)`: the callback shapes of CANN's `aclrtAllocatorDesc` (aclrtAllocatorSetAllocFuncToDesc,
/// ...SetFreeFunc..., ...SetAllocAdviseFunc..., ...SetGetAddrFromBlockFunc...), usable from C and from any runtime
/// that takes such a table. The CallbackTable owns its stack (constructed from the constructor's arguments; use
/// `CallbackTable<Ref<A>>` to share one).
/// Blocks: every handle points to a host record `alloy_block {address, size}` (allocated with `new`), so `free`
/// needs no size from the caller and the stack gets back exactly the Block it gave. Live records are kept on a
/// list: the destructor (or the table's `destroy`) gives every block still live back to the stack.
/// alloc_advise: the stack cannot place memory at a chosen address, so the hint is advice: the block is aligned at
/// least as well as `addr_hint` (its lowest set bit, up to 4096) when the stack has `aligned_allocate`, and is a
/// plain `alloc` otherwise or when the aligned request fails. A null hint is a plain `alloc`.
/// Memory space: any; `memory_space` and `alignment` are in the table, and the records are host memory whatever
/// the stack is.
/// Thread safety: thread-safe (one mutex per table around the stack and the record list).
/// Failure: `alloc` returns NULL for size 0, when the stack fails, or when no record can be allocated.
/// Example:
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// alloy_callback_table* t = alloy::make_callback_table<alloy::Mallocator>();
/// void* blk = t->alloc(t->obj, 100);
/// CHECK(t->addr_of_block(blk) != nullptr);
/// CHECK(static_cast<alloy_block*>(blk)->size == 100);
/// t->free(t->obj, blk);
/// t->destroy(t->obj);
/// ```
template <class A>
class CallbackTable {
  static_assert(allocator<A>,
                "alloy::CallbackTable: A must be an alloy allocator: a type with `static constexpr std::size_t "
                "alignment` and `Block allocate(std::size_t) noexcept` (e.g. alloy::Mallocator, or a stack of blocks "
                "over it); a C allocator (malloc/free, or a table of function pointers) is not "
                "one: alloy::Mallocator wraps malloc and free");

 public:
  template <class... Args>
    requires std::is_constructible_v<A, Args...>
  explicit CallbackTable(Args&&... args) : a_(std::forward<Args>(args)...) {
    table_.obj = this;
    table_.alloc = &c_alloc;
    table_.free = &c_free;
    table_.alloc_advise = &c_alloc_advise;
    table_.addr_of_block = &c_addr_of_block;
    table_.destroy = &c_destroy;
    table_.alignment = alignment_at_run_time(a_);  // an AnyAllocator's own, not its compile-time answers
    table_.memory_space = static_cast<int>(memory_space_at_run_time(a_));
  }
  CallbackTable(const CallbackTable&) = delete;
  CallbackTable& operator=(const CallbackTable&) = delete;
  ~CallbackTable() {
    while (head_.next != &head_) {
      Record* r = head_.next;
      unlink(r);
      alloy::deallocate(a_, Block{r->pub.address, r->pub.size});
      delete r;
    }
  }

  [[nodiscard]] alloy_callback_table* table() noexcept { return &table_; }
  [[nodiscard]] A& stack() noexcept { return a_; }
  /// Blocks handed out and not yet freed.
  [[nodiscard]] std::size_t live_blocks() const noexcept {
    std::lock_guard lock(mutex_);
    return live_;
  }

  void* alloc(std::size_t size, std::size_t align = 0) noexcept {
    if (size == 0) return nullptr;
    Record* r = new (std::nothrow) Record;
    if (r == nullptr) return nullptr;
    std::lock_guard lock(mutex_);
    Block b{};
    if constexpr (has_aligned_allocate<A>) {
      if (align > A::alignment) b = a_.aligned_allocate(size, align);
    }
    if (!b) b = a_.allocate(size);
    if (!b) {
      delete r;
      return nullptr;
    }
    r->pub = {b.ptr, b.size};
    r->owner = this;
    link(r);
    return &r->pub;
  }
  void free(void* handle) noexcept {
    if (handle == nullptr) return;
    Record* r = reinterpret_cast<Record*>(static_cast<alloy_block*>(handle));  // pub is the first member
    std::lock_guard lock(mutex_);
    // Best effort, debug builds only: a handle freed twice points at a deleted record, caught while its memory still
    // holds the cleared magic (ASan reports the read as a use after free); a foreign handle has no magic or another
    // owner.
    ALLOY_ASSERT(r->magic == kMagic && r->owner == this,
                 "CallbackTable::free: not a live block handle of this table (foreign, or freed twice)");
    unlink(r);
    // A stack may refuse (a Region frees only its last block): the memory stays until the stack is reset.
    (void)alloy::deallocate(a_, Block{r->pub.address, r->pub.size});
    r->magic = 0;
    delete r;
  }

 private:
  static constexpr std::uint64_t kMagic = 0xA110CB10C4ull;
  struct Record {
    alloy_block pub{};
    Record* prev = nullptr;
    Record* next = nullptr;
    const CallbackTable* owner = nullptr;
    std::uint64_t magic = kMagic;
  };
  static_assert(std::is_standard_layout_v<Record>);

  void link(Record* r) noexcept {
    r->next = head_.next;
    r->prev = &head_;
    head_.next->prev = r;
    head_.next = r;
    ++live_;
  }
  void unlink(Record* r) noexcept {
    r->prev->next = r->next;
    r->next->prev = r->prev;
    --live_;
  }

  static void* c_alloc(void* obj, std::size_t size) noexcept { return static_cast<CallbackTable*>(obj)->alloc(size); }
  static void c_free(void* obj, void* block) noexcept { static_cast<CallbackTable*>(obj)->free(block); }
  static void* c_alloc_advise(void* obj, std::size_t size, void* hint) noexcept {
    std::size_t align = 0;
    if (hint != nullptr) {
      const std::uintptr_t h = address_of(hint);
      align = static_cast<std::size_t>(h & (~h + 1));
      if (align > 4096) align = 4096;
    }
    return static_cast<CallbackTable*>(obj)->alloc(size, align);
  }
  static void* c_addr_of_block(void* block) noexcept {
    return block == nullptr ? nullptr : static_cast<alloy_block*>(block)->address;
  }
  static void c_destroy(void* obj) noexcept { delete static_cast<CallbackTable*>(obj); }

  alloy_callback_table table_{};
  mutable std::mutex mutex_;
  Record head_{{}, &head_, &head_, nullptr, 0};
  std::size_t live_ = 0;
  [[no_unique_address]] A a_;
};

/// A heap-allocated CallbackTable<A> built from `args`, as the C table that C code keeps; `t->destroy(t->obj)` ends
/// it. Null when memory for it cannot be had. Hand it to C from an extern "C" function of your own:
/// `extern "C" alloy_callback_table* my_device_table(void) { return alloy::make_callback_table<MyStack>(); }`.
template <class A, class... Args>
alloy_callback_table* make_callback_table(Args&&... args) noexcept(std::is_nothrow_constructible_v<A, Args...>) {
  auto* t = new (std::nothrow) CallbackTable<A>(std::forward<Args>(args)...);
  return t == nullptr ? nullptr : t->table();
}

}  // namespace alloy
