// The CPU stand-in for the CUDA runtime (see cuda_standin.hpp for what it checks). It defines the runtime's C entry
// points with the signatures of the toolkit's <cuda_runtime_api.h>, so a program links it instead of libcudart.
#include "cuda_standin.hpp"

#include <cuda_runtime_api.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

// The runtime's opaque handle types, defined here: a cudaStream_t is a CUstream_st*, and so on.
struct CUstream_st {
  int id = 0;
  unsigned flags = 0;
  int device = 0;
  bool destroyed = false;
  std::vector<std::uint64_t> clock;  // vector clock: clock[id of stream t] = how much of t's work is ordered before
};
struct CUevent_st {
  unsigned flags = 0;
  int device = 0;
  bool destroyed = false;
  bool recorded = false;
  std::vector<std::uint64_t> clock;
  std::chrono::steady_clock::time_point when{};
};

namespace alloy::standin {
namespace {

using vclock = std::vector<std::uint64_t>;
enum class kind { device, pinned, managed, pool };
const char* kind_name(kind k) {
  switch (k) {
    case kind::device: return "device memory (cudaMalloc)";
    case kind::pinned: return "pinned memory (cudaMallocHost)";
    case kind::managed: return "managed memory (cudaMallocManaged)";
    case kind::pool: return "pool memory (cudaMallocAsync / cudaMallocFromPoolAsync)";
  }
  return "?";
}

}  // namespace
}  // namespace alloy::standin

struct CUmemPoolHandle_st {
  int device = 0;
  bool destroyed = false;
  bool is_default = false;
  std::uint64_t threshold = 0;
  std::size_t reserved = 0, reserved_high = 0, used = 0, used_high = 0;
  struct cached {
    std::uintptr_t base;
    std::size_t mapped;
    int stream;
    std::uint64_t t;  // freed at point t of that stream
  };
  std::vector<cached> cache;  // freed blocks, still mapped, in the order they were freed
};

