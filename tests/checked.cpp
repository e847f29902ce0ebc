#include <alloy/checked.hpp>

#include <alloy/aligned_mallocator.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>

#include <csignal>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "support/child_process.hpp"
#include "support/conformance.hpp"
#include "support/rng.hpp"
#include "support/test_length.hpp"

using alloy::Block;
using alloy::Checked;
using alloy::CheckedReport;
using alloy::CheckedViolation;
using alloy::Mallocator;
using alloy::RecordViolations;
using alloy::Ternary;
using BB = alloy::BitmappedBlock<64, 16, Mallocator>;

// Capabilities, with their iff rules.
static_assert(alloy::has_deallocate<Checked<Mallocator>> && alloy::has_reallocate<Checked<Mallocator>>);
static_assert(alloy::has_owns<Checked<Mallocator>> && alloy::has_empty<Checked<Mallocator>>);  // from the table
static_assert(!alloy::has_aligned_allocate<Checked<Mallocator>> && !alloy::has_expand<Checked<Mallocator>>);
static_assert(alloy::has_aligned_allocate<Checked<alloy::AlignedMallocator>> &&
              alloy::has_aligned_reallocate<Checked<alloy::AlignedMallocator>>);
static_assert(alloy::has_expand<Checked<BB>> && alloy::has_deallocate_all<Checked<BB>>);
static_assert(!alloy::has_allocate_all<Checked<BB>> && !alloy::has_resolve_internal_pointer<Checked<BB>>);
static_assert(Checked<Mallocator>::alignment == Mallocator::alignment);
static_assert(Checked<BB>::alignment == 16);

namespace {
bool has(const CheckedReport& r, const char* text) { return std::strstr(r.message, text) != nullptr; }
std::string line_of(unsigned line) { return ":" + std::to_string(line) + " ("; }
}  // namespace

// The default policy aborts on the first violation: a clean run of the kit is a run without one.
TEST_CASE_TEMPLATE("Checked: conformance (the default policy: any violation aborts)", A, Checked<Mallocator>,
                   Checked<alloy::AlignedMallocator>) {
  alloy::test::check_allocator([] { return A{}; });
}

TEST_CASE("Checked: conformance over a BitmappedBlock (expand, deallocate_all)") {
  alloy::test::check_allocator([] { return Checked<BB>(BB(1 << 20)); });
}

TEST_CASE("Checked: a clean run reports nothing; owns and empty come from the table") {
  RecordViolations seen;
  {
    Checked<alloy::AlignedMallocator, RecordViolations&> a(alloy::AlignedMallocator{}, seen);
    CHECK(a.empty() == Ternary::yes);
    Block b = a.allocate(100);
    Block c = a.aligned_allocate(40, 256);
    REQUIRE((b && c));
    CHECK(alloy::is_aligned(c.ptr, 256));
    CHECK(a.owns(b) == Ternary::yes);
    CHECK(a.owns(Block{b.ptr, 99}) == Ternary::no);
    CHECK(a.empty() == Ternary::no);
    CHECK(a.live_blocks() == 2);
    std::memset(b.ptr, 0xAB, b.size);  // every byte of the block is the caller's
    CHECK(a.reallocate(b, 3000));
    CHECK(static_cast<unsigned char*>(b.ptr)[99] == 0xAB);
    CHECK(a.aligned_reallocate(c, 10, 64));
    CHECK(a.check());
    CHECK(a.deallocate(b));
    CHECK(a.deallocate(c));
    CHECK(a.owns(b) == Ternary::no);
    CHECK(a.empty() == Ternary::yes);
    CHECK(!a.aligned_allocate(8, 3));  // not a power of two
  }
  CHECK(seen.reports.empty());
}

