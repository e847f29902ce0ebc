// The concepts, checked with near-miss types (cccl style): each type below differs from a valid allocator or a valid
// primitive in one way, and must not satisfy the concept.
#include <alloy/concepts.hpp>

#include <alloy/aligned_mallocator.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/mmap_allocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/null_allocator.hpp>

#include <string_view>

#include <doctest/doctest.h>

#include "support/test_allocators.hpp"

using alloy::Block;
using alloy::stream_view;
using alloy::Ternary;
using std::size_t;

// ---------------------------------------------------------------------------------------------------------------
// allocator

struct Minimal {
  static constexpr size_t alignment = 16;
  Block allocate(size_t) noexcept { return {}; }
};
static_assert(alloy::allocator<Minimal>);
static_assert(alloy::allocator<const alloy::Mallocator>);  // const primitives: a const object allocates

struct ConstOnly {  // allocate callable on a const object only is still callable on A&
  static constexpr size_t alignment = 1;
  Block allocate(size_t) const noexcept { return {}; }
};
static_assert(alloy::allocator<ConstOnly>);

struct NoAlignment {
  Block allocate(size_t) noexcept { return {}; }
};
struct ZeroAlignment {
  static constexpr size_t alignment = 0;
  Block allocate(size_t) noexcept { return {}; }
};
struct NonPowerOfTwoAlignment {
  static constexpr size_t alignment = 24;
  Block allocate(size_t) noexcept { return {}; }
};
struct NegativeAlignment {  // -16 does not convert to size_t in a constant expression (narrowing)
  static constexpr int alignment = -16;
  Block allocate(size_t) noexcept { return {}; }
};
struct FloatingAlignment {
  static constexpr double alignment = 16.0;
  Block allocate(size_t) noexcept { return {}; }
};
struct NonConstexprAlignment {
  static inline size_t alignment = 16;
  Block allocate(size_t) noexcept { return {}; }
};
struct NonStaticAlignment {
  size_t alignment = 16;
  Block allocate(size_t) noexcept { return {}; }
};
struct AlignmentFunction {
  static constexpr size_t alignment() { return 16; }
  Block allocate(size_t) noexcept { return {}; }
};
struct AllocateNotNoexcept {
  static constexpr size_t alignment = 16;
  Block allocate(size_t) { return {}; }
};
struct AllocateReturnsPointer {
  static constexpr size_t alignment = 16;
  void* allocate(size_t) noexcept { return nullptr; }
};
struct DerivedBlock : Block {};
struct AllocateReturnsDerived {  // exactly Block, not something convertible to it
  static constexpr size_t alignment = 16;
  DerivedBlock allocate(size_t) noexcept { return {}; }
};
struct AllocateReturnsReference {
  static constexpr size_t alignment = 16;
  Block b;
  Block& allocate(size_t) noexcept { return b; }
};
struct AllocateTwoParameters {
  static constexpr size_t alignment = 16;
  Block allocate(size_t, size_t) noexcept { return {}; }
};
struct AllocateNoParameter {
  static constexpr size_t alignment = 16;
  Block allocate() noexcept { return {}; }
};
struct AllocateDeleted {
  static constexpr size_t alignment = 16;
  Block allocate(size_t) noexcept = delete;
};
class AllocatePrivate {
  Block allocate(size_t) noexcept { return {}; }

 public:
  static constexpr size_t alignment = 16;
};
struct AllocateRvalueOnly {  // cannot be called on an lvalue allocator
  static constexpr size_t alignment = 16;
  Block allocate(size_t) && noexcept { return {}; }
};
struct NoAllocate {
  static constexpr size_t alignment = 16;
  Block aligned_allocate(size_t, size_t) noexcept { return {}; }
};

static_assert(!alloy::allocator<NoAlignment>);
static_assert(!alloy::allocator<ZeroAlignment>);
static_assert(!alloy::allocator<NonPowerOfTwoAlignment>);
static_assert(!alloy::allocator<NegativeAlignment>);
static_assert(!alloy::allocator<FloatingAlignment>);
static_assert(!alloy::allocator<NonConstexprAlignment>);
static_assert(!alloy::allocator<NonStaticAlignment>);
static_assert(!alloy::allocator<AlignmentFunction>);
static_assert(!alloy::allocator<AllocateNotNoexcept>);
static_assert(!alloy::allocator<AllocateReturnsPointer>);
static_assert(!alloy::allocator<AllocateReturnsDerived>);
static_assert(!alloy::allocator<AllocateReturnsReference>);
static_assert(!alloy::allocator<AllocateTwoParameters>);
static_assert(!alloy::allocator<AllocateNoParameter>);
static_assert(!alloy::allocator<AllocateDeleted>);
static_assert(!alloy::allocator<AllocatePrivate>);
static_assert(!alloy::allocator<AllocateRvalueOnly>);
static_assert(!alloy::allocator<NoAllocate>);
static_assert(!alloy::allocator<int> && !alloy::allocator<void> && !alloy::allocator<Block>);