namespace alloy::standin {
namespace {

struct allocation {
  std::size_t size = 0;
  std::size_t mapped = 0;
  kind k = kind::device;
  cudaMemPool_t pool = nullptr;
  int device = 0;
};

struct freed_region {
  std::uintptr_t hi;
  int stream;
  std::uint64_t t;
};

struct state {
  std::recursive_mutex m;
  faults f;
  std::uint64_t alloc_calls = 0, copy_calls = 0;
  std::map<std::uintptr_t, allocation> live;   // by base address
  std::size_t live_size = 0;                   // sum of live sizes
  std::map<int, std::size_t> device_mapped;    // per device: cudaMalloc'd bytes (mapped) plus pools' reservations
  std::map<std::uintptr_t, allocation> freed;  // freed, still mapped PROT_NONE (quarantine or a pool's cache)
  std::deque<std::uintptr_t> quarantine;       // freed and out of any pool, oldest first
  std::size_t quarantine_bytes = 0;
  std::vector<CUstream_st*> streams;           // by id; 0 is the legacy default stream
  std::set<const void*> stream_handles, event_handles, pool_handles;
  std::vector<cudaMemPool_t> default_pools;    // by device
  vclock host;                                 // what the host has seen complete
  std::vector<violation> violations;
  std::map<std::string, std::uint64_t> calls;
  std::uint64_t total_calls = 0;
  std::map<std::uintptr_t, freed_region> annotations;  // note_deallocate'd ranges [lo, hi)
  std::map<std::uintptr_t, freed_region> uses;         // device ranges [lo, hi): the stream point of their last use
  bool abort_on_violation = false;
};

state& st() {
  static state* s = [] {
    auto* p = new state;  // never destroyed: the exit report and late destructors still use it
    auto* legacy = new CUstream_st;
    legacy->id = 0;
    p->streams.push_back(legacy);
    if (const char* e = std::getenv("ALLOY_STANDIN_DEVICES")) p->f.device_count = std::atoi(e);
    if (const char* e = std::getenv("ALLOY_STANDIN_INIT_ERROR")) p->f.init_error = std::atoi(e);
    if (const char* e = std::getenv("ALLOY_STANDIN_ABORT")) p->abort_on_violation = std::atoi(e) != 0;
    return p;
  }();
  return *s;
}

thread_local cudaError_t last_error = cudaSuccess;
thread_local int current_device = 0;
thread_local CUstream_st* per_thread_stream = nullptr;

std::size_t page_size() {  // not a namespace-scope constant: a static object's constructor may allocate first
  static const std::size_t p = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return p;
}
constexpr std::size_t quarantine_limit = std::size_t{1} << 30;  // address space kept reserved for freed memory

std::size_t round_page(std::size_t n) { return (n + page_size() - 1) / page_size() * page_size(); }

void record(rule r, std::string text) {
  state& s = st();
  if (s.abort_on_violation) {
    std::fprintf(stderr, "alloy CUDA stand-in: %s: %s\n", rule_name(r), text.c_str());
    std::abort();
  }
  s.violations.push_back({r, std::move(text)});
}

std::string hex(const void* p) {
  char b[32];
  std::snprintf(b, sizeof b, "%p", p);
  return b;
}

cudaError_t fail(cudaError_t e) {
  if (last_error != cudaSuccess && st().f.init_error != 0) return e;  // the sticky initialization error stays
  last_error = e;
  return e;
}

// Every entry point starts here: counts the call, and answers the injected initialization error or "no device".
struct entry {
  std::unique_lock<std::recursive_mutex> lock;
  cudaError_t refusal = cudaSuccess;
  entry(const char* name, bool needs_device = true) : lock(st().m) {
    state& s = st();
    ++s.calls[name];
    ++s.total_calls;
    if (s.f.init_error != 0) {
      last_error = static_cast<cudaError_t>(s.f.init_error);
      refusal = last_error;
    } else if (needs_device && s.f.device_count <= 0) {
      refusal = fail(cudaErrorNoDevice);
    }
  }
};

// ---- vector clocks ----
void join(vclock& a, const vclock& b) {
  if (a.size() < b.size()) a.resize(b.size(), 0);
  for (std::size_t i = 0; i < b.size(); ++i) a[i] = std::max(a[i], b[i]);
}
bool ordered(const vclock& c, int stream, std::uint64_t t) {
  return t == 0 || (static_cast<std::size_t>(stream) < c.size() && c[static_cast<std::size_t>(stream)] >= t);
}
bool blocking(const CUstream_st* x) { return x->id != 0 && (x->flags & cudaStreamNonBlocking) == 0; }

CUstream_st* new_stream(unsigned flags) {
  state& s = st();
  auto* x = new CUstream_st;  // never freed: a destroyed handle must stay recognisable
  x->id = static_cast<int>(s.streams.size());
  x->flags = flags;
  x->device = current_device;
  s.streams.push_back(x);
  return x;
}

// Whether handle h (of a stream, event or pool) was created and not destroyed; records why not otherwise.
template <class H>
bool live_handle(const std::set<const void*>& created, const H* h, const char* what, const char* call) {
  if (created.count(h) == 0) {
    record(rule::destroyed_handle, std::string(call) + ": " + what + " " + hex(h) + " was never created");
    return false;
  }
  if (h->destroyed) {
    record(rule::destroyed_handle, std::string(call) + ": " + what + " " + hex(h) + " was destroyed");
    return false;
  }
  return true;
}

// The stream a handle names, or null (and a violation) for a destroyed or unknown handle.
CUstream_st* resolve(cudaStream_t h, const char* call) {
  state& s = st();
  if (h == nullptr || h == cudaStreamLegacy) return s.streams[0];
  if (h == cudaStreamPerThread) {
    if (per_thread_stream == nullptr) per_thread_stream = new_stream(0);
    return per_thread_stream;
  }
  return live_handle(s.stream_handles, h, "stream", call) ? h : nullptr;
}

// Work is issued on x: it follows what the host has seen complete and the default stream's implicit ordering.
void enter(CUstream_st* x) {
  state& s = st();
  join(x->clock, s.host);
  if (x->id == 0) {
    for (CUstream_st* y : s.streams)
      if (!y->destroyed && blocking(y)) join(x->clock, y->clock);
  } else if (blocking(x)) {
    join(x->clock, s.streams[0]->clock);
  }
  if (x->clock.size() <= static_cast<std::size_t>(x->id)) x->clock.resize(static_cast<std::size_t>(x->id) + 1, 0);
}
std::uint64_t issue(CUstream_st* x) {
  enter(x);
  return ++x->clock[static_cast<std::size_t>(x->id)];
}

// ---- range maps: [lo, hi) -> (stream, point), non-overlapping ----
void range_erase(std::map<std::uintptr_t, freed_region>& m, std::uintptr_t lo, std::uintptr_t hi) {
  auto it = m.upper_bound(lo);
  if (it != m.begin() && std::prev(it)->second.hi > lo) --it;
  while (it != m.end() && it->first < hi) {
    const std::uintptr_t a = it->first;
    const freed_region r = it->second;
    it = m.erase(it);
    if (a < lo) m[a] = {lo, r.stream, r.t};
    if (r.hi > hi) m[hi] = {r.hi, r.stream, r.t};
  }
}
template <class F>
void range_for_each(std::map<std::uintptr_t, freed_region>& m, std::uintptr_t lo, std::uintptr_t hi, F f) {
  auto it = m.upper_bound(lo);
  if (it != m.begin() && std::prev(it)->second.hi > lo) --it;
  for (; it != m.end() && it->first < hi; ++it)
    if (!f(it->first, it->second)) return;
}
// Work on stream x at point t used device memory [p, p + n).
void note_use(const void* p, std::size_t n, CUstream_st* x, std::uint64_t t) {
  const auto lo = reinterpret_cast<std::uintptr_t>(p);
  range_erase(st().uses, lo, lo + n);
  st().uses[lo] = {lo + n, x->id, t};
}
// A free of [p, p + n) on stream x: every earlier use must be ordered before it (RMM's rule: free on the stream of
// the last use, or order that stream after it). Records a violation and returns false otherwise.
bool check_free_after_uses(const void* p, std::size_t n, CUstream_st* x, const char* call) {
  const auto lo = reinterpret_cast<std::uintptr_t>(p);
  bool ok = true;
  range_for_each(st().uses, lo, lo + n, [&](std::uintptr_t a, const freed_region& u) {
    if (u.stream == x->id || ordered(x->clock, u.stream, u.t)) return true;
    ok = false;
    record(rule::unordered_free, std::string(call) + ": memory at " + hex(reinterpret_cast<void*>(a)) +
                                     " is freed on stream " + std::to_string(x->id) +
                                     " while its last use, on stream " + std::to_string(u.stream) + " at its point " +
                                     std::to_string(u.t) + ", is not ordered before the free");
    return false;
  });
  range_erase(st().uses, lo, lo + n);
  return ok;
}

// ---- memory ----
void close_pages(std::uintptr_t base, std::size_t mapped) {
  ::madvise(reinterpret_cast<void*>(base), mapped, MADV_DONTNEED);
  ::mprotect(reinterpret_cast<void*>(base), mapped, PROT_NONE);
}
std::size_t live_total() { return st().live_size; }
std::size_t device_used(int device) { return st().device_mapped[device]; }

void add_live(std::uintptr_t base, const allocation& a) {
  state& s = st();
  s.freed.erase(base);  // an old, unmapped address may come back
  s.live[base] = a;
  s.live_size += a.size;
  if (a.k == kind::device) s.device_mapped[a.device] += a.mapped;
}
// Moves a live allocation to the freed map (its pages closed); returns its record.
allocation remove_live(std::map<std::uintptr_t, allocation>::iterator it) {
  state& s = st();
  const std::uintptr_t base = it->first;
  const allocation a = it->second;
  s.live.erase(it);
  s.live_size -= a.size;
  if (a.k == kind::device) s.device_mapped[a.device] -= a.mapped;
  s.freed[base] = a;
  close_pages(base, a.mapped);
  return a;
}

// Whether an allocation of n bytes may happen (injected faults, budget, device memory).
bool may_allocate(std::size_t n, kind k) {
  state& s = st();
  ++s.alloc_calls;
  if (s.f.fail_alloc_at != 0 && s.alloc_calls == s.f.fail_alloc_at) return false;
  if (n > s.f.byte_budget || live_total() > s.f.byte_budget - n) return false;
  if ((k == kind::device || k == kind::pool) &&
      (n > s.f.device_memory || device_used(current_device) > s.f.device_memory - n))
    return false;
  return true;
}

void* map_pages(std::size_t mapped, kind k) {
  const int prot = (k == kind::device || k == kind::pool) ? PROT_NONE : PROT_READ | PROT_WRITE;
  void* p = ::mmap(nullptr, mapped, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// Freed memory stays mapped PROT_NONE for a while, so a later touch crashes and a second free is a double free.
void retire(std::uintptr_t base) {
  state& s = st();
  const allocation& a = s.freed.at(base);
  s.quarantine.push_back(base);
  s.quarantine_bytes += a.mapped;
  while (s.quarantine_bytes > quarantine_limit && !s.quarantine.empty()) {
    const std::uintptr_t old = s.quarantine.front();
    s.quarantine.pop_front();
    auto it = s.freed.find(old);
    s.quarantine_bytes -= it->second.mapped;
    ::munmap(reinterpret_cast<void*>(old), it->second.mapped);
    s.freed.erase(it);
  }
}

// The allocation containing p (live or freed), if any.
template <class Map>
typename Map::iterator containing(Map& m, const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  auto it = m.upper_bound(a);
  if (it == m.begin()) return m.end();
  --it;
  return a < it->first + std::max(it->second.mapped, std::size_t{1}) ? it : m.end();
}

cudaError_t allocate(void** out, std::size_t n, kind k, const char* call) {
  if (out == nullptr) return fail(cudaErrorInvalidValue);
  if (n == 0) {
    *out = nullptr;
    return cudaSuccess;
  }
  if (!may_allocate(n, k)) return fail(cudaErrorMemoryAllocation);
  const std::size_t mapped = round_page(n);
  if (mapped < n) return fail(cudaErrorMemoryAllocation);
  void* p = map_pages(mapped, k);
  if (p == nullptr) return fail(cudaErrorMemoryAllocation);
  add_live(reinterpret_cast<std::uintptr_t>(p), {n, mapped, k, nullptr, current_device});
  (void)call;
  *out = p;
  return cudaSuccess;
}

// Finds the live allocation that starts at p for a free through `call`, or records why there is none.
std::map<std::uintptr_t, allocation>::iterator find_for_free(const void* p, const char* call) {
  state& s = st();
  auto it = s.live.find(reinterpret_cast<std::uintptr_t>(p));
  if (it != s.live.end()) return it;
  if (s.freed.count(reinterpret_cast<std::uintptr_t>(p)) != 0) {
    record(rule::double_free, std::string(call) + "(" + hex(p) + "): freed already");
  } else if (containing(s.live, p) != s.live.end()) {
    record(rule::foreign_free, std::string(call) + "(" + hex(p) + "): inside an allocation, not its start");
  } else {
    record(rule::foreign_free, std::string(call) + "(" + hex(p) + "): not an address the runtime gave");
  }
  return s.live.end();
}

void release_cached(cudaMemPool_t pool, std::size_t keep, bool only_completed) {
  state& s = st();
  auto& c = pool->cache;
  for (std::size_t i = 0; i < c.size() && pool->reserved > keep;) {
    if (only_completed && !ordered(s.host, c[i].stream, c[i].t)) {
      ++i;
      continue;
    }
    pool->reserved -= c[i].mapped;
    s.device_mapped[pool->device] -= c[i].mapped;
    retire(c[i].base);
    c.erase(c.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

// The host has seen more work complete: pools give back what their release threshold does not keep.
void host_synchronized() {
  state& s = st();
  for (const void* p : s.pool_handles) {
    auto* pool = static_cast<cudaMemPool_t>(const_cast<void*>(p));
    if (!pool->destroyed && pool->threshold != UINT64_MAX)
      release_cached(pool, static_cast<std::size_t>(std::min<std::uint64_t>(pool->threshold, SIZE_MAX)), true);
  }
}
void synchronize_all() {
  state& s = st();
  for (CUstream_st* x : s.streams) join(s.host, x->clock);
  host_synchronized();
}

// A copy or memset touching [p, p + n): where p is inside a known allocation, the range must lie inside that live
// allocation. Returns false (and records bad_access) otherwise; `device` tells whether the range must be opened.
bool check_range(const void* p, std::size_t n, const char* call, bool& device) {
  state& s = st();
  device = false;
  auto it = containing(s.live, p);
  if (it != s.live.end()) {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    if (a + n > it->first + it->second.size || a + n < a) {
      record(rule::bad_access, std::string(call) + ": " + std::to_string(n) + " bytes at " + hex(p) +
                                   " run past the end of " + kind_name(it->second.k) + " of " +
                                   std::to_string(it->second.size) + " bytes at " +
                                   hex(reinterpret_cast<void*>(it->first)));
      return false;
    }
    device = it->second.k == kind::device || it->second.k == kind::pool;
    return true;
  }
  auto f = containing(s.freed, p);
  if (f != s.freed.end()) {
    record(rule::bad_access, std::string(call) + ": " + hex(p) + " lies in freed " + kind_name(f->second.k));
    return false;
  }
  return true;  // host memory the runtime did not allocate (pageable): its owner's business
}

struct opened {  // device pages made accessible for the duration of one copy
  std::vector<std::pair<std::uintptr_t, std::size_t>> ranges;
  void open(const void* p, std::size_t n) {
    const auto a = reinterpret_cast<std::uintptr_t>(p) / page_size() * page_size();
    const std::size_t len = round_page(reinterpret_cast<std::uintptr_t>(p) + n - a);
    ::mprotect(reinterpret_cast<void*>(a), len, PROT_READ | PROT_WRITE);
    ranges.emplace_back(a, len);
  }
  ~opened() {
    for (auto& [a, len] : ranges) ::mprotect(reinterpret_cast<void*>(a), len, PROT_NONE);
  }
};

bool copy_fault() {
  state& s = st();
  ++s.copy_calls;
  return s.f.fail_copy_at != 0 && s.copy_calls == s.f.fail_copy_at;
}

cudaError_t do_copy(void* dst, const void* src, std::size_t n, cudaStream_t h, const char* call, bool sync) {
  CUstream_st* x = resolve(h, call);
  if (x == nullptr) return fail(cudaErrorInvalidResourceHandle);
  if (n == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr) return fail(cudaErrorInvalidValue);
  bool dst_dev = false, src_dev = false;
  if (!check_range(dst, n, call, dst_dev) || !check_range(src, n, call, src_dev)) return fail(cudaErrorInvalidValue);
  if (copy_fault()) return fail(cudaErrorInvalidValue);
  {
    opened o;
    if (dst_dev) o.open(dst, n);
    if (src_dev) o.open(src, n);
    std::memmove(dst, src, n);
  }
  const std::uint64_t t = issue(x);
  if (dst_dev) note_use(dst, n, x, t);
  if (src_dev) note_use(src, n, x, t);
  // Synchronous calls, and copies into pageable host memory, return once the copy is done (the runtime's rule).
  const bool dst_pageable = containing(st().live, dst) == st().live.end();
  if (sync || dst_pageable) {
    join(st().host, x->clock);
    host_synchronized();
  }
  return cudaSuccess;
}

cudaError_t do_memset(void* dst, int value, std::size_t n, cudaStream_t h, const char* call, bool sync) {
  CUstream_st* x = resolve(h, call);
  if (x == nullptr) return fail(cudaErrorInvalidResourceHandle);
  if (n == 0) return cudaSuccess;
  bool dev = false;
  if (dst == nullptr || !check_range(dst, n, call, dev)) return fail(cudaErrorInvalidValue);
  if (containing(st().live, dst) == st().live.end()) {
    record(rule::bad_access, std::string(call) + ": " + hex(dst) + " is not memory from the runtime");
    return fail(cudaErrorInvalidValue);
  }
  if (copy_fault()) return fail(cudaErrorInvalidValue);
  {
    opened o;
    if (dev) o.open(dst, n);
    std::memset(dst, value, n);
  }
  const std::uint64_t t = issue(x);
  if (dev) note_use(dst, n, x, t);
  if (sync) {
    join(st().host, x->clock);
    host_synchronized();
  }
  return cudaSuccess;
}

bool pool_valid(cudaMemPool_t pool, const char* call) {
  return live_handle(st().pool_handles, pool, "memory pool", call);
}
CUevent_st* event_valid(cudaEvent_t e, const char* call) {
  return live_handle(st().event_handles, e, "event", call) ? e : nullptr;
}

cudaMemPool_t default_pool(int device) {
  state& s = st();
  if (s.default_pools.size() <= static_cast<std::size_t>(device))
    s.default_pools.resize(static_cast<std::size_t>(device) + 1, nullptr);
  auto& p = s.default_pools[static_cast<std::size_t>(device)];
  if (p == nullptr) {
    p = new CUmemPoolHandle_st;
    p->device = device;
    p->is_default = true;
    s.pool_handles.insert(p);
  }
  return p;
}

cudaError_t pool_allocate(void** out, std::size_t n, cudaMemPool_t pool, cudaStream_t h, const char* call) {
  if (out == nullptr) return fail(cudaErrorInvalidValue);
  if (!pool_valid(pool, call)) return fail(cudaErrorInvalidValue);
  CUstream_st* x = resolve(h, call);
  if (x == nullptr) return fail(cudaErrorInvalidResourceHandle);
  if (n == 0) {
    *out = nullptr;
    return cudaSuccess;
  }
  state& s = st();
  enter(x);
  // Reuse a cached block the stream may take: freed on this stream, or ordered after the free (an event, a sync).
  auto& c = pool->cache;
  std::size_t best = c.size();
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (c[i].mapped < n || c[i].mapped > std::max(2 * n, n + (std::size_t{64} << 10))) continue;
    if (c[i].stream != x->id && !ordered(x->clock, c[i].stream, c[i].t)) continue;
    if (best == c.size() || c[i].mapped < c[best].mapped) best = i;
  }
  ++s.alloc_calls;
  if (s.f.fail_alloc_at != 0 && s.alloc_calls == s.f.fail_alloc_at) return fail(cudaErrorMemoryAllocation);
  if (n > s.f.byte_budget || live_total() > s.f.byte_budget - n) return fail(cudaErrorMemoryAllocation);
  std::uintptr_t base = 0;
  std::size_t mapped = 0;
  if (best != c.size()) {
    base = c[best].base;
    mapped = c[best].mapped;
    c.erase(c.begin() + static_cast<std::ptrdiff_t>(best));
    s.freed.erase(base);
  } else {
    mapped = round_page(n);
    if (mapped < n || n > s.f.device_memory || device_used(pool->device) > s.f.device_memory - mapped)
      return fail(cudaErrorMemoryAllocation);
    void* p = map_pages(mapped, kind::pool);
    if (p == nullptr) return fail(cudaErrorMemoryAllocation);
    base = reinterpret_cast<std::uintptr_t>(p);
    pool->reserved += mapped;
    s.device_mapped[pool->device] += mapped;
    pool->reserved_high = std::max(pool->reserved_high, pool->reserved);
  }
  pool->used += mapped;
  pool->used_high = std::max(pool->used_high, pool->used);
  add_live(base, {n, mapped, kind::pool, pool, pool->device});
  issue(x);
  *out = reinterpret_cast<void*>(base);
  return cudaSuccess;
}

// Twins of the API share one body: the named call is counted under its own name.
cudaError_t create_stream(cudaStream_t* out, unsigned flags, const char* call) {
  entry e(call);
  if (e.refusal != cudaSuccess) return e.refusal;
  if (out == nullptr) return fail(cudaErrorInvalidValue);
  CUstream_st* x = new_stream(flags);
  st().stream_handles.insert(x);
  *out = x;
  return cudaSuccess;
}
cudaError_t create_event(cudaEvent_t* out, unsigned flags, const char* call) {
  entry e(call);
  if (e.refusal != cudaSuccess) return e.refusal;
  if (out == nullptr) return fail(cudaErrorInvalidValue);
  auto* v = new CUevent_st;  // never freed: a destroyed handle must stay recognisable
  v->flags = flags;
  v->device = current_device;
  st().event_handles.insert(v);
  *out = v;
  return cudaSuccess;
}
// The host waits for (or, for a query, learns of) everything the stream has been ordered after so far.
cudaError_t host_waits_stream(cudaStream_t h, const char* call) {
  entry e(call);
  if (e.refusal != cudaSuccess) return e.refusal;
  CUstream_st* x = resolve(h, call);
  if (x == nullptr) return fail(cudaErrorInvalidResourceHandle);
  join(st().host, x->clock);  // everything runs at once: the stream is always idle, and the host now knows it
  host_synchronized();
  return cudaSuccess;
}
cudaError_t host_waits_event(cudaEvent_t ev, const char* call) {
  entry e(call);
  if (e.refusal != cudaSuccess) return e.refusal;
  CUevent_st* v = event_valid(ev, call);
  if (v == nullptr) return fail(cudaErrorInvalidResourceHandle);
  join(st().host, v->clock);
  host_synchronized();
  return cudaSuccess;
}
cudaError_t device_pool(cudaMemPool_t* pool, int device, const char* call) {
  entry e(call);
  if (e.refusal != cudaSuccess) return e.refusal;
  if (pool == nullptr || device < 0 || device >= st().f.device_count) return fail(cudaErrorInvalidValue);
  *pool = default_pool(device);
  return cudaSuccess;
}

void report_at_exit() {
  state& s = st();
  std::lock_guard<std::recursive_mutex> g(s.m);
  std::size_t problems = 0;
  for (auto& [b, a] : s.live) {
    if (problems++ < 20)
      std::fprintf(stderr, "alloy CUDA stand-in: leak: %zu bytes of %s at %p, never freed\n", a.size,
                   kind_name(a.k), reinterpret_cast<void*>(b));
  }
  for (auto& v : s.violations) {
    if (problems++ < 40) std::fprintf(stderr, "alloy CUDA stand-in: %s: %s\n", rule_name(v.what), v.text.c_str());
  }
  if (problems != 0) {
    std::fprintf(stderr, "alloy CUDA stand-in: %zu problem(s) at exit: failing the program (exit code 97)\n",
                 problems);
    std::fflush(stderr);
    ::_exit(97);
  }
}

// Registered before any static object of the program is constructed, so the report runs after their destructors.
__attribute__((constructor(101))) void register_report() {
  (void)st();
  std::atexit(report_at_exit);
}

}  // namespace

const char* rule_name(rule r) noexcept {
  switch (r) {
    case rule::leak: return "leak";
    case rule::double_free: return "double free";
    case rule::foreign_free: return "foreign free";
    case rule::wrong_free: return "wrong free call";
    case rule::destroyed_handle: return "destroyed or unknown handle";
    case rule::bad_access: return "bad access";
    case rule::cross_stream_reuse: return "cross-stream reuse without ordering";
    case rule::unordered_free: return "free not ordered after the last use";
  }
  return "?";
}

std::vector<violation> take_violations() {
  std::lock_guard<std::recursive_mutex> g(st().m);
  return std::exchange(st().violations, {});
}
std::size_t count(rule r) {
  std::lock_guard<std::recursive_mutex> g(st().m);
  return static_cast<std::size_t>(std::count_if(st().violations.begin(), st().violations.end(),
                                                 [r](const violation& v) { return v.what == r; }));
}
void set_faults(const faults& f) {
  std::lock_guard<std::recursive_mutex> g(st().m);
  st().f = f;
  st().alloc_calls = 0;
  st().copy_calls = 0;
  if (f.init_error == 0 && last_error != cudaSuccess) last_error = cudaSuccess;
}
faults get_faults() {
  std::lock_guard<std::recursive_mutex> g(st().m);
  return st().f;
}
usage live_bytes() {
  std::lock_guard<std::recursive_mutex> g(st().m);
  usage u;
  for (auto& [b, a] : st().live) {
    switch (a.k) {
      case kind::device: u.device += a.size; break;
      case kind::pinned: u.pinned += a.size; break;
      case kind::managed: u.managed += a.size; break;
      case kind::pool: u.pool += a.size; break;
    }
  }
  for (const void* p : st().pool_handles) u.pool_reserved += static_cast<const CUmemPoolHandle_st*>(p)->reserved;
  return u;
}
std::uint64_t call_count() {
  std::lock_guard<std::recursive_mutex> g(st().m);
  return st().total_calls;
}
std::uint64_t call_count(const char* function) {
  std::lock_guard<std::recursive_mutex> g(st().m);
  auto it = st().calls.find(function);
  return it == st().calls.end() ? 0 : it->second;
}
std::vector<violation> check_leaks() {
  std::lock_guard<std::recursive_mutex> g(st().m);
  std::vector<violation> out;
  for (auto& [b, a] : st().live)
    out.push_back({rule::leak, std::to_string(a.size) + " bytes of " + kind_name(a.k) + " at " +
                                   hex(reinterpret_cast<void*>(b)) + " still allocated"});
  return out;
}

void note_deallocate(const void* p, std::size_t n, CUstream_st* h) {
  std::lock_guard<std::recursive_mutex> g(st().m);
  if (n == 0) return;
  CUstream_st* x = resolve(h, "note_deallocate");
  if (x == nullptr) return;
  enter(x);
  (void)check_free_after_uses(p, n, x, "note_deallocate");
  forget_annotations(p, n);
  const auto lo = reinterpret_cast<std::uintptr_t>(p);
  // The free is a point of its own on x, after everything x is ordered after so far (as cudaFreeAsync's is).
  st().annotations[lo] = {lo + n, x->id, issue(x)};
}

bool note_allocate(const void* p, std::size_t n, CUstream_st* h) {
  std::lock_guard<std::recursive_mutex> g(st().m);
  if (n == 0) return true;
  CUstream_st* x = resolve(h, "note_allocate");
  if (x == nullptr) return false;
  enter(x);
  const auto lo = reinterpret_cast<std::uintptr_t>(p), hi = lo + n;
  auto& m = st().annotations;
  auto it = m.upper_bound(lo);
  if (it != m.begin() && std::prev(it)->second.hi > lo) --it;
  bool ok = true;
  for (; it != m.end() && it->first < hi; ++it) {
    const freed_region& r = it->second;
    if (r.stream != x->id && !ordered(x->clock, r.stream, r.t)) {
      ok = false;
      record(rule::cross_stream_reuse,
             "memory at " + hex(reinterpret_cast<void*>(it->first)) + " (" + std::to_string(r.hi - it->first) +
                 " bytes) freed on stream " + std::to_string(r.stream) + " at its point " + std::to_string(r.t) +
                 " is handed to stream " + std::to_string(x->id) +
                 " with no event or synchronization ordering it after the free");
      break;
    }
  }
  forget_annotations(p, n);
  return ok;
}

void forget_annotations(const void* p, std::size_t n) {
  std::lock_guard<std::recursive_mutex> g(st().m);
  const auto lo = reinterpret_cast<std::uintptr_t>(p);
  range_erase(st().annotations, lo, lo + n);
  range_erase(st().uses, lo, lo + n);
}

}  // namespace alloy::standin

// ---------------------------------------------------------------------------------------------------------------
// The runtime's entry points.
using namespace alloy::standin;

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  entry e("cudaGetDeviceCount", false);
  if (count == nullptr) return fail(cudaErrorInvalidValue);
  *count = 0;
  if (e.refusal != cudaSuccess) return e.refusal;
  if (st().f.device_count <= 0) return fail(cudaErrorNoDevice);
  *count = st().f.device_count;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* device) {
  entry e("cudaGetDevice");
  if (e.refusal != cudaSuccess) return e.refusal;
  if (device == nullptr) return fail(cudaErrorInvalidValue);
  *device = current_device;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  entry e("cudaSetDevice");
  if (e.refusal != cudaSuccess) return e.refusal;
  if (device < 0 || device >= st().f.device_count) return fail(cudaErrorInvalidDevice);
  current_device = device;
  return cudaSuccess;
}
cudaError_t cudaGetLastError(void) {
  entry e("cudaGetLastError", false);
  if (e.refusal != cudaSuccess) return e.refusal;  // without a driver the error stays
  return std::exchange(last_error, cudaSuccess);
}
cudaError_t cudaPeekAtLastError(void) {
  entry e("cudaPeekAtLastError", false);
  return last_error;
}
cudaError_t cudaDriverGetVersion(int* v) {
  entry e("cudaDriverGetVersion", false);
  if (v == nullptr) return fail(cudaErrorInvalidValue);
  *v = st().f.init_error != 0 ? 0 : 13000;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* v) {
  entry e("cudaRuntimeGetVersion", false);
  if (v == nullptr) return fail(cudaErrorInvalidValue);
  *v = 13000;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  entry e("cudaDeviceGetAttribute");
  if (e.refusal != cudaSuccess) return e.refusal;
  if (value == nullptr || device < 0 || device >= st().f.device_count) return fail(cudaErrorInvalidValue);
  *value = (attr == cudaDevAttrMemoryPoolsSupported || attr == cudaDevAttrConcurrentManagedAccess ||
            attr == cudaDevAttrUnifiedAddressing) ? 1 : 0;
  return cudaSuccess;
}
cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total) {
  entry e("cudaMemGetInfo");
  if (e.refusal != cudaSuccess) return e.refusal;
  if (free_bytes == nullptr || total == nullptr) return fail(cudaErrorInvalidValue);
  *total = st().f.device_memory;
  *free_bytes = *total - std::min(*total, device_used(current_device));
  return cudaSuccess;
}

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
#define ALLOY_STANDIN_ERROR(code, text) \
  case code: return #code;
#include "errors.def"
#undef ALLOY_STANDIN_ERROR
    default: return "cudaErrorUnknown";
  }
}
const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
#define ALLOY_STANDIN_ERROR(code, text) \
  case code: return text;
