#pragma once
/// \file benchmarks/stacks.hpp
/// The stacks under test, one descriptor per stack, and the Mp11 list of stacks each workload runs.
///
/// A descriptor is a struct with
///   `name`     the stack's name: the benchmark is `<workload>/<name>`, and the report's tables show it;
///   `label`    the short name the report uses for it (column headers "vs <label>", goals, the chart), unique;
///   `anchor`   `static constexpr bool`, true for competitors and floors (the report's ratio columns);
///   `make`     `static auto make(std::size_t arena)`, which returns the allocator (a prvalue: guaranteed elision, so
///              immovable std::pmr resources work);
/// and optionally `floor` (true: a hand-written floor, kind "floor" in the tables), `kind` (another kind of row: W3's
/// "bound"s and its "loop"), `malloc` (true: the malloc row, which each malloc binary runs under its own name) and
/// `targets` (the goals the report checks on this stack: `Target` in common.hpp). The allocator speaks alloy's two
/// primitives, `Block allocate(std::size_t)` and `bool deallocate(Block)` (plus `deallocate_all()` for W4); the
/// anchors get thin inline adapters below. `alloy_bench --list-stacks` exports every registered descriptor (name,
/// label, kind, targets) as JSON; tools/bench_report.py stores it with the results and reads labels and goals from it.
///
/// To add a stack: one line in the list of each workload it applies to. `Stack<A, "name", "label">` is the
/// descriptor for any allocator constructible from the arena size (or default-constructible), e.g. (with
/// <alloy/free_list.hpp>)
/// ```
/// using AlloyW12 = mp_list<BitmappedSingle, BitmappedMulti,
///                          Stack<alloy::FreeList<alloy::Mallocator, 64>, "FreeList<Mallocator,64>", "alloy FL 64">>;
/// ```
/// Anything else (a stack over a caller's span, an adapter) gets a small struct with the same members.
/// alloy's blocks are included under __has_include guards; ALLOY_BENCH_NO_BITMAPPED, _NO_REGION and
/// _NO_ALLOCATOR_LIST leave a family out, and ALLOY_BENCH_MALLOC_ONLY all three.
#include "common.hpp"
#include "w3_floor.hpp"

#include <alloy/block.hpp>
#include <alloy/common.hpp>
#include <alloy/mallocator.hpp>

#include <array>
#include <bit>
#include <cstdlib>
#include <memory_resource>
#include <new>
#include <span>
#include <type_traits>
#include <vector>

#include <malloc.h>

#if ALLOY_BENCH_HAVE_FOONATHAN
#include <foonathan/memory/memory_arena.hpp>
#include <foonathan/memory/memory_pool.hpp>
#include <foonathan/memory/memory_stack.hpp>
#endif

#ifndef ALLOY_BENCH_MALLOC_NAME
#define ALLOY_BENCH_MALLOC_NAME "glibc malloc"  // the mimalloc binary links the same code against libmimalloc
#endif

#ifdef ALLOY_BENCH_MALLOC_ONLY
#define ALLOY_BENCH_NO_BITMAPPED 1
#define ALLOY_BENCH_NO_REGION 1
#define ALLOY_BENCH_NO_ALLOCATOR_LIST 1
#endif

#if __has_include(<alloy/bitmapped_block.hpp>) && !defined(ALLOY_BENCH_NO_BITMAPPED)
#include <alloy/bitmapped_block.hpp>
#define ALLOY_BENCH_HAVE_BITMAPPED 1
#else
#define ALLOY_BENCH_HAVE_BITMAPPED 0
#endif
#if __has_include(<alloy/region.hpp>) && !defined(ALLOY_BENCH_NO_REGION)
#include <alloy/region.hpp>
#define ALLOY_BENCH_HAVE_REGION 1
#else
#define ALLOY_BENCH_HAVE_REGION 0
#endif
#if __has_include(<alloy/allocator_list.hpp>) && ALLOY_BENCH_HAVE_BITMAPPED && !defined(ALLOY_BENCH_NO_ALLOCATOR_LIST)
#include <alloy/allocator_list.hpp>
#define ALLOY_BENCH_HAVE_ALLOCATOR_LIST 1
#else
#define ALLOY_BENCH_HAVE_ALLOCATOR_LIST 0
#endif
#ifndef ALLOY_BENCH_MALLOC_ONLY
#include "../examples/general_purpose.hpp"  // the showcase: one type shared with examples/general_purpose.cpp
#endif

