#pragma once
/// \file alloy/recording_allocator.hpp
/// RecordingAllocator: a block that wraps any stack and writes an allocation trace (docs/replay.md), plus the trace
/// vocabulary it shares with the replay tool: TraceEvent, TraceSink and the CSV line format.
#include <algorithm>
#include <cinttypes>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <alloy/common.hpp>

namespace alloy {

/// One line of an allocation trace: `op,id,size,alignment,thread` (docs/replay.md).
/// `allocate` starts the life of block `id` (unique while it is live), `deallocate` ends it, `reallocate` resizes it
/// to `size` (it may move; the id stays). `alignment` is what the block needs; `thread` is a small integer, 0 for the
/// first thread seen.
struct TraceEvent {
  enum class Op : char { allocate = 'a', deallocate = 'd', reallocate = 'r' };
  Op op = Op::allocate;
  std::uint64_t id = 0;
  std::size_t size = 0;
  std::size_t alignment = 0;
  std::uint32_t thread = 0;
  friend bool operator==(const TraceEvent&, const TraceEvent&) = default;
};

/// The first line of every trace.
inline constexpr char trace_header[] = "op,id,size,alignment,thread\n";

/// Writes `e` as one CSV line (with its newline) into `buf`; returns the length, or 0 when `n` is too small.
/// 96 bytes always suffice.
inline std::size_t format_trace_line(const TraceEvent& e, char* buf, std::size_t n) noexcept {
  char tmp[96];  // 1 + 20 + 20 + 20 + 10 + 5 separators and newline < 96
  const int len = std::snprintf(tmp, sizeof tmp, "%c,%" PRIu64 ",%zu,%zu,%" PRIu32 "\n", static_cast<char>(e.op), e.id,
                                e.size, e.alignment, e.thread);
  if (len <= 0 || static_cast<std::size_t>(len) >= n) return 0;
  std::memcpy(buf, tmp, static_cast<std::size_t>(len) + 1);
  return static_cast<std::size_t>(len);
}

/// Where a trace goes: a `std::FILE*`, a `std::ostream`, or (default) a string in memory.
/// A FILE or stream is borrowed and must outlive the sink; it is flushed by `flush()`, never closed.
class TraceSink {
 public:
  TraceSink() noexcept = default;                                   ///< in memory: read it back with `buffer()`
  // NOLINTNEXTLINE(google-explicit-constructor): `RecordingAllocator r(stdout)`
  TraceSink(std::FILE* f) noexcept : file_(f) {}
  // NOLINTNEXTLINE(google-explicit-constructor): `r(std::cout)`
  TraceSink(std::ostream& os) noexcept : stream_(&os) {}

  [[nodiscard]] bool in_memory() const noexcept { return file_ == nullptr && stream_ == nullptr; }
  /// The text written so far when in memory (empty otherwise).
  [[nodiscard]] const std::string& buffer() const noexcept { return buffer_; }

  /// Appends n bytes; false when the sink failed (a short fwrite, a bad stream, no memory).
  bool write(const char* s, std::size_t n) noexcept {
    if (file_) return std::fwrite(s, 1, n, file_) == n;
    try {
      if (stream_) return static_cast<bool>(stream_->write(s, static_cast<std::streamsize>(n)));
      buffer_.append(s, n);
      return true;
    } catch (...) {
      return false;
    }
  }
  bool flush() noexcept {
    if (file_) return std::fflush(file_) == 0;
    try {
      if (stream_) return static_cast<bool>(stream_->flush());
    } catch (...) {
      return false;
    }
    return true;
  }

