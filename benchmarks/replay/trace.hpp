#pragma once
// Trace parser for alloy-replay (docs/replay.md): CSV `op,id,size,alignment,thread`, validated line by line.
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <alloy/recording_allocator.hpp>

namespace alloy::replay {

/// A parsed trace: the events in file order, or the first error with its 1-based line number.
struct ParsedTrace {
  std::vector<TraceEvent> events;
  std::string error;        // empty when the trace is valid
  std::size_t error_line = 0;
  [[nodiscard]] bool ok() const noexcept { return error.empty(); }
};

namespace detail {
template <class T>
bool parse_field(std::string_view& rest, T& out, bool last) {
  const std::size_t comma = rest.find(',');
  if (last ? comma != std::string_view::npos : comma == std::string_view::npos) return false;
  const std::string_view f = rest.substr(0, last ? rest.size() : comma);
  if (f.empty()) return false;
  const auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), out);
  if (ec != std::errc{} || p != f.data() + f.size()) return false;
  rest.remove_prefix(last ? rest.size() : comma + 1);
  return true;
}
}  // namespace detail

/// Parses trace text. Rules: the first non-comment line is the header `op,id,size,alignment,thread`; blank lines and
/// lines starting with `#` are ignored; CRLF is accepted. Each event has exactly five fields: op `a`, `d` or `r`;
/// id, size, alignment, thread unsigned decimal integers; alignment a power of two. `a` needs an id that is not live and
/// size >= 1; `d` and `r` need a live id; `r` needs size >= 1 (a resize to 0 is written as `d`). The size of a `d` is
/// informational (the replay frees the block at its current size).
inline ParsedTrace parse_trace(std::string_view text) {
  ParsedTrace t;
  std::unordered_map<std::uint64_t, bool> live;
  bool header = false;
  std::size_t line_no = 0;
  auto fail = [&](std::string msg) {
    t.error = std::move(msg);
    t.error_line = line_no;
    t.events.clear();
    return t;
  };
  while (!text.empty()) {
    ++line_no;
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    if (!header) {
      if (line != "op,id,size,alignment,thread") return fail("expected the header `op,id,size,alignment,thread`");
      header = true;
      continue;
    }
    if (line.size() < 2 || line[1] != ',') return fail("expected `op,` with op one of a, d, r");
    TraceEvent e;
    switch (line[0]) {
      case 'a': e.op = TraceEvent::Op::allocate; break;
      case 'd': e.op = TraceEvent::Op::deallocate; break;
      case 'r': e.op = TraceEvent::Op::reallocate; break;
      default: return fail("unknown op `" + std::string(1, line[0]) + "` (expected a, d or r)");
    }
    std::string_view rest = line.substr(2);
    if (!detail::parse_field(rest, e.id, false) || !detail::parse_field(rest, e.size, false) ||
        !detail::parse_field(rest, e.alignment, false) || !detail::parse_field(rest, e.thread, true))
      return fail("expected five comma-separated fields op,id,size,alignment,thread with unsigned integers");
    if (!is_power_of_two(e.alignment)) return fail("alignment " + std::to_string(e.alignment) + " is not a power of two");
    const bool is_live = live.count(e.id) != 0;
    switch (e.op) {
      case TraceEvent::Op::allocate:
        if (is_live) return fail("id " + std::to_string(e.id) + " is allocated while still live");
        if (e.size == 0) return fail("allocation of 0 bytes");
        live.emplace(e.id, true);
        break;
      case TraceEvent::Op::deallocate:
        if (!is_live) return fail("id " + std::to_string(e.id) + " is freed but not live");
        live.erase(e.id);
        break;
      case TraceEvent::Op::reallocate:
        if (!is_live) return fail("id " + std::to_string(e.id) + " is reallocated but not live");
        if (e.size == 0) return fail("reallocation to 0 bytes (write a `d` instead)");
        break;
    }
    t.events.push_back(e);
  }
  if (!header) {
    ++line_no;
    return fail("empty trace: no header");
  }
  return t;
}

/// Reads and parses a file; a file that cannot be read is an error at line 0.
inline ParsedTrace read_trace_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ParsedTrace t;
    t.error = "cannot open " + path;
    return t;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_trace(ss.str());
}

}  // namespace alloy::replay
