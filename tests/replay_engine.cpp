// The replay engine of alloy-replay used as a library (benchmarks/replay/replay.hpp, stacks.hpp), the shipped
// traces (benchmarks/replay/traces/) and their generator (tools/make_traces.hpp): this is the smoke test of the tool
// in the test build.
#include <alloy/null_allocator.hpp>

#include <filesystem>
#include <string>

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
  CHECK(p.stats.live_at_end == 1);
  CHECK(p.steps[5].op == Op::allocate);
  CHECK(p.steps[5].alignment == 256);
  CHECK(p.steps[6].op == Op::deallocate);
  CHECK(p.steps[6].alignment == 16);  // freed with the alignment it was allocated with
  CHECK(p.steps[3].alignment == 64);
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

TEST_CASE("replay: the shipped traces are what tools/make_traces.hpp generates") {
  for (const auto& [file, text] : {std::pair{"inference.csv", alloy::traces::make_inference_trace()},
                                   std::pair{"strings.csv", alloy::traces::make_strings_trace()}}) {
    CAPTURE(file);
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
      if (r.failures == 0) CHECK(r.peak_live == p.stats.peak_live_bytes);
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
