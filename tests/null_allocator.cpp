#include <alloy/null_allocator.hpp>

#include <csignal>

#include <doctest/doctest.h>

#include "support/child_process.hpp"
#include "support/conformance.hpp"
#include "support/differential.hpp"

using alloy::Block;
using alloy::NullAllocator;
using alloy::Ternary;

// Every primitive D's NullAllocator has, and no others.
static_assert(alloy::allocator<NullAllocator> && alloy::has_aligned_allocate<NullAllocator> &&
              alloy::has_allocate_all<NullAllocator> && alloy::has_expand<NullAllocator> &&
              alloy::has_reallocate<NullAllocator> && alloy::has_aligned_reallocate<NullAllocator> &&
              alloy::has_owns<NullAllocator> && alloy::has_resolve_internal_pointer<NullAllocator> &&
              alloy::has_deallocate<NullAllocator> && alloy::has_deallocate_all<NullAllocator> &&
              alloy::has_empty<NullAllocator>);
static_assert(!alloy::has_allocate_fresh<NullAllocator> && !alloy::has_good_alloc_size<NullAllocator> &&
              !alloy::has_copy<NullAllocator> && !alloy::has_stream_ordered<NullAllocator>);
static_assert(alloy::has_instance<NullAllocator> && alloy::stateless_allocator<NullAllocator>);
static_assert(alloy::allocator<const NullAllocator> && alloy::has_deallocate<const NullAllocator>);  // `instance`
static_assert(NullAllocator::alignment == 64 * 1024);
static_assert(alloy::memory_space_of<NullAllocator>() == alloy::MemorySpace::host);

TEST_CASE("NullAllocator: conformance (fails everywhere)") {
  alloy::test::check_allocator([] { return NullAllocator{}; });
}

TEST_CASE("NullAllocator: every primitive's answer, on the instance too") {
  const NullAllocator& n = NullAllocator::instance;
  for (std::size_t s : {std::size_t{0}, std::size_t{1}, std::size_t{4096}, SIZE_MAX}) {
    CHECK(!n.allocate(s));
    CHECK(!n.aligned_allocate(s, 64));
  }
  CHECK(!n.allocate_all());
  Block b{};
  CHECK(n.expand(b, 0));
  CHECK(!n.expand(b, 1));
  CHECK(n.reallocate(b, 0));  // empty to empty
  CHECK(!n.reallocate(b, 1));
  CHECK(n.aligned_reallocate(b, 0, 16));
  CHECK(!n.aligned_reallocate(b, 8, 16));
  CHECK(!b);
  int x = 0;
  CHECK(n.owns({}) == Ternary::no);
  CHECK(n.owns({&x, sizeof x}) == Ternary::no);
  Block r{&x, 1};
  CHECK(n.resolve_internal_pointer(&x, r) == Ternary::no);
  CHECK(!r);
  CHECK(n.deallocate({}));
  CHECK(n.deallocate_all());
  CHECK(n.empty() == Ternary::yes);
  CHECK(alloy::good_alloc_size(n, 1) == 64 * 1024);
}

// The model: the obviously correct NullAllocator, called in lockstep by the driver.
struct NullModel {
  Block allocate(std::size_t) { return {}; }
  Block aligned_allocate(std::size_t, std::size_t) { return {}; }
  Ternary empty() { return Ternary::yes; }
  bool deallocate_all() { return true; }
};

TEST_CASE("NullAllocator: randomized against the model") {
  NullAllocator n;
  NullModel m;
  alloy::test::DiffOptions o;
  o.ops = 20'000;
  o.deallocate_all_every = 100;
  o.expect_allocations = false;
  const auto st = alloy::test::run_differential(n, m, o);
  CHECK(st.allocations == 0);
  CHECK(st.failures > 10'000);
  CHECK(st.deallocate_alls > 10);
}

#if ALLOY_ENABLE_ASSERTS
TEST_CASE("NullAllocator: deallocating a block it did not give is caught in debug builds") {
  int x = 0;
  CHECK(alloy::test::run_in_child([&] { (void)NullAllocator::instance.deallocate({&x, sizeof x}); }).signal == SIGABRT);
}
#endif
