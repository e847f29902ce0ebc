#pragma once
/// \file alloy/stream_ordered.hpp
/// `StreamOrdered<A>`, `SharedStreamOrdered<A>`: any allocator made stream-ordered, as RMM's pools are.
///
/// This header includes the CUDA runtime API (`<cuda_runtime_api.h>`): link `alloy::cuda`. `<alloy/alloy.hpp>` does
/// not include it.
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <alloy/common.hpp>
#include <alloy/config.hpp>
#include <alloy/cuda_mallocator.hpp>
#include <alloy/stream_view.hpp>

namespace alloy {

/// When StreamOrdered records the event that lets another stream take a block freed on a stream.
enum class FreeEvents {
  /// Lazily (the default): when a block is about to cross to another stream, an event is recorded on the freeing
  /// stream then. It still follows the free (stream order), so it is as safe as one recorded at the free, and a
  /// same-stream free or reuse makes no CUDA call. The freeing stream must be alive then: call
  /// `release_stream(s)` before destroying a stream that freed blocks into the pool.
  at_crossing,
  /// RMM's way: every free re-records the stream's event, so blocks freed on a stream stay usable after it is
  /// destroyed without `release_stream`, at the cost of one `cudaEventRecord` per free.
  at_each_free,
};

namespace detail {
struct no_lock {
  void lock() noexcept {}
  void unlock() noexcept {}
};
}  // namespace detail

/// StreamOrdered<A, Events = FreeEvents::at_crossing, Lock = no lock>
///
/// Semantics: RMM's stream-ordered pool contract over any allocator A. `deallocate(s, b)` keeps the block on a free
/// list of stream `s` (it does not go back to A); `allocate(s, n)` takes a block of n's size class from `s`'s list
/// first: stream order makes that safe at once, with no CUDA call. Otherwise it asks A (while the lists hold at most
/// 64 MiB more than is handed out; beyond that it tries the next step first) and takes the size class from another
/// stream's list behind an event (recorded on that stream, waited for by `s`: `cudaStreamWaitEvent`), so `s`'s work
/// runs after the free; last, it synchronizes the streams that hold cached blocks, gives every cached block back to A and
/// asks A again. A block never goes back to A while work queued before its free may still use it, so A
/// (which knows nothing of streams) never hands such memory to anyone.
/// Sizes: a request of n takes its size class from A (n rounded up to a quarter of its leading power of two, then
/// A's `good_alloc_size`: at most a quarter is slack) and returns a Block of n bytes; a cached block serves every
/// request of its class. Memory: once the lists hold 64 MiB more than is handed out, a request takes another
/// stream's list before A grows, so over a parent that grows (AllocatorList) the cached memory stays within the
/// memory in use plus 64 MiB (and a class's worth per stream);
/// over one that is full the cached blocks go back to it (above); `release()` gives them back on demand.
/// Capabilities: allocate(stream, n), deallocate(stream, b) (has_stream_ordered), allocate(n) / deallocate(b) (on
/// the default stream), good_alloc_size, owns iff A has owns, copy iff A has copy, empty (no block handed out),
/// release() (synchronize and give every cached block back), release_stream(s), cached_bytes().
/// Memory space: A's (the lists are kept on the host). Alignment: A's.
/// Streams: the legacy default stream (null) is one stream for all threads. `cudaStreamPerThread` is a different
/// stream in each thread: its lists are kept per thread and its frees record their event at once (another thread
/// cannot name that stream later). A program compiled with per-thread default streams should pass
/// `cudaStreamPerThread` rather than null. Both name a stream of the caller's current device: use the pool with its
/// device current (PerDevice does). With FreeEvents::at_each_free, lists are keyed by `cudaStreamGetId` (a destroyed
/// stream's handle may come back for a new stream; its id does not).
/// Devices: the allocator remembers the current device at construction and makes it current (and restores the
/// caller's) around the event calls it makes and, where there are several devices, around the calls to A that may
/// grow it (a list adding a slab allocates on the pool's device, whichever device the caller has current).
/// Thread safety: none; SharedStreamOrdered<A> takes a mutex around every call, every call that reaches A included
/// (A then needs no thread safety).
/// Failure: an empty Block for n == 0, when the size class overflows, and when A fails even after the cached memory
/// went back to it. A CUDA error of the event calls makes the crossing or the release fail (the block stays cached).
/// Example (compiled and run by the tests, over the real runtime and over the CPU stand-in for it; a same-stream
/// reuse needs no device):
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// alloy::StreamOrdered<alloy::Mallocator> pool;
/// cudaStream_t s = nullptr;                       // the default stream
/// alloy::Block a = pool.allocate(s, 1000);
/// CHECK(pool.deallocate(s, a));                   // kept on the default stream's list
/// alloy::Block b = pool.allocate(s, 1000);        // the same stream: reused at once, no CUDA call
/// CHECK(b.ptr == a.ptr);
/// CHECK(pool.deallocate(s, b));
/// CHECK(pool.good_alloc_size(1000) == 1024);     // its size class: 1000 rounded up to a multiple of 512 / 4
/// CHECK(pool.cached_bytes() == 1024);
/// ```
template <class A, FreeEvents Events = FreeEvents::at_crossing, class Lock = detail::no_lock>
class StreamOrdered {
  static_assert(allocator<A>,
                "StreamOrdered: A must be an alloy allocator (a type with `static constexpr std::size_t alignment` and "
                "`Block allocate(std::size_t) noexcept`); wrap a std allocator or a memory resource in one first");