 private:
  std::FILE* file_ = nullptr;
  std::ostream* stream_ = nullptr;
  std::string buffer_;
};

/// RecordingAllocator<Parent>
///
/// Semantics: forwards every call to Parent and writes one trace line (docs/replay.md) for each change it makes to
/// the set of live blocks: `a` for a successful allocate, aligned_allocate, allocate_fresh, allocate_all or
/// stream-ordered allocate; `d` for a successful deallocate (and, for deallocate_all, one `d` per live block in id
/// order); `r` for a successful expand, reallocate or aligned_reallocate that changes the block's size or raises its
/// alignment (a reallocate from the empty block is an `a`, one to 0 that frees is a `d`, a move that keeps the size
/// writes nothing: traces name blocks, not addresses). Failed calls write nothing: the trace is the
/// program's demand as it was served. Ids are 1, 2, 3, ... in order of allocation, never reused; threads are numbered
/// 0, 1, 2, ... in order of first call. A plain allocate records `Parent::alignment` (what the caller may rely on),
/// an aligned one the alignment asked for. The header line is written at construction.
/// The sink is a `std::FILE*`, a `std::ostream` or (default) an in-memory string read back with `trace()`.
/// Capabilities: exactly Parent's (each primitive is declared iff Parent declares it, as `Ref`). `alignment` and
/// `memory_space` are Parent's: the recorder never touches the blocks, so it wraps device stacks too.
/// Thread safety: thread-safe, whatever Parent is: one mutex serializes the calls to Parent and the writes, so the
/// trace order is the order in which Parent saw the calls (a block freed by one thread and handed to another is
/// always `d` before `a`). The price is a lock per call: a recorder is a measuring tool, not a production layer.
/// Failure: as Parent. A sink that fails to write (or no memory for the bookkeeping) does not change what Parent
/// returns; `sink_ok()` turns false and stays false.
/// Storage: Parent by value, the sink, a hash map from live address to id, the list of threads seen. Neither
/// copyable nor movable (it holds a mutex); construct it in place, Parent from the trailing constructor arguments.
/// Example:
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// alloy::RecordingAllocator<alloy::Mallocator> r;   // records into memory
/// alloy::Block b = r.allocate(100);
/// CHECK(r.reallocate(b, 300));
/// CHECK(r.deallocate(b));
/// CHECK(r.trace() == "op,id,size,alignment,thread\n"
///                    "a,1,100,16,0\n"
///                    "r,1,300,16,0\n"
///                    "d,1,300,16,0\n");
/// ```
template <class Parent>
class RecordingAllocator {
  static_assert(allocator<Parent>,
                "RecordingAllocator: Parent must be an alloy allocator (a type with `static constexpr std::size_t "
                "alignment` and `Block allocate(std::size_t) noexcept`, e.g. alloy::Mallocator)");
 public:
  static constexpr std::size_t alignment = Parent::alignment;
  static constexpr MemorySpace memory_space = memory_space_of<Parent>();

  /// Records into memory; Parent default-constructed.
  RecordingAllocator() requires std::default_initializable<Parent> : RecordingAllocator(TraceSink{}) {}
  /// Records into `sink`; Parent constructed from `args` (e.g. `RecordingAllocator<Region<Mallocator>> r(f, 1 << 20)`).
  template <class... Args>
    requires std::constructible_from<Parent, Args...>
  explicit RecordingAllocator(TraceSink sink, Args&&... args) noexcept(std::is_nothrow_constructible_v<Parent, Args...>)
      : parent_(std::forward<Args>(args)...), sink_(std::move(sink)) {
    ok_ = sink_.write(trace_header, sizeof(trace_header) - 1);
  }
  RecordingAllocator(const RecordingAllocator&) = delete;
  RecordingAllocator& operator=(const RecordingAllocator&) = delete;
  /// Flushes the sink. Blocks still live are left to Parent's destructor, as they would be without the recorder.
  ~RecordingAllocator() { sink_.flush(); }

  /// The wrapped allocator. Calls made on it directly are not recorded.
  [[nodiscard]] Parent& parent() noexcept { return parent_; }
  /// The trace text written so far, header included, when recording into memory (empty for a FILE or a stream).
  [[nodiscard]] std::string trace() const {
    std::lock_guard g(mutex_);
    return sink_.buffer();
  }
  /// Lines written so far, the header not counted.
  [[nodiscard]] std::size_t event_count() const noexcept {
    std::lock_guard g(mutex_);
    return events_;
  }
  /// Blocks allocated through the recorder and not yet freed.
  [[nodiscard]] std::size_t live_blocks() const noexcept {
    std::lock_guard g(mutex_);
    return live_.size();
  }
  /// False once any write to the sink (or the recorder's own bookkeeping) has failed.
  [[nodiscard]] bool sink_ok() const noexcept {
    std::lock_guard g(mutex_);
    return ok_;
  }
  bool flush() noexcept {
    std::lock_guard g(mutex_);
    return sink_.flush() && ok_;
  }