namespace alloy_bench {

using boost::mp11::mp_append;
using boost::mp11::mp_list;

/// The names the malloc rows take (ALLOY_BENCH_MALLOC_NAME): glibc's in alloy_bench, and in each alloy_bench_<lib>
/// that benchmarks/CMakeLists.txt builds, the library's name. Targets name those rows through malloc_named().
inline constexpr std::array<const char*, 4> malloc_names = {"glibc malloc", "mimalloc", "jemalloc", "tcmalloc"};
consteval bool same_text(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}
consteval bool is_malloc_name(const char* n) {
  for (const char* m : malloc_names)
    if (same_text(m, n)) return true;
  return false;
}
/// `n`, checked at compile time to be one of malloc_names.
consteval const char* malloc_named(const char* n) {
  if (!is_malloc_name(n)) throw "not one of alloy_bench::malloc_names";
  return n;
}
static_assert(is_malloc_name(ALLOY_BENCH_MALLOC_NAME),
              "ALLOY_BENCH_MALLOC_NAME must be one of alloy_bench::malloc_names (stacks.hpp): add it there");

// =====================================================================================================================
// Adapters: the anchors behind alloy's allocate/deallocate

/// malloc/free (glibc, or mimalloc in alloy_bench_mimalloc).
struct MallocAdapter {
  static constexpr std::size_t alignment = alignof(std::max_align_t);
  Block allocate(std::size_t n) noexcept {
    void* p = std::malloc(n);
    return p ? Block{p, n} : Block{};
  }
  bool deallocate(Block b) noexcept {
    std::free(b.ptr);
    return true;
  }
};

/// malloc/free for W4: malloc has no deallocate_all, so the adapter records every pointer (in a vector reserved
/// before timing) and deallocate_all frees them one by one. That is what a malloc user has to do.
struct MallocTracked : MallocAdapter {
  std::vector<void*> live;
  MallocTracked() { live.reserve(1u << 21); }
  Block allocate(std::size_t n) noexcept {
    Block b = MallocAdapter::allocate(n);
    if (b) live.push_back(b.ptr);
    return b;
  }
  bool deallocate_all() noexcept {
    for (void* p : live) std::free(p);
    live.clear();
    return true;
  }
  ~MallocTracked() { deallocate_all(); }
};

/// A std::pmr::memory_resource held by value; 16-byte alignment (malloc's).
template <class R>
struct PmrAdapter {
  static constexpr std::size_t alignment = alignof(std::max_align_t);
  R r;
  template <class... Args>
  explicit PmrAdapter(Args&&... args) : r(std::forward<Args>(args)...) {}
  Block allocate(std::size_t n) noexcept {
    try {
      return {r.allocate(n, alignment), n};
    } catch (const std::bad_alloc&) {
      return {};
    }
  }
  bool deallocate(Block b) noexcept {
    r.deallocate(b.ptr, b.size, alignment);
    return true;
  }
  bool deallocate_all() noexcept
    requires requires(R& x) { x.release(); }
  {
    r.release();
    return true;
  }
};

/// W4's 256 MiB arena, shared by every stack that works over a caller's span (Region<>, pmr monotonic, foonathan
/// memory_stack, the bump-pointer floor): allocated and touched once per process, before any timing, so that no
/// stack pays the first-touch page faults the others skip.
inline std::span<std::byte> w4_arena(std::size_t size) {
  static std::size_t cap = 0;
  static std::byte* mem = nullptr;
  if (cap < size) {
    std::free(mem);
    mem = static_cast<std::byte*>(std::aligned_alloc(4096, size));
    if (!mem) std::abort();
    std::memset(mem, 0, size);
    cap = size;
  }
  return {mem, size};
}

/// Floors for W1: one cached 64-bit bitmap word over 64 blocks of 64 bytes; the first free bit by std::countr_one.
/// Storage says where the 64 blocks are (`base()`); the allocate/deallocate code is the same for both floors.
template <class Storage>
struct OneWordFloor : Storage {
  static constexpr std::size_t alignment = 64;
  std::uint64_t word = 0;
  using Storage::Storage;
  Block allocate(std::size_t n) noexcept {
    const int i = std::countr_one(word);
    if (i == 64 || n > 64) return {};
    word |= std::uint64_t{1} << i;
    return {this->base() + i * 64, n};
  }
  bool deallocate(Block b) noexcept {
    const auto i = static_cast<unsigned>((static_cast<unsigned char*>(b.ptr) - this->base()) >> 6);
    word &= ~(std::uint64_t{1} << i);
    return true;
  }
};
/// The blocks in an inline array next to the word. The compiler folds deallocate's `(p - mem) >> 6` back into the
/// index it just allocated (the blocks sit at a constant offset from the word), which no allocator over a caller's
/// arena can do.
struct InlineFloorBlocks {
  alignas(64) unsigned char mem[64 * 64];
  unsigned char* base() noexcept { return mem; }
};
/// The first 64 blocks of the W1 arena, held by pointer as any allocator over an arena holds its memory: the floor
/// as docs/workloads.md describes it (14.5 instructions per op there). Both floors are reported.
struct ArenaFloorBlocks {
  unsigned char* mem;
  explicit ArenaFloorBlocks(std::span<std::byte> arena) noexcept
      : mem(reinterpret_cast<unsigned char*>(arena.data())) {}
  unsigned char* base() const noexcept { return mem; }
};
using FloorOneWord = OneWordFloor<InlineFloorBlocks>;
using FloorOneWordArena = OneWordFloor<ArenaFloorBlocks>;

/// Floor for W4: a bump pointer over the span, 16-byte granules.
struct FloorBump {
  static constexpr std::size_t alignment = 16;
  std::byte* begin;
  std::byte* cur;
  std::byte* end;
  explicit FloorBump(std::span<std::byte> s) : begin(s.data()), cur(s.data()), end(s.data() + s.size()) {}
  Block allocate(std::size_t n) noexcept {
    const std::size_t r = (n + 15) & ~std::size_t{15};
    if (r > static_cast<std::size_t>(end - cur)) return {};
    std::byte* p = cur;
    cur += r;
    return {p, n};
  }
  bool deallocate_all() noexcept {
    cur = begin;
    return true;
  }
};

#if ALLOY_BENCH_HAVE_FOONATHAN
namespace fm = foonathan::memory;

/// foonathan::memory::memory_pool<node_pool> of 64-byte nodes, sized to hold `arena / 64` nodes in one block.
struct FoonathanPoolAdapter {
  static constexpr std::size_t alignment = 16;
  fm::memory_pool<fm::node_pool> pool;
  explicit FoonathanPoolAdapter(std::size_t arena) : pool(64, fm::memory_pool<fm::node_pool>::min_block_size(64, arena / 64)) {}
  Block allocate(std::size_t n) noexcept {
    if (n > 64) return {};
    try {
      return {pool.allocate_node(), n};
    } catch (...) {
      return {};
    }
  }
  bool deallocate(Block b) noexcept {
    pool.deallocate_node(b.ptr);
    return true;
  }
};

/// A foonathan BlockAllocator that hands out one caller span (the W4 arena) as its only block.
class SpanBlockAllocator {
 public:
  SpanBlockAllocator(std::size_t /*block_size*/, std::span<std::byte> s) noexcept : s_(s) {}
  fm::memory_block allocate_block() {
    if (given_) throw std::bad_alloc();
    given_ = true;
    return {s_.data(), s_.size()};
  }
  void deallocate_block(fm::memory_block) noexcept { given_ = false; }
  std::size_t next_block_size() const noexcept { return s_.size(); }