#include "errors.def"
#undef ALLOY_STANDIN_ERROR
    default: return "unrecognized error code";
  }
}

// ---- memory ----
cudaError_t cudaMalloc(void** p, std::size_t n) {
  entry e("cudaMalloc");
  if (e.refusal != cudaSuccess) return e.refusal;
  return allocate(p, n, kind::device, "cudaMalloc");
}
cudaError_t cudaMallocHost(void** p, std::size_t n) {
  entry e("cudaMallocHost");
  if (e.refusal != cudaSuccess) return e.refusal;
  return allocate(p, n, kind::pinned, "cudaMallocHost");
}
cudaError_t cudaMallocManaged(void** p, std::size_t n, unsigned flags) {
  entry e("cudaMallocManaged");
  if (e.refusal != cudaSuccess) return e.refusal;
  if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost) return fail(cudaErrorInvalidValue);
  return allocate(p, n, kind::managed, "cudaMallocManaged");
}
cudaError_t cudaFree(void* p) {
  entry e("cudaFree");
  if (e.refusal != cudaSuccess) return e.refusal;
  synchronize_all();  // cudaFree synchronizes the device
  if (p == nullptr) return cudaSuccess;
  state& s = st();
  auto it = find_for_free(p, "cudaFree");
  if (it == s.live.end()) return fail(cudaErrorInvalidValue);
  if (it->second.k == kind::pool || it->second.k == kind::pinned) {
    record(rule::wrong_free, "cudaFree(" + hex(p) + "): " + kind_name(it->second.k) + " is freed with " +
                                 (it->second.k == kind::pool ? "cudaFreeAsync" : "cudaFreeHost"));
    return fail(cudaErrorInvalidValue);
  }
  const auto base = it->first;
  const allocation a = remove_live(it);
  range_erase(s.uses, base, base + a.mapped);
  retire(base);
  return cudaSuccess;
}
cudaError_t cudaFreeHost(void* p) {
  entry e("cudaFreeHost");
  if (e.refusal != cudaSuccess) return e.refusal;
  if (p == nullptr) return cudaSuccess;
  state& s = st();
  auto it = find_for_free(p, "cudaFreeHost");
  if (it == s.live.end()) return fail(cudaErrorInvalidValue);
  if (it->second.k != kind::pinned) {
    record(rule::wrong_free, "cudaFreeHost(" + hex(p) + "): " + kind_name(it->second.k) + " is not pinned memory");
    return fail(cudaErrorInvalidValue);
  }
  const auto base = it->first;
  const allocation a = remove_live(it);
  range_erase(s.uses, base, base + a.mapped);
  retire(base);
  return cudaSuccess;
}