  Block allocate(std::size_t n) noexcept {
    std::lock_guard g(mutex_);
    Block b = parent_.allocate(n);
    if (b) record_new(b, alignment);
    return b;
  }
  Block aligned_allocate(std::size_t n, std::size_t a) noexcept requires has_aligned_allocate<Parent> {
    std::lock_guard g(mutex_);
    Block b = parent_.aligned_allocate(n, a);
    if (b) record_new(b, std::max(a, alignment));
    return b;
  }
  Block allocate_fresh(std::size_t n) noexcept requires has_allocate_fresh<Parent> {
    std::lock_guard g(mutex_);
    Block b = parent_.allocate_fresh(n);
    if (b) record_new(b, alignment);
    return b;
  }
  Block allocate_all() noexcept requires has_allocate_all<Parent> {
    std::lock_guard g(mutex_);
    Block b = parent_.allocate_all();
    if (b) record_new(b, alignment);
    return b;
  }
  Block allocate(stream_view s, std::size_t n) noexcept requires has_stream_ordered<Parent> {
    std::lock_guard g(mutex_);
    Block b = parent_.allocate(s, n);
    if (b) record_new(b, alignment);
    return b;
  }

  bool expand(Block& b, std::size_t delta) noexcept requires has_expand<Parent> {
    std::lock_guard g(mutex_);
    const auto it = find(b);  // looked up before Parent may move or free the block
    const bool had = static_cast<bool>(b);
    const bool ok = parent_.expand(b, delta);
    if (ok && had && delta != 0) record_change(it, b, 0);
    return ok;
  }
  bool reallocate(Block& b, std::size_t n) noexcept requires has_reallocate<Parent> {
    std::lock_guard g(mutex_);
    const auto it = find(b);
    const bool had = static_cast<bool>(b);
    const std::size_t old_size = b.size;
    const bool ok = parent_.reallocate(b, n);
    if (ok) {
      if (!had) {
        if (b) record_new(b, alignment);
      } else if (b.size != old_size || !b) {
        record_change(it, b, 0);
      } else {
        record_move(it, b);
      }
    }
    return ok;
  }
  bool aligned_reallocate(Block& b, std::size_t n, std::size_t a) noexcept requires has_aligned_reallocate<Parent> {
    std::lock_guard g(mutex_);
    const auto it = find(b);
    const bool had = static_cast<bool>(b);
    const std::size_t old_size = b.size;
    const std::size_t al = std::max(a, alignment);
    const bool ok = parent_.aligned_reallocate(b, n, a);
    if (ok) {
      if (!had) {
        if (b) record_new(b, al);
      } else if (b.size != old_size || !b || (it != live_.end() && al > it->second.alignment)) {
        record_change(it, b, al);
      } else {
        record_move(it, b);
      }
    }
    return ok;
  }

  bool deallocate(Block b) noexcept requires has_deallocate<Parent> {
    std::lock_guard g(mutex_);
    const auto it = find(b);
    const bool ok = parent_.deallocate(b);
    if (ok) record_free(it);
    return ok;
  }
  bool deallocate(stream_view s, Block b) noexcept requires has_stream_ordered<Parent> {
    std::lock_guard g(mutex_);
    const auto it = find(b);
    const bool ok = parent_.deallocate(s, b);
    if (ok) record_free(it);
    return ok;
  }
  bool deallocate_all() noexcept requires has_deallocate_all<Parent> {
    std::lock_guard g(mutex_);
    const bool ok = parent_.deallocate_all();
    if (ok) record_free_all();
    return ok;
  }