// ---------------------------------------------------------------------------------------------------------------
// has_<primitive>: a type with every primitive, spelled right, satisfies them all...

struct Full : alloy::test::EveryPrimitive<16, alloy::MemorySpace::managed> {
  static const Full instance;
};
inline const Full Full::instance{};
static_assert(alloy::has_aligned_allocate<Full> && alloy::has_allocate_all<Full> && alloy::has_allocate_fresh<Full>);
static_assert(alloy::has_expand<Full> && alloy::has_reallocate<Full> && alloy::has_aligned_reallocate<Full>);
static_assert(alloy::has_owns<Full> && alloy::has_resolve_internal_pointer<Full> && alloy::has_deallocate<Full>);
static_assert(alloy::has_deallocate_all<Full> && alloy::has_empty<Full> && alloy::has_good_alloc_size<Full>);
static_assert(alloy::has_instance<Full> && alloy::has_stream_ordered<Full> && alloy::has_copy<Full>);
static_assert(alloy::stateless_allocator<Full>);

// ... and the minimal allocator none of them.
static_assert(!alloy::has_aligned_allocate<Minimal> && !alloy::has_allocate_all<Minimal> &&
              !alloy::has_allocate_fresh<Minimal> && !alloy::has_expand<Minimal> && !alloy::has_reallocate<Minimal> &&
              !alloy::has_aligned_reallocate<Minimal> && !alloy::has_owns<Minimal> &&
              !alloy::has_resolve_internal_pointer<Minimal> && !alloy::has_deallocate<Minimal> &&
              !alloy::has_deallocate_all<Minimal> && !alloy::has_empty<Minimal> &&
              !alloy::has_good_alloc_size<Minimal> &&
              !alloy::has_instance<Minimal> && !alloy::has_stream_ordered<Minimal> && !alloy::has_copy<Minimal>);

// Near misses, one primitive at a time: Minimal plus one wrongly spelled member.
// Each stays an allocator, so the primitive alone is what the concept rejects.
#define NEAR_MISS(Name, ...)   \
  struct Name : Minimal {      \
    using Minimal::allocate;   \
    __VA_ARGS__                \
  };                           \
  static_assert(alloy::allocator<Name>)
NEAR_MISS(DeallocateNotNoexcept, bool deallocate(Block) { return true; });
NEAR_MISS(DeallocateReturnsVoid, void deallocate(Block) noexcept {});
NEAR_MISS(DeallocateTakesPointer, bool deallocate(void*) noexcept { return true; });
NEAR_MISS(DeallocateTakesLvalueRef, bool deallocate(Block&) noexcept { return true; });  // deallocate({}) fails
NEAR_MISS(DeallocateTakesSize, bool deallocate(Block, size_t) noexcept { return true; });
NEAR_MISS(OwnsReturnsBool, bool owns(Block) noexcept { return true; });
NEAR_MISS(OwnsNotNoexcept, Ternary owns(Block) { return Ternary::no; });
NEAR_MISS(OwnsTakesLvalueRef, Ternary owns(Block&) noexcept { return Ternary::no; });
NEAR_MISS(ExpandTakesValue, bool expand(Block, size_t) noexcept { return false; });  // cannot report the new size
NEAR_MISS(ExpandTakesConstRef, bool expand(const Block&, size_t) noexcept { return false; });
NEAR_MISS(ExpandReturnsVoid, void expand(Block&, size_t) noexcept {});
NEAR_MISS(ExpandNotNoexcept, bool expand(Block&, size_t) { return false; });
NEAR_MISS(ReallocateTakesValue, bool reallocate(Block, size_t) noexcept { return false; });
NEAR_MISS(ReallocateReturnsBlock, Block reallocate(Block&, size_t) noexcept { return {}; });
NEAR_MISS(ReallocateNotNoexcept, bool reallocate(Block&, size_t) { return false; });
NEAR_MISS(AlignedReallocateTakesValue, bool aligned_reallocate(Block, size_t, size_t) noexcept { return false; });
NEAR_MISS(AlignedReallocateTwoParameters, bool aligned_reallocate(Block&, size_t) noexcept { return false; });
NEAR_MISS(AlignedAllocateOneParameter, Block aligned_allocate(size_t) noexcept { return {}; });
NEAR_MISS(AlignedAllocateNotNoexcept, Block aligned_allocate(size_t, size_t) { return {}; });
NEAR_MISS(AllocateAllTakesSize, Block allocate_all(size_t) noexcept { return {}; });
NEAR_MISS(AllocateAllNotNoexcept, Block allocate_all() { return {}; });
NEAR_MISS(AllocateFreshReturnsPointer, void* allocate_fresh(size_t) noexcept { return nullptr; });
NEAR_MISS(ResolveTakesValue, Ternary resolve_internal_pointer(const void*, Block) noexcept { return Ternary::no; });
NEAR_MISS(ResolveReturnsBool, bool resolve_internal_pointer(const void*, Block&) noexcept { return false; });
NEAR_MISS(ResolveTakesMutablePointer, Ternary resolve_internal_pointer(void*, Block&) noexcept { return Ternary::no; });
NEAR_MISS(DeallocateAllReturnsVoid, void deallocate_all() noexcept {});
NEAR_MISS(DeallocateAllNotNoexcept, bool deallocate_all() { return true; });
NEAR_MISS(EmptyReturnsBool, bool empty() noexcept { return true; });
NEAR_MISS(EmptyNotNoexcept, Ternary empty() { return Ternary::yes; });
NEAR_MISS(GoodAllocSizeReturnsInt, int good_alloc_size(size_t) noexcept { return 0; });
NEAR_MISS(GoodAllocSizeNotNoexcept, size_t good_alloc_size(size_t n) { return n; });
NEAR_MISS(InstanceOfOtherType, static const int instance = 0;);
NEAR_MISS(StreamAllocateOnly, Block allocate(stream_view, size_t) noexcept { return {}; });
NEAR_MISS(StreamOrderReversed, Block allocate(size_t, stream_view) noexcept { return {}; }
          bool deallocate(Block, stream_view) noexcept { return true; });