 public:
  static constexpr std::size_t alignment = A::alignment;
  static constexpr MemorySpace memory_space = memory_space_of<A>();
  using stream_type = stream_view;

  StreamOrdered() noexcept(std::is_nothrow_default_constructible_v<A>)
    requires std::is_default_constructible_v<A>
  : a_() {
    remember_device();
  }
  /// Takes A's constructor arguments (`StreamOrdered<Slabs>(capacity)`), or an A to move in.
  template <class... Args>
    requires(sizeof...(Args) > 0 && std::is_constructible_v<A, Args...>)
  explicit StreamOrdered(Args&&... args) noexcept(std::is_nothrow_constructible_v<A, Args...>)
      : a_(std::forward<Args>(args)...) {
    remember_device();
  }
  StreamOrdered(const StreamOrdered&) = delete;
  StreamOrdered& operator=(const StreamOrdered&) = delete;
  /// Synchronizes the streams that hold cached blocks and gives those blocks back to A. Blocks still handed out
  /// must have been freed (as for any allocator).
  ~StreamOrdered() {
    (void)release();
    for (auto& e : entries_)
      if (e.event) (void)::cudaEventDestroy(e.event);
  }

  Block allocate(stream_view s, std::size_t n) noexcept {
    std::lock_guard<Lock> g(lock_);
    const std::size_t c = size_class(n);
    if (c == 0) return {};
    entry& e = entry_for(s);
    if (void* p = e.pop(c)) return reused({p, n}, c);
    // A first while the lists hold at most what is handed out plus a slack (64 MiB); beyond that, the other
    // streams' lists first, so that blocks allocated on one stream and freed on another (a producer and a consumer)
    // do not make A grow for ever, while streams taking turns keep their own blocks without any CUDA call.
    const bool parent_first = cached_ <= live_bytes_ + steal_slack;
    if (parent_first) {
      if (Block b = parent_allocate(c)) return handed_out({b.ptr, n}, c);
    }
    if (steal(e, c)) return reused({e.pop(c), n}, c);
    if (!parent_first) {
      if (Block b = parent_allocate(c)) return handed_out({b.ptr, n}, c);
    }
    (void)release_locked();  // may move entries: e is not used after it
    if (Block b = parent_allocate(c)) return handed_out({b.ptr, n}, c);
    return {};
  }

  bool deallocate(stream_view s, Block b) noexcept {
    if (!b) return true;
    std::lock_guard<Lock> g(lock_);
    const std::size_t c = size_class(b.size);
    if (c == 0) return false;
    if constexpr (has_owns<A>)
      ALLOY_ASSERT(a_.owns(Block{b.ptr, c}) != Ternary::no, "StreamOrdered::deallocate: a block its parent never gave");
    entry& e = entry_for(s);
    if (!e.push(c, b.ptr)) return false;  // no host memory for the list: the block stays handed out
    cached_ += c;
    --live_;
    live_bytes_ -= c;
    if (Events == FreeEvents::at_each_free || e.per_thread) {
      // The stream may be gone (or, per thread, unnamable) by the time the block crosses: record now.
      if (!record(e)) e.event_stale = true;
    }
    return true;
  }

  /// allocate(default stream, n).
  Block allocate(std::size_t n) noexcept { return allocate(stream_view{}, n); }
  /// deallocate(default stream, b).
  bool deallocate(Block b) noexcept { return deallocate(stream_view{}, b); }