TEST_CASE("Checked: double free names the block, its allocate, the first free and the second") {
  Checked<Mallocator, RecordViolations> a;
  const unsigned l = __LINE__ + 1;
  Block b = a.allocate(24);
  CHECK(a.deallocate(b));
  CHECK_FALSE(a.deallocate(b));  // never reaches Mallocator (ASan would say so)
  REQUIRE(a.policy().reports.size() == 1);
  const CheckedReport& r = a.policy().reports[0];
  CHECK(r.kind == CheckedViolation::double_free);
  CHECK(r.block == b.ptr);
  CHECK(r.size == 24);
  CHECK(r.allocated_at.line() == l);
  CHECK(r.freed_at.line() == l + 1);
  CHECK(r.call_at.line() == l + 2);
  INFO(r.message);
  CHECK(has(r, "alloy::Checked: double free: deallocate of block 0x"));
  CHECK(has(r, "(24 bytes) at checked.cpp"));
  CHECK(has(r, ("was allocated at checked.cpp" + line_of(l)).c_str()));
  CHECK(has(r, ("already freed at checked.cpp" + line_of(l + 1)).c_str()));
  CHECK(a.empty() == Ternary::yes);
}

TEST_CASE("Checked: wrong-size free names both sizes; the block still goes back whole") {
  RecordViolations seen;
  unsigned l = 0;
  {
    Checked<Mallocator, RecordViolations&> a(Mallocator{}, seen);
    l = __LINE__ + 1;
    Block b = a.allocate(40);
    CHECK_FALSE(a.deallocate(Block{b.ptr, 32}));
    CHECK(a.empty() == Ternary::yes);  // freed with the size recorded: nothing leaks (LSan agrees)
  }
  REQUIRE(seen.reports.size() == 1);
  const CheckedReport& r = seen.reports[0];
  CHECK(r.kind == CheckedViolation::wrong_size_free);
  CHECK((r.size == 40 && r.given_size == 32));
  INFO(r.message);
  CHECK(has(r, "alloy::Checked: wrong-size free: block 0x"));
  CHECK(has(r, ("was allocated with 40 bytes at checked.cpp" + line_of(l)).c_str()));
  CHECK(has(r, ("but given back with 32 bytes at checked.cpp" + line_of(l + 1)).c_str()));
}

TEST_CASE("Checked: a foreign block is never given to the parent; an interior pointer names its block") {
  Checked<Mallocator, RecordViolations> a;
  alignas(16) static unsigned char elsewhere[64];
  CHECK_FALSE(a.deallocate(Block{elsewhere, 64}));
  const unsigned l = __LINE__ + 1;
  Block b = a.allocate(100);
  CHECK_FALSE(a.deallocate(Block{static_cast<char*>(b.ptr) + 8, 16}));
  Block moved{static_cast<char*>(b.ptr) + 8, 16};
  CHECK_FALSE(a.reallocate(moved, 200));
  REQUIRE(a.policy().reports.size() == 3);
  const CheckedReport& r0 = a.policy().reports[0];
  CHECK(r0.kind == CheckedViolation::foreign_block);
  CHECK(r0.given_size == 64);
  INFO(r0.message);
  CHECK(has(r0, "alloy::Checked: foreign block: deallocate of block 0x"));
  CHECK(has(r0, "this allocator never handed out that address"));
  CHECK_FALSE(has(r0, "points"));
  const CheckedReport& r1 = a.policy().reports[1];
  INFO(r1.message);
  CHECK(has(r1, "it points 8 bytes into live block 0x"));
  CHECK(has(r1, ("(100 bytes) allocated at checked.cpp" + line_of(l)).c_str()));
  CHECK(has(a.policy().reports[2], "foreign block: reallocate of block"));
  CHECK(a.deallocate(b));
}

