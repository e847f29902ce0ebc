// The replay engine of alloy-replay used as a library (benchmarks/replay/replay.hpp, stacks.hpp), the shipped
// traces (benchmarks/replay/traces/) and their generator (tools/make_traces.hpp): this is the smoke test of the tool
// in the test build.
#include <alloy/mallocator.hpp>
#include <alloy/null_allocator.hpp>

#include <filesystem>
#include <memory_resource>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "../benchmarks/replay/replay.hpp"
#include "../benchmarks/replay/stacks.hpp"
#include "../tools/make_traces.hpp"

namespace rp = alloy::replay;
using Op = alloy::TraceEvent::Op;

namespace {

std::filesystem::path traces_dir() {
  return std::filesystem::path(__FILE__).parent_path().parent_path() / "benchmarks" / "replay" / "traces";
}

rp::PreparedTrace prepared(const std::string& text) {
  const auto t = rp::parse_trace(text);
  INFO(t.error_line, ": ", t.error);
  REQUIRE(t.ok());
  return rp::prepare(t.events);
}

const char* const small_trace =
    "op,id,size,alignment,thread\n"
    "a,1,100,16,0\n"
    "a,2,200,64,1\n"
    "r,1,1000,16,0\n"   // live 1200: the peak
    "d,2,200,64,1\n"
    "a,2,50,16,0\n"     // id 2 again: a new block
    "r,2,60,256,0\n"    // larger alignment: becomes a + d
    "d,1,1000,16,0\n";  // id 2 stays live to the end

struct NullStack {
  static constexpr const char* name = "NullAllocator";
  static auto make(const rp::TraceStats&) { return std::make_unique<rp::AlloyTarget<alloy::NullAllocator>>(); }
};

// An alloy stack without aligned_allocate (uncounted: its held() reads 0).
struct MallocatorStack {
  static constexpr const char* name = "Mallocator";
  static auto make(const rp::TraceStats&) { return std::make_unique<rp::AlloyTarget<alloy::Mallocator>>(); }
};
static_assert(alloy::Mallocator::alignment == 16 && !alloy::has_aligned_allocate<alloy::Mallocator>);

// A target that refuses every free and keeps the blocks until it is destroyed, then frees them uncounted: what it
// holds only grows while it lives, and what it held at the end stays in the counter (a leak of exactly one pass).
class KeepingTarget {
 public:
  KeepingTarget() = default;
  KeepingTarget(const KeepingTarget&) = delete;
  KeepingTarget& operator=(const KeepingTarget&) = delete;
  ~KeepingTarget() {
    for (const alloy::Block b : kept_) alloy::AlignedMallocator::instance.deallocate(b);
  }
  alloy::Block allocate(std::size_t n, std::size_t) noexcept {
    const alloy::Block b = counting_.allocate(n);
    if (b) kept_.push_back(b);
    return b;
  }
  bool deallocate(alloy::Block, std::size_t) noexcept { return false; }
  bool reallocate(alloy::Block&, std::size_t, std::size_t) noexcept { return false; }
  [[nodiscard]] std::size_t held() const noexcept { return rp::HeldCounter::held; }

 private:
  rp::CountingMallocator counting_;
  std::vector<alloy::Block> kept_;
};
struct KeepingStack {
  static constexpr const char* name = "keeping";
  static auto make(const rp::TraceStats&) { return std::make_unique<KeepingTarget>(); }
};

// A pmr resource that forwards everything to its upstream: over PmrTarget's counting upstream, held == live.
class ForwardingResource final : public std::pmr::memory_resource {
 public:
  explicit ForwardingResource(std::pmr::memory_resource* up) noexcept : up_(up) {}

 private:
  void* do_allocate(std::size_t n, std::size_t al) override { return up_->allocate(n, al); }
  void do_deallocate(void* p, std::size_t n, std::size_t al) override { up_->deallocate(p, n, al); }
  bool do_is_equal(const std::pmr::memory_resource& o) const noexcept override { return this == &o; }
  std::pmr::memory_resource* up_;
};
struct ForwardingPmrStack {
  static constexpr const char* name = "forwarding pmr";
  static auto make(const rp::TraceStats&) { return std::make_unique<rp::PmrTarget<ForwardingResource>>(); }
};

}  // namespace