  Ternary owns(Block b) noexcept requires has_owns<Parent> {
    std::lock_guard g(mutex_);
    return parent_.owns(b);
  }
  Ternary resolve_internal_pointer(const void* p, Block& r) noexcept requires has_resolve_internal_pointer<Parent> {
    std::lock_guard g(mutex_);
    return parent_.resolve_internal_pointer(p, r);
  }
  Ternary empty() noexcept requires has_empty<Parent> {
    std::lock_guard g(mutex_);
    return parent_.empty();
  }
  std::size_t good_alloc_size(std::size_t n) noexcept requires has_good_alloc_size<Parent> {
    std::lock_guard g(mutex_);
    return parent_.good_alloc_size(n);
  }
  bool copy(void* d, const void* s, std::size_t n, stream_view st) noexcept requires has_copy<Parent> {
    std::lock_guard g(mutex_);  // not recorded, but a call to Parent like any other
    return parent_.copy(d, s, n, st);
  }

 private:
  struct Live {
    std::uint64_t id;
    std::size_t size;
    std::size_t alignment;
  };

  // All below run with mutex_ held.
  std::uint32_t thread_number() {
    const auto self = std::this_thread::get_id();
    const auto it = std::find(threads_.begin(), threads_.end(), self);
    if (it != threads_.end()) return static_cast<std::uint32_t>(it - threads_.begin());
    threads_.push_back(self);
    return static_cast<std::uint32_t>(threads_.size() - 1);
  }
  void emit(TraceEvent::Op op, std::uint64_t id, std::size_t size, std::size_t align) noexcept {
    try {
      char line[96];
      const std::size_t len = format_trace_line({op, id, size, align, thread_number()}, line, sizeof line);
      ok_ = sink_.write(line, len) && len != 0 && ok_;
      ++events_;
    } catch (...) {  // the thread list could not grow
      ok_ = false;
    }
  }
  void record_new(Block b, std::size_t align) noexcept {
    const std::uint64_t id = next_id_++;
    try {
      live_[address_of(b.ptr)] = Live{id, b.size, align};
    } catch (...) {
      ok_ = false;
    }
    emit(TraceEvent::Op::allocate, id, b.size, align);
  }
  using LiveMap = std::unordered_map<std::uintptr_t, Live>;  // keyed by address: never dereferenced
  // Looked up before the call to Parent, so no pointer is used after Parent freed it; no insertion happens between
  // the lookup and the use, so the iterator stays valid.
  typename LiveMap::iterator find(Block b) noexcept { return b ? live_.find(address_of(b.ptr)) : live_.end(); }
  void record_free(typename LiveMap::iterator it) noexcept {
    if (it == live_.end()) return;  // not allocated through the recorder: nothing to say about it
    const Live l = it->second;
    live_.erase(it);
    emit(TraceEvent::Op::deallocate, l.id, l.size, l.alignment);
  }
  // The block moved without changing size: no line, only the address changes.
  void record_move(typename LiveMap::iterator it, Block now) noexcept {
    if (it == live_.end()) return;
    const Live l = it->second;
    live_.erase(it);
    try {
      live_[address_of(now.ptr)] = l;
    } catch (...) {
      ok_ = false;
    }
  }
  // A live block was resized (or freed, when `now` is empty): `r` (or `d`).
  void record_change(typename LiveMap::iterator it, Block now, std::size_t align) noexcept {
    if (!now) return record_free(it);
    if (it == live_.end()) return;
    Live l = it->second;
    live_.erase(it);
    l.size = now.size;
    l.alignment = std::max(l.alignment, align);
    try {
      live_[address_of(now.ptr)] = l;
    } catch (...) {
      ok_ = false;
    }
    emit(TraceEvent::Op::reallocate, l.id, l.size, l.alignment);
  }
  void record_free_all() noexcept {
    std::vector<Live> ids;
    try {
      ids.reserve(live_.size());
      for (const auto& kv : live_) ids.push_back(kv.second);
    } catch (...) {
      ok_ = false;
    }
    std::sort(ids.begin(), ids.end(), [](const Live& x, const Live& y) { return x.id < y.id; });
    for (const Live& l : ids) emit(TraceEvent::Op::deallocate, l.id, l.size, l.alignment);
    live_.clear();
  }

  Parent parent_;
  TraceSink sink_;
  mutable std::mutex mutex_;
  LiveMap live_;
  std::vector<std::thread::id> threads_;
  std::uint64_t next_id_ = 1;
  std::size_t events_ = 0;
  bool ok_ = true;
};

}  // namespace alloy
