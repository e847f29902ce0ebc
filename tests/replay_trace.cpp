// The trace format of alloy-replay (docs/replay.md): the line writer and the parser.
#include <cstdint>
#include <cstring>
#include <string>

#include <doctest/doctest.h>

#include "../benchmarks/replay/trace.hpp"

using alloy::TraceEvent;
using alloy::replay::parse_trace;
using Op = alloy::TraceEvent::Op;

TEST_CASE("trace: format_trace_line round-trips through the parser, extremes included") {
  const TraceEvent evs[] = {
      {Op::allocate, UINT64_MAX, SIZE_MAX, std::size_t{1} << 63, UINT32_MAX},
      {Op::reallocate, UINT64_MAX, 1, 1, 0},
      {Op::deallocate, UINT64_MAX, 0, 8, 7},
  };
  std::string text = alloy::trace_header;
  for (const TraceEvent& e : evs) {
    char buf[96];
    const std::size_t n = alloy::format_trace_line(e, buf, sizeof buf);
    REQUIRE(n > 0);
    CHECK(buf[n - 1] == '\n');
    text.append(buf, n);
  }
  char small[8];
  CHECK(alloy::format_trace_line(evs[0], small, sizeof small) == 0);
  const auto t = parse_trace(text);
  REQUIRE(t.ok());
  REQUIRE(t.events.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK(t.events[i] == evs[i]);
}

TEST_CASE("trace: format_trace_line needs room for the line and its terminating NUL") {
  const TraceEvent e{Op::allocate, 1, 2, 16, 0};  // "a,1,2,16,0\n": 11 characters
  char buf[32];
  std::memset(buf, '#', sizeof buf);
  CHECK(alloy::format_trace_line(e, buf, 11) == 0);  // no room for the NUL: nothing written
  CHECK(buf[0] == '#');
  CHECK(buf[11] == '#');
  CHECK(alloy::format_trace_line(e, buf, 12) == 11);
  CHECK(std::string(buf, 11) == "a,1,2,16,0\n");
  CHECK(buf[11] == '\0');
}

TEST_CASE("trace: comments, blank lines, CRLF; ids may be reused once freed") {
  const auto t = parse_trace("# recorded by hand\r\n\r\nop,id,size,alignment,thread\r\n"
                             "a,5,100,16,0\r\n# a comment\n\nd,5,100,16,1\n#no space after the hash\na,5,7,64,2\n");
  REQUIRE(t.ok());
  REQUIRE(t.events.size() == 3);
  CHECK(t.events[2] == TraceEvent{Op::allocate, 5, 7, 64, 2});
  CHECK(parse_trace("op,id,size,alignment,thread").ok());  // no events, no final newline
}

TEST_CASE("trace: every malformed line is reported with its line number") {
  struct Bad {
    const char* text;
    std::size_t line;
    const char* words;
  };
  const Bad cases[] = {
      {"", 1, "no header"},
      {"op,id,size\n", 1, "header"},
      {"op,id,size,alignment,thread,extra\na,1,2,16,0\n", 1, "header"},
      {"op,id,size,alignment,thread\nx,1,2,16,0\n", 2, "unknown op"},
      {"op,id,size,alignment,thread\na1,2,16,0\n", 2, "op"},
      {"op,id,size,alignment,thread\na11,2,16,0,0\n", 2, "`op,`"},  // five fields after `a1`, but no comma after the op
      {"op,id,size,alignment,thread\na,1,2,16\n", 2, "five"},
      {"op,id,size,alignment,thread\na,1,2,16,0,9\n", 2, "five"},
      {"op,id,size,alignment,thread\na,1,-2,16,0\n", 2, "five"},
      {"op,id,size,alignment,thread\na,1,2,16,0x1\n", 2, "five"},
      {"op,id,size,alignment,thread\na,1,,16,0\n", 2, "five"},
      {"op,id,size,alignment,thread\na,1,99999999999999999999999,16,0\n", 2, "five"},
      {"op,id,size,alignment,thread\na,18446744073709551616,2,16,0\n", 2, "five"},  // id > UINT64_MAX
      {"op,id,size,alignment,thread\na,1,2,16,4294967296\n", 2, "five"},            // thread > UINT32_MAX
      {"op,id,size,alignment,thread\na,1,2,24,0\n", 2, "power of two"},
      {"op,id,size,alignment,thread\na,1,2,0,0\n", 2, "power of two"},
      {"op,id,size,alignment,thread\na,1,0,16,0\n", 2, "0 bytes"},
      {"op,id,size,alignment,thread\na,1,2,16,0\na,1,2,16,0\n", 3, "still live"},
      {"op,id,size,alignment,thread\nd,1,2,16,0\n", 2, "not live"},
      {"op,id,size,alignment,thread\na,1,2,16,0\nd,1,2,16,0\nr,1,2,16,0\n", 4, "not live"},
      {"op,id,size,alignment,thread\na,1,2,16,0\nr,1,0,16,0\n", 3, "0 bytes"},
      // Line numbers count every line of the file: comments, blank lines and CRLF blank lines included.
      {"# c\n\nop,id,size,alignment,thread\r\n\r\n# c\na,1,2,16,0\nx,1,2,16,0\n", 7, "unknown op"},
  };
  for (const Bad& b : cases) {
    CAPTURE(b.text);
    const auto t = parse_trace(b.text);
    CHECK(!t.ok());
    CHECK(t.events.empty());
    CHECK(t.error_line == b.line);
    CHECK(t.error.find(b.words) != std::string::npos);
  }
}

TEST_CASE("trace: read_trace_file reports a missing file") {
  const auto t = alloy::replay::read_trace_file("/nonexistent/alloy/trace.csv");
  CHECK(!t.ok());
  CHECK(t.error.find("cannot open") != std::string::npos);
}

TEST_CASE("trace: a long trace parses") {
  std::string text = alloy::trace_header;
  for (std::uint64_t i = 1; i <= 20000; ++i) {
    text += "a," + std::to_string(i) + "," + std::to_string(i % 1000 + 1) + ",16,0\n";
    if (i % 2 == 0) text += "d," + std::to_string(i - 1) + ",0,16,0\n";
  }
  const auto t = parse_trace(text);
  REQUIRE(t.ok());
  CHECK(t.events.size() == 30000);
}