// ---- pools ----
cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const cudaMemPoolProps* props) {
  entry e("cudaMemPoolCreate");
  if (e.refusal != cudaSuccess) return e.refusal;
  if (pool == nullptr || props == nullptr || props->location.type != cudaMemLocationTypeDevice ||
      props->location.id < 0 || props->location.id >= st().f.device_count)
    return fail(cudaErrorInvalidValue);
  auto* p = new CUmemPoolHandle_st;  // never freed: a destroyed handle must stay recognisable
  p->device = props->location.id;
  st().pool_handles.insert(p);
  *pool = p;
  return cudaSuccess;
}
cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool) {
  entry e("cudaMemPoolDestroy");
  if (e.refusal != cudaSuccess) return e.refusal;
  if (!pool_valid(pool, "cudaMemPoolDestroy")) return fail(cudaErrorInvalidValue);
  if (pool->is_default) return fail(cudaErrorInvalidValue);
  release_cached(pool, 0, false);
  pool->destroyed = true;  // blocks still allocated from it stay valid until freed (CUDA defers the destruction)
  return cudaSuccess;
}
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, std::size_t keep) {
  entry e("cudaMemPoolTrimTo");
  if (e.refusal != cudaSuccess) return e.refusal;
  if (!pool_valid(pool, "cudaMemPoolTrimTo")) return fail(cudaErrorInvalidValue);
  release_cached(pool, keep, true);
  return cudaSuccess;
}
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  entry e("cudaMemPoolSetAttribute");
  if (e.refusal != cudaSuccess) return e.refusal;
  if (!pool_valid(pool, "cudaMemPoolSetAttribute") || value == nullptr) return fail(cudaErrorInvalidValue);
  switch (attr) {
    case cudaMemPoolAttrReleaseThreshold: pool->threshold = *static_cast<std::uint64_t*>(value); return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh: pool->reserved_high = pool->reserved; return cudaSuccess;
    case cudaMemPoolAttrUsedMemHigh: pool->used_high = pool->used; return cudaSuccess;
    case cudaMemPoolReuseFollowEventDependencies:
    case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies: return cudaSuccess;
    default: return fail(cudaErrorInvalidValue);
  }
}
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  entry e("cudaMemPoolGetAttribute");
  if (e.refusal != cudaSuccess) return e.refusal;
  if (!pool_valid(pool, "cudaMemPoolGetAttribute") || value == nullptr) return fail(cudaErrorInvalidValue);
  auto* v = static_cast<std::uint64_t*>(value);
  switch (attr) {
    case cudaMemPoolAttrReleaseThreshold: *v = pool->threshold; return cudaSuccess;
    case cudaMemPoolAttrReservedMemCurrent: *v = pool->reserved; return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh: *v = pool->reserved_high; return cudaSuccess;
    case cudaMemPoolAttrUsedMemCurrent: *v = pool->used; return cudaSuccess;
    case cudaMemPoolAttrUsedMemHigh: *v = pool->used_high; return cudaSuccess;
    case cudaMemPoolReuseFollowEventDependencies:
    case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies: *static_cast<int*>(value) = 1; return cudaSuccess;
    default: return fail(cudaErrorInvalidValue);
  }
}
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  return device_pool(pool, device, "cudaDeviceGetDefaultMemPool");
}
cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int device) {
  return device_pool(pool, device, "cudaDeviceGetMemPool");
}
cudaError_t cudaMallocFromPoolAsync(void** p, std::size_t n, cudaMemPool_t pool, cudaStream_t s) {
  entry e("cudaMallocFromPoolAsync");
  if (e.refusal != cudaSuccess) return e.refusal;
  return pool_allocate(p, n, pool, s, "cudaMallocFromPoolAsync");
}
cudaError_t cudaMallocAsync(void** p, std::size_t n, cudaStream_t s) {
  entry e("cudaMallocAsync");
  if (e.refusal != cudaSuccess) return e.refusal;
  return pool_allocate(p, n, default_pool(current_device), s, "cudaMallocAsync");
}
cudaError_t cudaFreeAsync(void* p, cudaStream_t h) {
  entry e("cudaFreeAsync");
  if (e.refusal != cudaSuccess) return e.refusal;
  CUstream_st* x = resolve(h, "cudaFreeAsync");
  if (x == nullptr) return fail(cudaErrorInvalidResourceHandle);
  if (p == nullptr) return cudaSuccess;
  state& s = st();
  auto it = find_for_free(p, "cudaFreeAsync");
  if (it == s.live.end()) return fail(cudaErrorInvalidValue);
  if (it->second.k != kind::pool) {
    record(rule::wrong_free, "cudaFreeAsync(" + hex(p) + "): " + std::string(kind_name(it->second.k)) +
                                 " is not from a stream-ordered pool");
    return fail(cudaErrorInvalidValue);
  }
  enter(x);
  (void)check_free_after_uses(p, it->second.size, x, "cudaFreeAsync");
  const std::uint64_t t = issue(x);
  cudaMemPool_t pool = it->second.pool;
  const auto base = it->first;
  const std::size_t mapped = remove_live(it).mapped;
  pool->used -= mapped;
  if (pool->destroyed) {
    pool->reserved -= mapped;
    s.device_mapped[pool->device] -= mapped;
    retire(base);
  } else {
    pool->cache.push_back({base, mapped, x->id, t});
  }
  return cudaSuccess;
}

