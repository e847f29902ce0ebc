// alloy-replay: replays allocation traces (docs/replay.md) on every stack of stacks.hpp and prints, per stack,
// ns/op, peak bytes held from the parent, failures and fragmentation.
//
//   alloy-replay [--repetitions N] [--stack SUBSTRING] [--csv] [--list] TRACE.csv...
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "replay.hpp"
#include "stacks.hpp"
#include "trace.hpp"

namespace {

void usage(std::FILE* f) {
  std::fprintf(f,
               "usage: alloy-replay [--repetitions N] [--stack SUBSTRING] [--csv] [--list] TRACE.csv...\n"
               "  Replays each trace serially, in trace order, on every configured stack (benchmarks/replay/stacks.hpp).\n"
               "  --repetitions N  timed passes per stack; ns/op is their median (default 5)\n"
               "  --stack S        only stacks whose name contains S\n"
               "  --csv            one CSV row per (trace, stack) instead of Markdown tables\n"
               "  --list           print the stack names and exit\n");
}

std::string human(std::size_t b) {
  char buf[32];
  if (b >= (std::size_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (1 << 30));
  else if (b >= (std::size_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / (1 << 20));
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / 1024);
  else std::snprintf(buf, sizeof buf, "%zu B", b);
  return buf;
}

std::string base_name(const std::string& p) {
  const auto s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace alloy::replay;
  ReplayOptions opt;
  std::string filter;
  bool csv = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--repetitions" || a == "-r") && i + 1 < argc) {
      opt.repetitions = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--stack" && i + 1 < argc) {
      filter = argv[++i];
    } else if (a == "--csv") {
      csv = true;
    } else if (a == "--list") {
      boost::mp11::mp_for_each<boost::mp11::mp_transform<boost::mp11::mp_identity, Stacks>>(
          [](auto t) { std::printf("%s\n", decltype(t)::type::name); });
      return 0;
    } else if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      usage(stderr);
      return 2;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    usage(stderr);
    return 2;
  }
  if (csv) std::printf("trace,stack,ops,ns_per_op,peak_held,held_at_peak_live,peak_live,fragmentation,failures,refused_frees,held_after\n");
  int rc = 0;
  for (const std::string& f : files) {
    const ParsedTrace parsed = read_trace_file(f);
    if (!parsed.ok()) {
      std::fprintf(stderr, "alloy-replay: %s:%zu: %s\n", f.c_str(), parsed.error_line, parsed.error.c_str());
      rc = 1;
      continue;
    }
    const PreparedTrace p = prepare(parsed.events);
    const TraceStats& s = p.stats;
    std::size_t done = 0;
    const auto results = replay_all<Stacks>(p, opt, filter, [&](const char* name) {
      std::fprintf(stderr, "[%s] stack %zu: %s\n", base_name(f).c_str(), ++done, name);
    });
    if (csv) {
      for (const StackResult& r : results)
        std::printf("%s,\"%s\",%zu,%.2f,%zu,%zu,%zu,%.3f,%zu,%zu,%zu\n", base_name(f).c_str(), r.name.c_str(), r.ops,
                    r.ns_per_op, r.peak_held, r.held_at_peak_live, r.peak_live, r.fragmentation, r.failures,
                    r.refused_frees, r.held_after);
      continue;
    }
    std::printf("\n### %s\n\n", base_name(f).c_str());
    std::printf("%zu events (%zu a, %zu d, %zu r), %zu thread(s) replayed serially in trace order; peak live %s in "
                "%zu blocks; largest block %s; largest alignment %zu; %zu block(s) live at the end.\n\n",
                s.events, s.allocations, s.deallocations, s.reallocations, s.threads, human(s.peak_live_bytes).c_str(),
                s.peak_live_blocks, human(s.max_size).c_str(), s.max_alignment, s.live_at_end);
    std::printf("| stack | ns/op | peak held | held at peak live | peak live | fragmentation | failures | frees refused |\n");
    std::printf("|---|--:|--:|--:|--:|--:|--:|--:|\n");
    for (const StackResult& r : results) {
      std::printf("| %s | %.1f | %s | %s | %s | %.2f | %zu | %zu |\n", r.name.c_str(), r.ns_per_op,
                  human(r.peak_held).c_str(), human(r.held_at_peak_live).c_str(), human(r.peak_live).c_str(),
                  r.fragmentation, r.failures, r.refused_frees);
      if (r.held_after != 0)
        std::fprintf(stderr, "alloy-replay: %s still held %zu bytes after it was destroyed\n", r.name.c_str(),
                     r.held_after);
    }
  }
  return rc;
}