 private:
  std::span<std::byte> s_;
  bool given_ = false;
};

/// foonathan::memory::memory_stack over the W4 arena; deallocate_all unwinds to the marker taken at construction.
struct FoonathanStackAdapter {
  static constexpr std::size_t alignment = 16;
  fm::memory_stack<SpanBlockAllocator> stack;
  fm::memory_stack<SpanBlockAllocator>::marker start;
  explicit FoonathanStackAdapter(std::span<std::byte> s) : stack(s.size(), s), start(stack.top()) {}
  Block allocate(std::size_t n) noexcept {
    void* p = stack.try_allocate(n, 16);
    return p ? Block{p, n} : Block{};
  }
  bool deallocate_all() noexcept {
    stack.unwind(start);
    return true;
  }
};
#endif

// =====================================================================================================================
// The one-line descriptor

/// A string usable as a template argument (the stack's name).
template <std::size_t N>
struct FixedString {
  char s[N];
  constexpr FixedString(const char (&a)[N]) noexcept {  // NOLINT(google-explicit-constructor): Stack<A, "name">
    for (std::size_t i = 0; i < N; ++i) s[i] = a[i];
  }
};

/// `Stack<A, "name", "label">`: a descriptor for any allocator A constructible from the workload's arena size in
/// bytes (a capacity, as `BitmappedBlock<64, 64, Mallocator>(1 << 20)`) or, failing that, default-constructible
/// (stateless parents, a list that grows on demand). With it, adding a stack to a workload is one line in that
/// workload's list: `Stack<alloy::FreeList<alloy::Mallocator, 64>, "FreeList<Mallocator,64>", "alloy FL 64">`.
/// A stack with targets derives from it and adds `static constexpr std::array targets`.
template <class A, FixedString Name, FixedString Label, bool Anchor = false>
struct Stack {
  static constexpr const char* name = Name.s;
  static constexpr const char* label = Label.s;
  static constexpr bool anchor = Anchor;
  static auto make(std::size_t arena) {
    if constexpr (std::is_constructible_v<A, std::size_t>) return A(arena);
    else return A{};
  }
};

// =====================================================================================================================
// Descriptors: anchors

struct GlibcMalloc {
  static constexpr const char* name = ALLOY_BENCH_MALLOC_NAME;
  static constexpr const char* label = ALLOY_BENCH_MALLOC_NAME;
  static constexpr bool anchor = true;
  static constexpr bool malloc = true;
  static auto make(std::size_t) { return MallocAdapter{}; }
};
struct GlibcMallocTracked {  // W4
  static constexpr const char* name = ALLOY_BENCH_MALLOC_NAME;
  static constexpr const char* label = ALLOY_BENCH_MALLOC_NAME;
  static constexpr bool anchor = true;
  static constexpr bool malloc = true;
  static auto make(std::size_t) { return MallocTracked{}; }
};
struct PmrUnsyncPool {
  static constexpr const char* name = "std::pmr::unsynchronized_pool_resource";
  static constexpr const char* label = "pmr unsync pool";
  static constexpr bool anchor = true;
  static auto make(std::size_t) { return PmrAdapter<std::pmr::unsynchronized_pool_resource>{}; }
};
struct PmrSyncPool {
  static constexpr const char* name = "std::pmr::synchronized_pool_resource";
  static constexpr const char* label = "pmr sync pool";
  static constexpr bool anchor = true;
  static auto make(std::size_t) { return PmrAdapter<std::pmr::synchronized_pool_resource>{}; }
};
struct PmrMonotonic {
  static constexpr const char* name = "std::pmr::monotonic_buffer_resource";
  static constexpr const char* label = "pmr monotonic";
  static constexpr bool anchor = true;
  static auto make(std::size_t arena) {
    auto s = w4_arena(arena);
    return PmrAdapter<std::pmr::monotonic_buffer_resource>(s.data(), s.size(), std::pmr::null_memory_resource());
  }
};
struct FloorWord {
  static constexpr const char* name = "floor: one bitmap word";
  static constexpr const char* label = "floor (1 word)";
  static constexpr bool anchor = true;
  static constexpr bool floor = true;
  static auto make(std::size_t) { return FloorOneWord{}; }
};
struct FloorWordArena {
  static constexpr const char* name = "floor: one bitmap word over the arena";
  static constexpr const char* label = "floor (1 word, arena)";
  static constexpr bool anchor = true;
  static constexpr bool floor = true;
  static auto make(std::size_t arena) { return FloorOneWordArena(w4_arena(arena)); }
};
/// W3's null row: every request gets the same static buffer and nothing is kept, so the row measures W3's loop alone
/// (the generator, the slot loads, the 50% branch on the slot, the byte write, the sink). The buffer is reached
/// through a member, as any allocator reaches its memory. Every W3 stack is reported gross and net of this row.
struct NullLoopAllocator {
  static constexpr std::size_t alignment = 64;
  alignas(64) static inline unsigned char buffer[512];
  unsigned char* p = buffer;
  Block allocate(std::size_t n) noexcept { return {p, n}; }
  bool deallocate(Block) noexcept { return true; }
};
struct NullLoop {
  static constexpr const char* name = "null: one static buffer (the loop alone)";
  static constexpr const char* label = "null (loop)";
  static constexpr const char* kind = "loop";
  static auto make(std::size_t) { return NullLoopAllocator{}; }
};

/// W3's design floor (w3_floor.hpp): BitmappedBlock's search structure and exact first fit with nothing else.
struct FloorSummaryFirstFit : Stack<SummaryFirstFitFloor, "floor: first fit over summary bytes", "floor (summary)", true> {
  static constexpr bool floor = true;
};
struct FloorBumpPointer {
  static constexpr const char* name = "floor: bump pointer";
  static constexpr const char* label = "floor (bump)";
  static constexpr bool anchor = true;
  static constexpr bool floor = true;
  static auto make(std::size_t arena) { return FloorBump(w4_arena(arena)); }
};
/// foonathan's descriptors without make(): declared in every build, so that targets can name them; a build without
/// foonathan::memory lists them as not built (`alloy_bench --list-stacks`).
struct FoonathanPoolInfo {
  static constexpr const char* name = "foonathan memory_pool";
  static constexpr const char* label = "foonathan pool";
  static constexpr bool anchor = true;
};
struct FoonathanStackInfo {
  static constexpr const char* name = "foonathan memory_stack";
  static constexpr const char* label = "foonathan stack";
  static constexpr bool anchor = true;
};
using FoonathanInfos = mp_list<FoonathanPoolInfo, FoonathanStackInfo>;
#if ALLOY_BENCH_HAVE_FOONATHAN
struct FoonathanPool : FoonathanPoolInfo {
  static auto make(std::size_t arena) { return FoonathanPoolAdapter(arena); }
};
struct FoonathanStack : FoonathanStackInfo {
  static auto make(std::size_t arena) { return FoonathanStackAdapter(w4_arena(arena)); }
};
using FoonathanW12 = mp_list<FoonathanPool>;
using FoonathanW4 = mp_list<FoonathanStack>;
#else
using FoonathanW12 = mp_list<>;
using FoonathanW4 = mp_list<>;
#endif

// =====================================================================================================================
// Descriptors: alloy's stacks

#if ALLOY_BENCH_HAVE_BITMAPPED
/// BitmappedBlock's goals on W1 and W2 (docs/bitmapped_block.md), for both Multiblock modes.
inline constexpr Target bb_w1_floor_arena{
    .workload = "W1", .check = "instructions_at_most",
    .goal = "W1 {label}: <= 1.2x the instructions/op of the one-word floor over the arena",
    .of = {FloorWordArena::name}, .factor = {1.2}};
inline constexpr Target bb_w1_floor_inline{
    .workload = "W1", .check = "instructions_at_most",
    .goal = "W1 {label}: <= 1.2x the instructions/op of the one-word floor over an inline array",
    .of = {FloorWord::name}, .factor = {1.2}};
inline constexpr Target bb_w1_faster{.workload = "W1", .check = "faster_than",
                                     .goal = "W1 {label}: faster than foonathan memory_pool and glibc malloc",
                                     .of = {FoonathanPoolInfo::name, malloc_named("glibc malloc")}};
inline constexpr Target bb_w2_faster{
    .workload = "W2", .check = "faster_than",
    .goal = "W2 {label}: faster than glibc, pmr unsync pool, foonathan pool",
    .of = {malloc_named("glibc malloc"), PmrUnsyncPool::name, FoonathanPoolInfo::name}};
struct BitmappedSingle : Stack<alloy::BitmappedBlock<64, 64, alloy::Mallocator, alloy::Multiblock::no>,
                               "BitmappedBlock<64,64,Mallocator,Multiblock::no>", "alloy BB single"> {
  static constexpr std::array targets = {bb_w1_floor_arena, bb_w1_floor_inline, bb_w1_faster, bb_w2_faster};
};
struct BitmappedMulti
    : Stack<alloy::BitmappedBlock<64, 64, alloy::Mallocator>, "BitmappedBlock<64,64,Mallocator>", "alloy BB multi"> {
  static constexpr std::array targets = {
      bb_w1_floor_arena, bb_w1_floor_inline, bb_w1_faster, bb_w2_faster,
      Target{.workload = "W3", .check = "faster_than",
             .goal = "W3 {label}: faster than glibc malloc and pmr unsync pool (foonathan pool: fixed size, n/a)",
             .of = {malloc_named("glibc malloc"), PmrUnsyncPool::name}},
      // over the W3@<arena> rows (W3ArenaStacks)
      Target{.workload = "W3", .check = "arena_sweep", .goal = "W3 arena 1 -> 256 MiB: ns/op within 1.5x",
             .factor = {1.5}}};
};
struct SharedBitmappedSingle : Stack<alloy::SharedBitmappedBlock<64, 64, alloy::Mallocator, alloy::Multiblock::no>,
                                     "SharedBitmappedBlock<64,64,Mallocator,Multiblock::no>", "alloy SharedBB single"> {
  static constexpr std::array targets = {
      Target{.workload = "W5", .check = "faster_than",
             .goal = "W5 {label}: faster than pmr sync pool, within 1.5x of glibc",
             .of = {PmrSyncPool::name, malloc_named("glibc malloc")}, .factor = {1, 1.5}}};
};
using SharedBitmappedMulti = Stack<alloy::SharedBitmappedBlock<64, 64, alloy::Mallocator>,
                                   "SharedBitmappedBlock<64,64,Mallocator>", "alloy SharedBB multi">;
using AlloyW12 = mp_list<BitmappedSingle, BitmappedMulti>;
using AlloyW3 = mp_list<BitmappedMulti>;
using AlloyW5 = mp_list<SharedBitmappedSingle, SharedBitmappedMulti>;
#else
using AlloyW12 = mp_list<>;
using AlloyW3 = mp_list<>;
using AlloyW5 = mp_list<>;
#endif

#ifndef ALLOY_BENCH_MALLOC_ONLY
/// The showcase, a general-purpose allocator in one type (examples/general_purpose.hpp, docs/cookbook.md): 20 size
/// classes (16-byte steps to 128, 32-byte steps to 512) whose lists borrow from larger classes (up to 1.2x, any larger
/// before a region is added), over 16 KiB regions aligned to 16 KiB with a capacity map each, malloc above 512 bytes.
inline constexpr char GeneralPurposeName[] =
    "GeneralPurpose (20 classes borrowing up to 1.2x, capacity map per 16 KiB region, malloc above 512 B)";
struct GeneralPurposeStack {
  static constexpr const char* name = GeneralPurposeName;
  static constexpr const char* label = "alloy GeneralPurpose";
  static constexpr bool anchor = false;
  static auto make(std::size_t) { return alloy_examples::GeneralPurpose<>{}; }
  /// The showcase's goals (docs/cookbook.md section 7): W3 net of the loop against the mallocs, in time and in
  /// instructions; W6's peak held against glibc's (GeneralPurposeW6 in w6_list_steady.cpp, the same name); every
  /// shipped trace against glibc malloc (alloy-replay's rows of the same name, benchmarks/replay/stacks.hpp).
  static constexpr std::array targets = {
      Target{.workload = "W3", .check = "net_ns_at_most",
             .goal = "W3 GeneralPurpose, net of the loop, ns/op (this run): at most 0.5x mimalloc's",
             .of = {malloc_named("mimalloc")}, .factor = {0.5}},
      Target{.workload = "W3", .check = "net_ns_below",
             .goal = "W3 GeneralPurpose, net of the loop, ns/op (this run): below glibc, jemalloc and tcmalloc "
                     "(those installed)",
             .of = {malloc_named("glibc malloc"), malloc_named("jemalloc"), malloc_named("tcmalloc")}},
      Target{.workload = "W3", .check = "net_instructions_at_most",
             .goal = "W3 GeneralPurpose, net of the loop, instructions/op (callgrind): at most 0.5x mimalloc's",
             .of = {malloc_named("mimalloc")}, .factor = {0.5}},
      Target{.workload = "W3", .check = "net_instructions_below",
             .goal = "W3 GeneralPurpose, net of the loop, instructions/op (callgrind): below glibc, jemalloc and "
                     "tcmalloc (those installed)",
             .of = {malloc_named("glibc malloc"), malloc_named("jemalloc"), malloc_named("tcmalloc")}},
      Target{.workload = "W6", .check = "peak_held_at_most",
             .goal = "W6 GeneralPurpose: peak bytes held from the system at most glibc malloc's",
             .of = {malloc_named("glibc malloc")}},
      Target{.workload = "replay", .check = "replay_faster_than",
             .goal = "replay {trace}: GeneralPurpose faster than glibc malloc (peak held beside)",
             .of = {malloc_named("glibc malloc")}}};
};
/// The first showcase, kept for comparison (examples/general_purpose.hpp, GeneralPurposeFixedClasses): 32 classes of
/// 16 bytes without borrowing, as Bucketizer<FreeList> over an AllocatorList of 32 KiB Regions.
inline constexpr char GeneralPurposeFixedName[] =
    "GeneralPurposeFixedClasses (size-class free lists over regions, malloc above 512 B)";
struct GeneralPurposeFixedStack {
  static constexpr const char* name = GeneralPurposeFixedName;
  static constexpr const char* label = "alloy GP fixed classes";
  static constexpr bool anchor = false;
  static auto make(std::size_t) { return alloy_examples::GeneralPurposeFixedClasses<>{}; }
};
/// The variants with memory that goes back (examples/general_purpose.hpp, GeneralPurposeBitmapped): at most K blocks
/// cached per size class over an AllocatorList of BitmappedBlock<16> chunks; K = 0: no free lists. Measured for W6's
/// target (docs/cookbook.md, section 7).
inline constexpr char GpbName0[] = "GeneralPurposeBitmapped<K=0> (BitmappedBlock<16> chunks of 64 KiB, no lists)";
inline constexpr char GpbName4[] = "GeneralPurposeBitmapped<K=4> (4-node lists over BitmappedBlock<16> chunks)";
inline constexpr char GpbName8[] = "GeneralPurposeBitmapped<K=8> (8-node lists over BitmappedBlock<16> chunks)";
inline constexpr char GpbName16[] = "GeneralPurposeBitmapped<K=16> (16-node lists over BitmappedBlock<16> chunks)";
inline constexpr char GpbName32[] = "GeneralPurposeBitmapped<K=32> (32-node lists over BitmappedBlock<16> chunks)";
inline constexpr char GpbLabel0[] = "alloy GPB K=0", GpbLabel4[] = "alloy GPB K=4", GpbLabel8[] = "alloy GPB K=8",
                      GpbLabel16[] = "alloy GPB K=16", GpbLabel32[] = "alloy GPB K=32";
template <std::size_t K>
inline constexpr const char* gpb_label = K == 0 ? GpbLabel0 : K == 4 ? GpbLabel4 : K == 8 ? GpbLabel8
                                         : K == 16 ? GpbLabel16 : K == 32 ? GpbLabel32 : nullptr;
template <std::size_t K, const char* Name, class Parent = alloy::AlignedMallocator>
struct GeneralPurposeBitmappedStack {
  static constexpr const char* name = Name;
  static constexpr const char* label = gpb_label<K>;
  static constexpr bool anchor = false;
  static auto make(std::size_t) { return alloy_examples::GeneralPurposeBitmapped<Parent, K>{}; }
};
template <template <std::size_t, const char*> class S>
using GeneralPurposeBitmappedVariants =
    mp_list<S<0, GpbName0>, S<4, GpbName4>, S<8, GpbName8>, S<16, GpbName16>, S<32, GpbName32>>;
template <std::size_t K, const char* Name>
using GpbW3 = GeneralPurposeBitmappedStack<K, Name>;
#endif

#if ALLOY_BENCH_HAVE_REGION
struct RegionOverSpan {
  static constexpr const char* name = "Region<> over a span";
  static constexpr const char* label = "alloy Region<>";
  static constexpr bool anchor = false;
  static auto make(std::size_t arena) { return alloy::Region<>(w4_arena(arena)); }
  /// Region's goals (docs/region.md). W4's time is mostly the memory traffic of the byte written into every fresh
  /// block: gaps of a few percent are within its run-to-run noise, so 10% is "within noise" and the instruction
  /// counts are shown beside the times.
  static constexpr std::array targets = {
      Target{.workload = "W4", .check = "instructions_at_most",
             .goal = "W4 Region<>: <= 1.05x the bump pointer's instructions/op", .of = {FloorBumpPointer::name},
             .factor = {1.05}},
      Target{.workload = "W4", .check = "faster_than",
             .goal = "W4 Region<>: faster than pmr monotonic, at least as fast as foonathan memory_stack",
             .of = {PmrMonotonic::name, FoonathanStackInfo::name}, .noise = 1.10, .with_instructions = true}};
};
using AlloyW4 = mp_list<RegionOverSpan>;
#else
using AlloyW4 = mp_list<>;
#endif

// =====================================================================================================================
// The lists: what each workload runs (anchors first, then alloy's stacks)

#ifdef ALLOY_BENCH_MALLOC_ONLY  // alloy_bench_mimalloc: the malloc rows only
using W1Stacks = mp_list<GlibcMalloc>;
using W2Stacks = mp_list<GlibcMalloc>;
using W3Stacks = mp_list<GlibcMalloc>;
using W3ArenaStacks = mp_list<>;
using W4Stacks = mp_list<GlibcMallocTracked>;
using W5Stacks = mp_list<GlibcMalloc>;
#else
using W1Stacks = mp_append<mp_list<GlibcMalloc, PmrUnsyncPool>, FoonathanW12, mp_list<FloorWord, FloorWordArena>, AlloyW12>;
using W2Stacks = mp_append<mp_list<GlibcMalloc, PmrUnsyncPool>, FoonathanW12, AlloyW12>;
using W3Stacks = mp_append<mp_list<GlibcMalloc, PmrUnsyncPool, FloorSummaryFirstFit, NullLoop>, AlloyW3,
                           mp_list<GeneralPurposeStack, GeneralPurposeFixedStack>,
                           GeneralPurposeBitmappedVariants<GpbW3>>;
/// W3 again at 1, 4, 64 and 256 MiB arenas: the first-fit search must not slow down with the arena (issue 3).
using W3ArenaStacks = AlloyW3;
using W4Stacks = mp_append<mp_list<GlibcMallocTracked, PmrMonotonic>, FoonathanW4, mp_list<FloorBumpPointer>, AlloyW4>;
using W5Stacks = mp_append<mp_list<GlibcMalloc, PmrSyncPool>, AlloyW5>;
#endif

}  // namespace alloy_bench