// ---- copies ----
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t n, cudaMemcpyKind, cudaStream_t s) {
  entry e("cudaMemcpyAsync");
  if (e.refusal != cudaSuccess) return e.refusal;
  return do_copy(dst, src, n, s, "cudaMemcpyAsync", false);
}
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t n, cudaMemcpyKind) {
  entry e("cudaMemcpy");
  if (e.refusal != cudaSuccess) return e.refusal;
  return do_copy(dst, src, n, nullptr, "cudaMemcpy", true);
}
cudaError_t cudaMemsetAsync(void* dst, int value, std::size_t n, cudaStream_t s) {
  entry e("cudaMemsetAsync");
  if (e.refusal != cudaSuccess) return e.refusal;
  return do_memset(dst, value, n, s, "cudaMemsetAsync", false);
}
cudaError_t cudaMemset(void* dst, int value, std::size_t n) {
  entry e("cudaMemset");
  if (e.refusal != cudaSuccess) return e.refusal;
  return do_memset(dst, value, n, nullptr, "cudaMemset", true);
}
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attr, const void* p) {
  entry e("cudaPointerGetAttributes");
  if (e.refusal != cudaSuccess) return e.refusal;
  if (attr == nullptr) return fail(cudaErrorInvalidValue);
  *attr = cudaPointerAttributes{};
  auto it = containing(st().live, p);
  if (it == st().live.end()) {
    attr->type = cudaMemoryTypeUnregistered;
    attr->device = -2;
    return cudaSuccess;
  }
  attr->device = it->second.device;
  attr->devicePointer = const_cast<void*>(p);
  switch (it->second.k) {
    case kind::device:
    case kind::pool: attr->type = cudaMemoryTypeDevice; break;
    case kind::pinned: attr->type = cudaMemoryTypeHost; attr->hostPointer = const_cast<void*>(p); break;
    case kind::managed: attr->type = cudaMemoryTypeManaged; attr->hostPointer = const_cast<void*>(p); break;
  }
  return cudaSuccess;
}