NEAR_MISS(CopyWithoutStream, bool copy(void*, const void*, size_t) noexcept { return true; });
NEAR_MISS(CopyNotNoexcept, bool copy(void*, const void*, size_t, stream_view) { return true; });
#undef NEAR_MISS

static_assert(!alloy::has_deallocate<DeallocateNotNoexcept>);
static_assert(!alloy::has_deallocate<DeallocateReturnsVoid>);
static_assert(!alloy::has_deallocate<DeallocateTakesPointer>);
static_assert(!alloy::has_deallocate<DeallocateTakesLvalueRef>);
static_assert(!alloy::has_deallocate<DeallocateTakesSize>);
static_assert(!alloy::has_owns<OwnsReturnsBool>);
static_assert(!alloy::has_owns<OwnsNotNoexcept>);
static_assert(!alloy::has_owns<OwnsTakesLvalueRef>);
static_assert(!alloy::has_expand<ExpandTakesValue>);
static_assert(!alloy::has_expand<ExpandTakesConstRef>);
static_assert(!alloy::has_expand<ExpandReturnsVoid>);
static_assert(!alloy::has_expand<ExpandNotNoexcept>);
static_assert(!alloy::has_reallocate<ReallocateTakesValue>);
static_assert(!alloy::has_reallocate<ReallocateReturnsBlock>);
static_assert(!alloy::has_reallocate<ReallocateNotNoexcept>);
static_assert(!alloy::has_aligned_reallocate<AlignedReallocateTakesValue>);
static_assert(!alloy::has_aligned_reallocate<AlignedReallocateTwoParameters>);
static_assert(!alloy::has_aligned_allocate<AlignedAllocateOneParameter>);
static_assert(!alloy::has_aligned_allocate<AlignedAllocateNotNoexcept>);
static_assert(!alloy::has_allocate_all<AllocateAllTakesSize>);
static_assert(!alloy::has_allocate_all<AllocateAllNotNoexcept>);
static_assert(!alloy::has_allocate_fresh<AllocateFreshReturnsPointer>);
static_assert(!alloy::has_resolve_internal_pointer<ResolveTakesValue>);
static_assert(!alloy::has_resolve_internal_pointer<ResolveReturnsBool>);
static_assert(!alloy::has_resolve_internal_pointer<ResolveTakesMutablePointer>);
static_assert(!alloy::has_deallocate_all<DeallocateAllReturnsVoid>);
static_assert(!alloy::has_deallocate_all<DeallocateAllNotNoexcept>);
static_assert(!alloy::has_empty<EmptyReturnsBool>);
static_assert(!alloy::has_empty<EmptyNotNoexcept>);
static_assert(!alloy::has_good_alloc_size<GoodAllocSizeReturnsInt>);
static_assert(!alloy::has_good_alloc_size<GoodAllocSizeNotNoexcept>);
static_assert(!alloy::has_instance<InstanceOfOtherType>);
static_assert(!alloy::has_stream_ordered<StreamAllocateOnly>);
static_assert(!alloy::has_stream_ordered<StreamOrderReversed>);
static_assert(!alloy::has_copy<CopyWithoutStream>);
static_assert(!alloy::has_copy<CopyNotNoexcept>);