TEST_CASE("replay: prepare maps ids to slots and measures the trace") {
  const auto p = prepared(small_trace);
  CHECK(p.slots == 4);  // 1, 2, 2 again, 2 realigned
  CHECK(p.steps.size() == 8);
  CHECK(p.stats.events == 7);
  CHECK(p.stats.allocations == 3);
  CHECK(p.stats.deallocations == 2);
  CHECK(p.stats.reallocations == 2);
  CHECK(p.stats.threads == 2);
  CHECK(p.stats.peak_live_bytes == 1200);
  CHECK(p.stats.peak_live_blocks == 2);
  CHECK(p.stats.max_alignment == 256);
  CHECK(p.stats.max_size == 1000);
  CHECK(p.stats.total_requested_bytes == 100 + 200 + 1000 + 50 + 60);  // every a and every r size
  CHECK(p.stats.live_at_end == 1);
  CHECK(p.steps[5].op == Op::allocate);
  CHECK(p.steps[5].alignment == 256);
  CHECK(p.steps[6].op == Op::deallocate);
  CHECK(p.steps[6].alignment == 16);  // freed with the alignment it was allocated with
  CHECK(p.steps[3].alignment == 64);
}

TEST_CASE("replay: a block keeps the alignment of its a line and its own size; a d's size is informational") {
  const auto p = prepared("op,id,size,alignment,thread\n"
                          "a,1,100,64,0\n"
                          "r,1,200,16,0\n"   // smaller alignment: an ordinary r, at the block's 64
                          "d,1,0,16,0\n"     // the size of a d is not used: the block has 200 bytes
                          "a,2,150,16,0\n");
  REQUIRE(p.steps.size() == 4);
  CHECK(p.steps[1].op == Op::reallocate);
  CHECK(p.steps[1].alignment == 64);
  CHECK(p.steps[2].alignment == 64);
  CHECK(p.steps[2].size == 200);
  CHECK(p.stats.peak_live_bytes == 200);
  const auto r = rp::replay_stack<rp::AlloyMallocator>(p, {1, true});
  CHECK(r.peak_live == 200);
  CHECK(r.held_after == 0);
}

TEST_CASE("replay: a counted alloy stack holds exactly what is live") {
  const auto p = prepared(small_trace);
  const auto r = rp::replay_stack<rp::AlloyMallocator>(p, {2, true});
  CHECK(r.ops == 8);
  CHECK(r.failures == 0);
  CHECK(r.peak_live == 1200);
  CHECK(r.peak_held == 1200);
  CHECK(r.held_at_peak_live == 1200);
  CHECK(r.fragmentation == doctest::Approx(1.0));
  CHECK(r.held_after == 0);
  CHECK(r.ns_per_op > 0);
}

TEST_CASE("replay: failures are counted, frees of failed blocks skipped") {
  const auto p = prepared(small_trace);
  const auto r = rp::replay_stack<NullStack>(p, {1, true});
  CHECK(r.failures == 5);  // 3 a, 1 r, and the a of the realigned block
  CHECK(r.refused_frees == 0);
  CHECK(r.peak_live == 0);
  CHECK(r.fragmentation == 0);
}

TEST_CASE("replay: held at peak live is read when live bytes first peak; a leak is one measured pass's") {
  const auto p = prepared("op,id,size,alignment,thread\n"
                          "a,1,100,16,0\n"    // live 100, held 100: the peak live
                          "d,1,100,16,0\n"    // refused: held stays 100
                          "a,2,100,16,0\n");  // live 100 again, held 200
  const auto r = rp::replay_stack<KeepingStack>(p, {2, true});
  CHECK(r.failures == 0);
  CHECK(r.refused_frees == 1);  // the d step only: freeing the survivors is not counted
  CHECK(r.peak_live == 100);
  CHECK(r.held_at_peak_live == 100);
  CHECK(r.fragmentation == doctest::Approx(1.0));
  CHECK(r.peak_held == 200);
  CHECK(r.held_after == 200);  // the timed passes' leaks are not carried into the measured pass
}

TEST_CASE("replay: a pmr resource's reallocate frees the old block") {
  const auto p = prepared(small_trace);
  const auto r = rp::replay_stack<ForwardingPmrStack>(p, {1, true});
  CHECK(r.failures == 0);
  CHECK(r.peak_live == 1200);
  CHECK(r.peak_held == 1200);
  CHECK(r.held_after == 0);
}