TEST_CASE("Checked: buffer overrun, one byte past the end and further") {
  Checked<Mallocator, RecordViolations> a;
  const unsigned l = __LINE__ + 1;
  Block b = a.allocate(13);  // odd size: the guard starts at byte 13, not at an aligned end
  static_cast<unsigned char*>(b.ptr)[13] = 0;
  CHECK_FALSE(a.deallocate(b));
  REQUIRE(a.policy().reports.size() == 1);
  const CheckedReport& r = a.policy().reports[0];
  CHECK(r.kind == CheckedViolation::overrun);
  INFO(r.message);
  CHECK(has(r, ("alloy::Checked: buffer overrun: block 0x")));
  CHECK(has(r, ("(13 bytes) allocated at checked.cpp" + line_of(l)).c_str()));
  CHECK(has(r, "the first changed guard byte is at offset 13 (byte 1 after the end)"));
  CHECK(has(r, ("found by deallocate at checked.cpp" + line_of(l + 2)).c_str()));
  CHECK(a.empty() == Ternary::yes);  // given back all the same

  Block c = a.allocate(32);
  static_cast<unsigned char*>(c.ptr)[32 + 5] = 1;
  CHECK_FALSE(a.check());
  CHECK(has(a.policy().reports.back(), "at offset 37 (byte 6 after the end); found by check"));
  CHECK(a.check());  // reported once: the guard is rewritten
  CHECK(a.deallocate(c));
  CHECK(a.policy().count(CheckedViolation::overrun) == 2);
}

TEST_CASE("Checked: buffer underrun (the header before the block)") {
  Checked<BB, RecordViolations> a(BB(1 << 16));
  const unsigned l = __LINE__ + 1;
  Block b = a.allocate(64);
  static_cast<unsigned char*>(b.ptr)[-1] ^= 0xFF;
  Block grown = b;
  CHECK_FALSE(a.expand(grown, 64));  // a damaged block is not grown
  CHECK(grown == b);
  REQUIRE(a.policy().reports.size() == 1);
  const CheckedReport& r = a.policy().reports[0];
  CHECK(r.kind == CheckedViolation::underrun);
  INFO(r.message);
  CHECK(has(r, "alloy::Checked: buffer underrun: the 32 bytes before block 0x"));
  CHECK(has(r, ("(64 bytes) allocated at checked.cpp" + line_of(l)).c_str()));
  CHECK(has(r, "were overwritten; found by expand at checked.cpp"));
  CHECK(a.deallocate(b));  // the header was rebuilt from the table
  CHECK(a.parent().empty() == Ternary::yes);

  // Deeper: every field of the header overwritten. The block A gets back comes from the table, not from the header
  // (the BitmappedBlock would refuse, or free other blocks, given a wrong one).
  Block c = a.allocate(100);
  Block d = a.allocate(100);
  std::memset(static_cast<unsigned char*>(d.ptr) - 32, 0x7F, 32);
  CHECK_FALSE(a.deallocate(d));
  CHECK(a.policy().count(CheckedViolation::underrun) == 2);
  CHECK(a.deallocate(c));
  CHECK(a.parent().empty() == Ternary::yes);
  CHECK(a.policy().reports.size() == 2);
}

TEST_CASE("Checked: leaks at destruction, one report per block, then given back to the parent") {
  RecordViolations seen;
  unsigned l = 0;
  {
    Checked<Mallocator, RecordViolations&> a(Mallocator{}, seen);
    l = __LINE__ + 1;
    (void)a.allocate(10);
    (void)a.allocate(20);
    CHECK(a.report_leaks() == 2);  // on demand, without freeing
    seen.reports.clear();
  }
  REQUIRE(seen.reports.size() == 2);
  CHECK(seen.count(CheckedViolation::leak) == 2);
  CHECK(seen.reports[0].more_follow != seen.reports[1].more_follow);  // the last one says so: the abort policy waits
  for (const CheckedReport& r : seen.reports) {
    INFO(r.message);
    CHECK(has(r, "alloy::Checked: leak: block 0x"));
    CHECK(has(r, "was never freed"));
    CHECK(has(r, (r.size == 10 ? "(10 bytes) allocated at checked.cpp" + line_of(l)
                               : "(20 bytes) allocated at checked.cpp" + line_of(l + 1))
                     .c_str()));
  }
}

