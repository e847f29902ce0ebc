// alloy-make-traces: writes the shipped traces (docs/replay.md) into a directory, by default the current one:
//   alloy-make-traces [DIR]   ->  DIR/inference.csv, DIR/strings.csv
// Deterministic (make_traces.hpp): running it again gives the same bytes.
#include <cstdio>
#include <string>

#include "make_traces.hpp"

static bool write_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  const std::string inference = alloy::traces::make_inference_trace();
  const std::string strings = alloy::traces::make_strings_trace();
  if (!write_file(dir + "/inference.csv", inference) || !write_file(dir + "/strings.csv", strings)) {
    std::fprintf(stderr, "alloy-make-traces: cannot write into %s\n", dir.c_str());
    return 1;
  }
  std::printf("%s/inference.csv: %zu bytes\n%s/strings.csv: %zu bytes\n", dir.c_str(), inference.size(), dir.c_str(),
              strings.size());
  return 0;
}