  // Every call that reaches A takes the lock, so SharedStreamOrdered's A needs no thread safety of its own.
  // Where the size class overflows (no request of n can succeed), the plain rounding to the alignment, as every
  // good_alloc_size answers (docs/primitives.md).
  [[nodiscard]] std::size_t good_alloc_size(std::size_t n) noexcept {
    std::lock_guard<Lock> g(lock_);
    return hint_at_least(size_class(n), n, alignment);
  }
  Ternary owns(Block b) noexcept
    requires has_owns<A>
  {
    std::lock_guard<Lock> g(lock_);
    return b ? a_.owns(Block{b.ptr, size_class(b.size)}) : Ternary::no;
  }
  bool copy(void* dst, const void* src, std::size_t n, stream_view s) noexcept
    requires has_copy<A>
  {
    std::lock_guard<Lock> g(lock_);
    return a_.copy(dst, src, n, s);
  }
  /// Whether no block is handed out (cached blocks do not count).
  [[nodiscard]] Ternary empty() const noexcept {
    std::lock_guard<Lock> g(lock_);
    return to_ternary(live_ == 0);
  }

  /// Synchronizes every stream that holds cached blocks (`cudaStreamSynchronize`, or `cudaEventSynchronize` for a
  /// released or per-thread stream) and gives those blocks back to A. False when a synchronization failed (those
  /// blocks stay cached).
  bool release() noexcept {
    std::lock_guard<Lock> g(lock_);
    return release_locked();
  }
  /// Call before destroying stream `s` that freed blocks into this allocator: records an event on `s` that covers
  /// those frees, and keeps the blocks under that event, usable by other streams after `s` is gone. False when the
  /// event could not be recorded (then synchronize `s` and call release()).
  bool release_stream(stream_view s) noexcept {
    std::lock_guard<Lock> g(lock_);
    for (entry& e : entries_) {
      if (e.key != key_of(s)) continue;
      if (e.cached == 0) {
        e.key = dead_key();
        return true;
      }
      if (!record(e)) return false;
      e.key = dead_key();  // a new stream with the same handle gets a list of its own
      e.per_thread = true;  // from now on only the event orders these blocks
      return true;
    }
    return true;
  }

  /// Bytes held on the streams' lists (size classes).
  [[nodiscard]] std::size_t cached_bytes() const noexcept {
    std::lock_guard<Lock> g(lock_);
    return cached_;
  }
  /// The device that was current at construction (0 without one).
  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] A& parent() noexcept { return a_; }
  [[nodiscard]] const A& parent() const noexcept { return a_; }

 private:
  static constexpr std::size_t steal_slack = std::size_t{64} << 20;

  // The key of a released stream's entry: matches no stream.
  static const void* dead_key() noexcept {
    static const char dead = 0;
    return &dead;
  }

  struct entry {
    const void* key = nullptr;     // the stream handle, or a per-thread tag; dead_key() once released
    CUstream_st* stream = nullptr;  // the handle to record on (cudaStreamPerThread for per-thread entries)
    bool per_thread = false;        // only the event orders this entry's blocks (per-thread, or released)
    bool event_stale = false;
    cudaEvent_t event = nullptr;
    std::size_t cached = 0;
    std::unordered_map<std::size_t, std::vector<void*>> lists;  // size class -> blocks (nodes: stable addresses)
    std::size_t last_class = 0;                                  // the class used last, and its list: a stream
    std::vector<void*>* last_list = nullptr;                     // that churns one size skips the hash
    std::vector<void*>* find(std::size_t c) noexcept {
      if (c == last_class && last_list) return last_list;
      auto it = lists.find(c);
      if (it == lists.end()) return nullptr;
      last_class = c;
      return last_list = &it->second;
    }
    void* pop(std::size_t c) noexcept {
      std::vector<void*>* l = find(c);
      if (!l || l->empty()) return nullptr;
      void* p = l->back();
      l->pop_back();
      cached -= c;
      return p;
    }
    bool has(std::size_t c) const noexcept {
      auto it = lists.find(c);
      return it != lists.end() && !it->second.empty();
    }
    bool push(std::size_t c, void* p) noexcept {
      try {
        std::vector<void*>* l = find(c);
        if (!l) {
          l = &lists[c];
          last_class = c;
          last_list = l;
        }
        l->push_back(p);
      } catch (...) {
        return false;
      }
      cached += c;
      return true;
    }
  };