TEST_CASE("replay: a stack without aligned_allocate serves its own alignment and fails larger ones") {
  const auto p = prepared("op,id,size,alignment,thread\n"
                          "a,1,100,16,0\n"
                          "a,2,100,32,0\n"  // above Mallocator's 16: fails, counted
                          "r,1,200,16,0\n"
                          "d,1,200,16,0\n"
                          "d,2,100,32,0\n");  // of a failed block: skipped
  const auto r = rp::replay_stack<MallocatorStack>(p, {1, true});
  CHECK(r.failures == 1);
  CHECK(r.refused_frees == 0);
  CHECK(r.peak_live == 200);
}

#if __has_include(<alloy/region.hpp>)
TEST_CASE("replay: the Region arena has room for every byte requested and its alignment padding, r moves included") {
  // Two 4096-aligned blocks resized in turn: each r moves its block (it is not the last one), and each move pays up
  // to 4095 bytes of padding: 316 moves need more than the 1 MiB minimum arena.
  std::string text = "op,id,size,alignment,thread\na,1,1,4096,0\na,2,1,4096,0\n";
  for (int i = 2; i < 160; ++i) text += "r,1," + std::to_string(i) + ",4096,0\nr,2," + std::to_string(i) + ",4096,0\n";
  const auto p = prepared(text);
  const auto r = rp::replay_stack<rp::RegionArena>(p, {1, true});
  CHECK(r.failures == 0);
  CHECK(r.held_after == 0);
}
#endif

#if __has_include(<alloy/bitmapped_block.hpp>) && __has_include(<alloy/allocator_list.hpp>)
TEST_CASE("replay: the BitmappedBlock list makes an allocator of twice a request above 1 MiB") {
  const auto p = prepared("op,id,size,alignment,thread\na,1,2097152,16,0\nd,1,2097152,16,0\n");
  const auto r = rp::replay_stack<rp::BitmappedList>(p, {1, true});
  CHECK(r.failures == 0);
  CHECK(r.peak_held >= 2 * 2097152);
  CHECK(r.held_after == 0);
}
#endif

TEST_CASE("replay: the shipped traces are what tools/make_traces.hpp generates") {
  for (const auto& entry : {std::pair{"inference.csv", alloy::traces::make_inference_trace()},
                             std::pair{"strings.csv", alloy::traces::make_strings_trace()}}) {
    const auto& [file, text] = entry;
    const char* const name = file;  // CAPTURE takes it by reference in a lambda: clang 14 cannot capture a binding
    CAPTURE(name);
    const auto shipped = rp::read_trace_file((traces_dir() / file).string());
    REQUIRE(shipped.ok());
    const auto made = rp::parse_trace(text);
    REQUIRE(made.ok());
    CHECK(made.events == shipped.events);
    CHECK(text.size() <= 2'000'000);
  }
}

TEST_CASE("replay: every configured stack replays both shipped traces") {
  for (const std::string file : {"inference.csv", "strings.csv"}) {
    CAPTURE(file);
    const auto t = rp::read_trace_file((traces_dir() / file).string());
    REQUIRE(t.ok());
    const auto p = rp::prepare(t.events);
    CHECK(p.stats.live_at_end == 0);
    const auto results = rp::replay_all<rp::Stacks>(p, {1, true});
    CHECK(results.size() == boost::mp11::mp_size<rp::Stacks>::value);
    for (const auto& r : results) {
      CAPTURE(r.name);
      CHECK(r.ops == p.steps.size());
      CHECK(r.held_after == 0);
      CHECK(r.failures == 0);  // every configured stack, arena sizing included, serves both shipped traces
      CHECK(r.peak_live == p.stats.peak_live_bytes);
      const double ratio = static_cast<double>(r.held_at_peak_live) / static_cast<double>(r.peak_live);
      CHECK(r.fragmentation == doctest::Approx(ratio));
      // Counted stacks hold at least what is live. glibc's figure comes from mallinfo2, which reads 0 under ASan.
      if (r.name != "glibc malloc") CHECK(r.peak_held >= r.peak_live);
    }
    // The anchors and the Mallocator stack serve every request.
    for (std::size_t i = 0; i < boost::mp11::mp_size<rp::AnchorStacks>::value; ++i) {
      CHECK(results[i].failures == 0);
      CHECK(results[i].refused_frees == 0);
    }
  }
}