// A primitive on a type that is not an allocator does not count.
struct OnlyDeallocate {
  bool deallocate(Block) noexcept { return true; }
  Ternary owns(Block) noexcept { return Ternary::no; }
};
static_assert(!alloy::has_deallocate<OnlyDeallocate> && !alloy::has_owns<OnlyDeallocate>);
static_assert(!alloy::has_deallocate<AllocateNotNoexcept>);

// Primitives constrained away with `requires` do not exist (how combinators declare what their parts allow).
template <bool B>
struct Conditional : Minimal {
  bool deallocate(Block) noexcept requires B { return true; }
  bool expand(Block&, size_t) noexcept requires B { return false; }
};
static_assert(alloy::has_deallocate<Conditional<true>> && alloy::has_expand<Conditional<true>>);
static_assert(!alloy::has_deallocate<Conditional<false>> && !alloy::has_expand<Conditional<false>>);

// ---------------------------------------------------------------------------------------------------------------
// Memory spaces

template <alloy::MemorySpace S>
struct In : Minimal {
  static constexpr alloy::MemorySpace memory_space = S;
};
using alloy::MemorySpace;
static_assert(alloy::memory_space_of<Minimal>() == MemorySpace::host);  // undeclared: host
static_assert(alloy::host_accessible<Minimal> && !alloy::device_accessible<Minimal>);
static_assert(alloy::host_accessible<In<MemorySpace::host>> && !alloy::device_accessible<In<MemorySpace::host>>);
static_assert(!alloy::host_accessible<In<MemorySpace::device>> && alloy::device_accessible<In<MemorySpace::device>>);
static_assert(alloy::host_accessible<In<MemorySpace::host_pinned>> &&
              alloy::device_accessible<In<MemorySpace::host_pinned>>);
static_assert(alloy::host_accessible<In<MemorySpace::managed>> && alloy::device_accessible<In<MemorySpace::managed>>);
static_assert(alloy::memory_space_of<alloy::NoAccessAllocator>() == MemorySpace::device);
static_assert(alloy::memory_space_of<alloy::Mallocator>() == MemorySpace::host);
static_assert(alloy::memory_space_of<Full>() == MemorySpace::managed);
// host_accessible_or_checked: what make, StlAllocator and PmrResource require (a run-time space passes, to be checked
// where the memory is touched; its compile-time space is device).
struct RuntimeSpace : Minimal {
  MemorySpace memory_space() const noexcept { return MemorySpace::host; }
};
static_assert(alloy::runtime_memory_space<RuntimeSpace> && !alloy::host_accessible<RuntimeSpace>);
static_assert(alloy::host_accessible_or_checked<RuntimeSpace> && alloy::host_accessible_or_checked<Minimal>);
static_assert(alloy::host_accessible_or_checked<In<MemorySpace::managed>>);
static_assert(!alloy::host_accessible_or_checked<In<MemorySpace::device>>);
static_assert(!alloy::host_accessible_or_checked<alloy::NoAccessAllocator>);

// Stateless: no data members.
struct Stateful : Minimal {
  int state = 0;
};
static_assert(alloy::stateless_allocator<Minimal> && !alloy::stateless_allocator<Stateful>);
static_assert(!alloy::stateless_allocator<NoAlignment>);  // empty, but not an allocator

// Every parent: stateless, with `instance`.
static_assert(alloy::stateless_allocator<alloy::Mallocator> && alloy::has_instance<alloy::Mallocator>);
static_assert(alloy::stateless_allocator<alloy::AlignedMallocator> && alloy::has_instance<alloy::AlignedMallocator>);
static_assert(alloy::stateless_allocator<alloy::MmapAllocator> && alloy::has_instance<alloy::MmapAllocator>);
static_assert(alloy::stateless_allocator<alloy::NullAllocator> && alloy::has_instance<alloy::NullAllocator>);
static_assert(alloy::stateless_allocator<alloy::NoAccessAllocator> && alloy::has_instance<alloy::NoAccessAllocator>);

TEST_CASE("concepts: a type is an allocator however it is qualified") {
  CHECK(alloy::allocator<Minimal>);
  CHECK(alloy::allocator<const alloy::Mallocator>);
  CHECK(!alloy::allocator<const Minimal>);  // its allocate is not const
}