  // Four classes per power of two (n rounded up to a quarter of its leading power, at least A's alignment), then
  // A's own rounding: at most a quarter of a block is slack, and a list serves every request of its class.
  std::size_t size_class(std::size_t n) const noexcept {
    if (n == 0) return 0;
    const std::size_t top = std::size_t{1} << (63 - __builtin_clzll(n));
    std::size_t step = top / 4 < A::alignment ? A::alignment : top / 4;
    std::size_t r = 0;
    if (!round_up_checked(n, step, r)) return 0;
    return alloy::good_alloc_size(a_, r);
  }

  Block handed_out(Block b, std::size_t c) noexcept {
    ++live_;
    live_bytes_ += c;
    return b;
  }
  Block reused(Block b, std::size_t c) noexcept {
    cached_ -= c;
    return handed_out(b, c);
  }
  // Takes another stream's whole list of class c into e's, behind an event; false when no list can be ordered.
  bool steal(entry& e, std::size_t c) noexcept {
    for (entry& o : entries_) {
      if (&o == &e || !o.has(c) || !order_after(e, o)) continue;
      std::swap(e.lists[c], o.lists[c]);  // e's list of c was empty
      e.last_list = nullptr;  // the maps' nodes did not move, but keep the cache simple
      o.last_list = nullptr;
      move_bytes(o, e, c);
      // Blocks on an event-only list are ordered for others by e's event alone: record it again after the wait,
      // or the next stream to take these blocks from e would wait only for e's older frees.
      if (event_only(e) && !record(e)) e.event_stale = true;
      return true;
    }
    return false;
  }
  void move_bytes(entry& from, entry& to, std::size_t c) noexcept {
    const std::size_t bytes = to.lists[c].size() * c;
    from.cached -= bytes;
    to.cached += bytes;
  }

  const void* key_of(stream_view s) noexcept {
    CUstream_st* h = s.value();
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
    if (h == nullptr) h = cudaStreamPerThread;
#endif
    if (h == cudaStreamPerThread) {
      // One list per thread for "this thread's default stream", keyed by a number no later thread gets again (the
      // address of a thread_local is reused once its thread exits). 2 mod 4, so it never equals a stream handle
      // (aligned) or a stream id key (odd).
      static std::atomic<std::uintptr_t> next{0};
      thread_local const std::uintptr_t id = next.fetch_add(1, std::memory_order_relaxed) * 4 + 2;
      return reinterpret_cast<const void*>(id);  // NOLINT(performance-no-int-to-ptr): a key, never dereferenced
    }
    if (h == cudaStreamLegacy || h == nullptr) return nullptr;
    if constexpr (Events == FreeEvents::at_each_free) {
      // A destroyed stream's handle may come back for a new stream, which must not take the old one's blocks
      // without waiting: key by the runtime's stream id, never reused (one more call; this mode pays per free).
      unsigned long long id = 0;
      // NOLINTNEXTLINE(performance-no-int-to-ptr): a key
      if (::cudaStreamGetId(h, &id) == cudaSuccess) return reinterpret_cast<const void*>((id << 1) | 1);
      (void)::cudaGetLastError();
    }
    return h;
  }

  entry& entry_for(stream_view s) noexcept {
    const void* k = key_of(s);
    for (entry& e : entries_)
      if (e.key == k) return e;
    try {
      entry& e = entries_.emplace_back();
      e.key = k;
      CUstream_st* h = s.value();
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
      if (h == nullptr) h = cudaStreamPerThread;
#endif
      e.stream = h;
      e.per_thread = h == cudaStreamPerThread;
      return e;
    } catch (...) {
      ALLOY_ASSERT(false, "StreamOrdered: out of host memory for a stream's list");
      std::terminate();
    }
  }

  // The current device, made device_ for the duration of one scope.
  struct on_device {
    int previous = -1;
    explicit on_device(int d) noexcept {  // d < 0: stay on the current device
      if (d < 0) return;
      if (::cudaGetDevice(&previous) != cudaSuccess) {
        (void)::cudaGetLastError();
        previous = -1;
      } else if (previous != d && ::cudaSetDevice(d) != cudaSuccess) {
        (void)::cudaGetLastError();
      }
    }
    ~on_device() {
      int now = -1;
      if (previous >= 0 && ::cudaGetDevice(&now) == cudaSuccess && now != previous) (void)::cudaSetDevice(previous);
    }
  };
  void remember_device() noexcept {
    if (::cudaGetDevice(&device_) != cudaSuccess) {
      (void)::cudaGetLastError();
      device_ = 0;
    }
    int n = 0;
    const cudaError_t r = ::cudaGetDeviceCount(&n);
    if (r != cudaSuccess) (void)::cudaGetLastError();
    multi_device_ = n > 1;
    no_device_ = r != cudaSuccess || n == 0;
  }
  // A may grow (an AllocatorList adding a slab with cudaMalloc): with several devices, on this allocator's.
  Block parent_allocate(std::size_t c) noexcept {
    if (!multi_device_) return a_.allocate(c);
    on_device d(device_);
    return a_.allocate(c);
  }