TEST_CASE("Checked: deallocate_all checks every block first") {
  Checked<BB, RecordViolations> a(BB(1 << 16));
  Block b = a.allocate(10);
  (void)a.allocate(100);
  static_cast<unsigned char*>(b.ptr)[10] = 0;
  CHECK_FALSE(a.deallocate_all());
  CHECK(a.policy().count(CheckedViolation::overrun) == 1);
  CHECK(a.empty() == Ternary::yes);
  CHECK_FALSE(a.deallocate(b));  // freed by deallocate_all: a double free now
  CHECK(has(a.policy().reports.back(), "and already freed at checked.cpp"));
}

TEST_CASE("Checked: the default policy prints the message to stderr and aborts") {
  const alloy::test::ChildOutcome out = alloy::test::run_in_child([] {
    Checked<Mallocator> a;
    Block b = a.allocate(8);
    (void)a.deallocate(b);
    (void)a.deallocate(b);  // aborts here; the child's _exit(0) is not reached
  });
  CHECK(out.signal == SIGABRT);
  INFO(out.stderr_text);
  CHECK(out.stderr_text.find("alloy::Checked: double free: deallocate of block 0x") != std::string::npos);
}

// Random operations against a model (address -> size, fill byte), with violations injected now and then: each one
// must be reported once, with the right kind, and leave the allocator and the model in agreement.
TEST_CASE("Checked: randomized against a model, with injected violations") {
  using A = Checked<alloy::AlignedMallocator, RecordViolations>;
  A a;
  alloy::test::Rng rng;
  struct Live {
    std::size_t size;
    unsigned char fill;
  };
  std::map<char*, Live> model;
  std::vector<Block> freed;  // recently freed: double free candidates
  std::size_t expected[6] = {};
  const std::size_t steps = alloy::test::test_length(200'000);
  auto pick = [&] {
    auto it = model.begin();
    std::advance(it, static_cast<long>(rng.below(model.size())));
    return it;
  };
  auto intact = [](char* p, const Live& l) {
    for (std::size_t i = 0; i < l.size; ++i)
      if (static_cast<unsigned char>(p[i]) != l.fill) return false;
    return true;
  };
  for (std::size_t step = 0; step < steps; ++step) {
    const unsigned op = static_cast<unsigned>(rng.below(100));
    if (op < 35 || model.empty()) {
      const std::size_t n = 1 + rng.below(rng.chance(10) ? 5000 : 200);
      const std::size_t al = std::size_t{1} << rng.below(9);
      const bool aligned = rng.chance(30);
      Block b = aligned ? a.aligned_allocate(n, al) : a.allocate(n);
      REQUIRE(b);
      CHECK(b.size == n);
      CHECK(alloy::is_aligned(b.ptr, aligned ? al : A::alignment));
      char* p = static_cast<char*>(b.ptr);
      auto next = model.lower_bound(p);
      if (next != model.end()) CHECK(p + n <= next->first);
      if (next != model.begin()) CHECK(std::prev(next)->first + std::prev(next)->second.size <= p);
      const auto fill = static_cast<unsigned char>(rng.next());
      std::memset(p, fill, n);
      model[p] = {n, fill};
    } else if (op < 65) {
      auto it = pick();
      CHECK(intact(it->first, it->second));
      CHECK(a.deallocate(Block{it->first, it->second.size}));
      freed.push_back(Block{it->first, it->second.size});
      if (freed.size() > 32) freed.erase(freed.begin());
      model.erase(it);
    } else if (op < 80) {
      auto it = pick();
      Block b{it->first, it->second.size};
      const std::size_t n = 1 + rng.below(400);
      REQUIRE(a.reallocate(b, n));
      const Live was = it->second;
      model.erase(it);
      CHECK(intact(static_cast<char*>(b.ptr), Live{n < was.size ? n : was.size, was.fill}));
      std::memset(b.ptr, was.fill, n);
      model[static_cast<char*>(b.ptr)] = {n, was.fill};
    } else if (op < 90) {
      auto it = pick();
      CHECK(a.owns(Block{it->first, it->second.size}) == Ternary::yes);
      CHECK(a.owns(Block{it->first, it->second.size + 1}) == Ternary::no);
    } else {  // a violation
      const unsigned kind = static_cast<unsigned>(rng.below(4));
      if (kind == 0 && !freed.empty()) {
        const Block f = freed[rng.below(freed.size())];
        if (model.count(static_cast<char*>(f.ptr)) != 0) continue;  // handed out again since
        CHECK_FALSE(a.deallocate(f));
        ++expected[static_cast<int>(CheckedViolation::double_free)];
      } else if (kind == 1) {
        auto it = pick();
        CHECK_FALSE(a.deallocate(Block{it->first, it->second.size + 1 + rng.below(8)}));
        ++expected[static_cast<int>(CheckedViolation::wrong_size_free)];
        freed.push_back(Block{it->first, it->second.size});
        model.erase(it);
      } else if (kind == 2) {
        auto it = pick();
        it->first[it->second.size + rng.below(16)] ^= 0x5A;  // inside the guard
        CHECK_FALSE(a.check());
        ++expected[static_cast<int>(CheckedViolation::overrun)];
      } else if (kind == 3) {
        auto it = pick();
        if (it->second.size < 2) continue;
        CHECK_FALSE(a.deallocate(Block{it->first + 1, it->second.size - 1}));
        ++expected[static_cast<int>(CheckedViolation::foreign_block)];
      }
    }
    CHECK(a.live_blocks() == model.size());
  }
  for (int k = 0; k < 6; ++k) {
    CAPTURE(k);
    CHECK(a.policy().count(static_cast<CheckedViolation>(k)) == expected[k]);
  }
  for (auto& [p, l] : model) CHECK(a.deallocate(Block{p, l.size}));
  CHECK(a.empty() == Ternary::yes);
}

// The same over a BitmappedBlock, with expand (the guard moves to the new end) and deallocate_all: a clean run under
// the recording policy reports nothing, and the table agrees with the model and with the parent.
TEST_CASE("Checked: randomized over a BitmappedBlock with expand and deallocate_all, no false reports") {
  Checked<BB, RecordViolations> a(BB(1 << 20));
  alloy::test::Rng rng{7};
  std::vector<std::pair<Block, unsigned char>> slots(256);
  const std::size_t steps = alloy::test::test_length(200'000);
  for (std::size_t step = 0; step < steps; ++step) {
    auto& [b, fill] = slots[rng.below(slots.size())];
    if (!b) {
      b = a.allocate(1 + rng.below(600));
      if (!b) continue;  // the arena is full for now
      fill = static_cast<unsigned char>(rng.next());
      std::memset(b.ptr, fill, b.size);
      continue;
    }
    const auto* p = static_cast<const unsigned char*>(b.ptr);
    CHECK((p[0] == fill && p[b.size - 1] == fill));
    CHECK(a.owns(b) == Ternary::yes);
    if (rng.chance(30)) {
      const Block was = b;
      const std::size_t delta = 1 + rng.below(200);
      if (a.expand(b, delta)) {
        CHECK((b.ptr == was.ptr && b.size == was.size + delta));
        std::memset(b.ptr, fill, b.size);
      } else {
        CHECK(b == was);
      }
    } else if (rng.chance(2)) {
      CHECK(a.deallocate_all());
      for (auto& s : slots) s.first = {};
      CHECK(a.parent().empty() == Ternary::yes);
    } else {
      CHECK(a.deallocate(b));
      b = {};
    }
  }
  for (auto& s : slots) CHECK(a.deallocate(s.first));
  CHECK(a.empty() == Ternary::yes);
  CHECK(a.parent().empty() == Ternary::yes);
  CHECK(a.policy().reports.empty());
}