// ---- streams ----
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned flags) {
  return create_stream(s, flags, "cudaStreamCreateWithFlags");
}
cudaError_t cudaStreamCreate(cudaStream_t* s) { return create_stream(s, cudaStreamDefault, "cudaStreamCreate"); }
cudaError_t cudaStreamDestroy(cudaStream_t h) {
  entry e("cudaStreamDestroy");
  if (e.refusal != cudaSuccess) return e.refusal;
  if (h == nullptr || h == cudaStreamLegacy || h == cudaStreamPerThread) return fail(cudaErrorInvalidResourceHandle);
  CUstream_st* x = resolve(h, "cudaStreamDestroy");
  if (x == nullptr) return fail(cudaErrorInvalidResourceHandle);
  // Work queued on it still completes; what it ordered stays ordered (clocks are kept, the handle is dead).
  x->destroyed = true;
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t h) { return host_waits_stream(h, "cudaStreamSynchronize"); }
cudaError_t cudaStreamQuery(cudaStream_t h) { return host_waits_stream(h, "cudaStreamQuery"); }
cudaError_t cudaStreamWaitEvent(cudaStream_t h, cudaEvent_t ev, unsigned) {
  entry e("cudaStreamWaitEvent");
  if (e.refusal != cudaSuccess) return e.refusal;
  CUstream_st* x = resolve(h, "cudaStreamWaitEvent");
  if (x == nullptr) return fail(cudaErrorInvalidResourceHandle);
  CUevent_st* v = event_valid(ev, "cudaStreamWaitEvent");
  if (v == nullptr) return fail(cudaErrorInvalidResourceHandle);
  enter(x);
  if (v->recorded) join(x->clock, v->clock);
  issue(x);
  return cudaSuccess;
}
cudaError_t cudaStreamGetId(cudaStream_t h, unsigned long long* id) {
  entry e("cudaStreamGetId");
  if (e.refusal != cudaSuccess) return e.refusal;
  CUstream_st* x = resolve(h, "cudaStreamGetId");
  if (x == nullptr) return fail(cudaErrorInvalidResourceHandle);
  if (id == nullptr) return fail(cudaErrorInvalidValue);
  *id = static_cast<unsigned long long>(x->id);
  return cudaSuccess;
}
cudaError_t cudaStreamGetDevice(cudaStream_t h, int* device) {
  entry e("cudaStreamGetDevice");
  if (e.refusal != cudaSuccess) return e.refusal;
  CUstream_st* x = resolve(h, "cudaStreamGetDevice");
  if (x == nullptr) return fail(cudaErrorInvalidResourceHandle);
  if (device == nullptr) return fail(cudaErrorInvalidValue);
  *device = x->id == 0 ? current_device : x->device;
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize(void) {
  entry e("cudaDeviceSynchronize");
  if (e.refusal != cudaSuccess) return e.refusal;
  synchronize_all();
  return cudaSuccess;
}

// ---- events ----
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* ev, unsigned flags) {
  return create_event(ev, flags, "cudaEventCreateWithFlags");
}
cudaError_t cudaEventCreate(cudaEvent_t* ev) { return create_event(ev, cudaEventDefault, "cudaEventCreate"); }
cudaError_t cudaEventDestroy(cudaEvent_t ev) {
  entry e("cudaEventDestroy");
  if (e.refusal != cudaSuccess) return e.refusal;
  CUevent_st* v = event_valid(ev, "cudaEventDestroy");
  if (v == nullptr) return fail(cudaErrorInvalidResourceHandle);
  v->destroyed = true;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t h) {
  entry e("cudaEventRecord");
  if (e.refusal != cudaSuccess) return e.refusal;
  CUevent_st* v = event_valid(ev, "cudaEventRecord");
  if (v == nullptr) return fail(cudaErrorInvalidResourceHandle);
  CUstream_st* x = resolve(h, "cudaEventRecord");
  if (x == nullptr) return fail(cudaErrorInvalidResourceHandle);
  issue(x);
  v->clock = x->clock;
  v->recorded = true;
  v->when = std::chrono::steady_clock::now();
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t ev) { return host_waits_event(ev, "cudaEventSynchronize"); }
cudaError_t cudaEventQuery(cudaEvent_t ev) { return host_waits_event(ev, "cudaEventQuery"); }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  entry e("cudaEventElapsedTime");
  if (e.refusal != cudaSuccess) return e.refusal;
  CUevent_st* x = event_valid(a, "cudaEventElapsedTime");
  CUevent_st* y = event_valid(b, "cudaEventElapsedTime");
  if (x == nullptr || y == nullptr) return fail(cudaErrorInvalidResourceHandle);
  if (ms == nullptr) return fail(cudaErrorInvalidValue);
  if (!x->recorded || !y->recorded || (x->flags & cudaEventDisableTiming) || (y->flags & cudaEventDisableTiming))
    return fail(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(y->when - x->when).count();
  return cudaSuccess;
}

}  // extern "C"