  // Whether only e's event (recorded at each free, or at release_stream) may order e's blocks: its stream may be
  // gone, or unnamable from this thread.
  static bool event_only(const entry& e) noexcept { return Events == FreeEvents::at_each_free || e.per_thread; }

  // Records e's event on e's stream now (after every free queued there so far).
  // Null and cudaStreamPerThread name a stream of the caller's current device: no switch for them (use the pool
  // with its device current, as PerDevice does).
  static bool names_current_device(const entry& e) noexcept {
    return e.stream == nullptr || e.stream == cudaStreamLegacy || e.stream == cudaStreamPerThread;
  }
  bool record(entry& e) noexcept {
    on_device d(names_current_device(e) ? -1 : device_);
    if (!e.event && ::cudaEventCreateWithFlags(&e.event, cudaEventDisableTiming) != cudaSuccess) {
      (void)::cudaGetLastError();
      e.event = nullptr;
      return false;
    }
    if (::cudaEventRecord(e.event, e.stream) != cudaSuccess) {
      (void)::cudaGetLastError();
      return false;
    }
    e.event_stale = false;
    return true;
  }
  // Makes e's stream wait for everything o's stream freed so far.
  bool order_after(entry& e, entry& o) noexcept {
    if (event_only(o)) {
      if (o.event_stale || !o.event) return false;
    } else if (!record(o)) {
      return false;
    }
    on_device d(names_current_device(e) ? -1 : device_);
    if (::cudaStreamWaitEvent(e.stream, o.event, 0) != cudaSuccess) {
      (void)::cudaGetLastError();
      return false;
    }
    return true;
  }

  bool release_locked() noexcept {
    bool ok = true;
    for (entry& e : entries_) {
      if (e.cached == 0) continue;
      bool synced = false;
      {
        on_device d(device_);
        const cudaError_t r = event_only(e) ? (e.event && !e.event_stale ? ::cudaEventSynchronize(e.event)
                                                                         : cudaErrorInvalidResourceHandle)
                                           : ::cudaStreamSynchronize(e.stream);
        // Without a device or driver nothing was ever queued: the blocks are free already.
        synced = r == cudaSuccess || no_device_ || cuda_no_device_error(static_cast<int>(r));
        if (r != cudaSuccess) (void)::cudaGetLastError();
      }
      if (!synced) {
        ok = false;
        continue;
      }
      for (auto& [c, list] : e.lists) {
        for (void* p : list) {
          if constexpr (has_deallocate<A>) (void)a_.deallocate(Block{p, c});
        }
        cached_ -= list.size() * c;
        list.clear();
      }
      e.cached = 0;
    }
    // Entries without blocks go (a stream's comes back at its next call): released streams, threads that ended.
    for (std::size_t i = entries_.size(); i-- > 0;) {
      if (entries_[i].cached == 0) {
        if (entries_[i].event) (void)::cudaEventDestroy(entries_[i].event);
        entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
    return ok;
  }

  static_assert(std::is_nothrow_move_constructible_v<entry>);
  A a_;
  mutable Lock lock_;
  std::vector<entry> entries_;  // entry must move without throwing (the last_list pointers stay valid)
  std::size_t cached_ = 0;
  std::size_t live_ = 0;
  std::size_t live_bytes_ = 0;  // size classes handed out
  int device_ = 0;
  bool multi_device_ = false;
  bool no_device_ = false;
};

/// SharedStreamOrdered<A, Events>: StreamOrdered with a mutex around every call, for many host threads (each on
/// its own streams, or sharing them, or on `cudaStreamPerThread`). A itself is only ever called under the mutex.
/// A lock rather than lock-free lists: a crossing or a release makes CUDA calls and walks every stream's lists, and
/// the uncontended lock costs a few nanoseconds beside the host work of a pool; measured in docs/performance.md.
template <class A, FreeEvents Events = FreeEvents::at_crossing>
using SharedStreamOrdered = StreamOrdered<A, Events, std::mutex>;

}  // namespace alloy
