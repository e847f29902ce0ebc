// docs/blocks.md, the map of the blocks, checked against the library (tests/blocks_map.cpp, and
// tests/blocks_map_cuda.cpp for the CUDA headers). The page's table names, for each row, a block, its header, its
// test files, its doc page, the instantiation that is checked ("checked as"), that instantiation's primitives and its
// memory space. This file reads the table, computes the primitives and the memory space from the has_x concepts,
// and checks that every public header, test file and doc page named exists and that every public header and every
// test file is named. A mismatch prints the row as the library sees it, ready to paste.
#pragma once
#include <alloy/concepts.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

// Error messages of a test, built once per failure: plain concatenation reads best.
// NOLINTBEGIN(performance-inefficient-string-concatenation)
namespace blocks_map {

#ifndef ALLOY_SOURCE_DIR
#error "tests/CMakeLists.txt defines ALLOY_SOURCE_DIR for the blocks_map tests"
#endif
inline const std::filesystem::path source_dir{ALLOY_SOURCE_DIR};

/// The primitives of A, in the page's order: each one whose has_x concept holds.
template <class A>
std::string capabilities() {
  using namespace alloy;
  std::string s;
  auto add = [&s](bool has, const char* name) {
    if (!has) return;
    if (!s.empty()) s += ' ';
    s += name;
  };
  add(allocator<A>, "allocate");
  add(has_aligned_allocate<A>, "aligned_allocate");
  add(has_allocate_all<A>, "allocate_all");
  add(has_allocate_fresh<A>, "allocate_fresh");
  add(has_expand<A>, "expand");
  add(has_reallocate<A>, "reallocate");
  add(has_aligned_reallocate<A>, "aligned_reallocate");
  add(has_owns<A>, "owns");
  add(has_resolve_internal_pointer<A>, "resolve_internal_pointer");
  add(has_deallocate<A>, "deallocate");
  add(has_deallocate_all<A>, "deallocate_all");
  add(has_empty<A>, "empty");
  add(has_good_alloc_size<A>, "good_alloc_size");
  add(has_copy<A>, "copy");
  add(has_stream_ordered<A>, "stream_ordered");
  add(has_instance<A>, "instance");
  return s;
}

inline const char* space_name(alloy::MemorySpace m) {
  switch (m) {
    case alloy::MemorySpace::host: return "host";
    case alloy::MemorySpace::device: return "device";
    case alloy::MemorySpace::host_pinned: return "host_pinned";
    case alloy::MemorySpace::managed: return "managed";
  }
  return "?";
}

/// What the library says about one "checked as" instantiation.
struct Facts {
  std::string capabilities;
  std::string memory_space;
  bool device_parent_checked = false;  // a second instantiation over a device parent compiles and is device memory
};

using Registry = std::map<std::string, Facts>;

/// Registers T under `name` (the page's "checked as" cell, without backticks). DeviceT, when given, is the same
/// block over a device parent (NoAccessAllocator): that it names a type is the check of "device parents: yes".
template <class T, class DeviceT = void>
void add(Registry& r, const std::string& name) {
  Facts f{capabilities<T>(), space_name(alloy::memory_space_of<T>()), false};
  if constexpr (!std::is_void_v<DeviceT>) {
    static_assert(alloy::memory_space_of<DeviceT>() == alloy::MemorySpace::device);
    f.device_parent_checked = true;
  }
  r.emplace(name, f);
}

struct Row {
  int line = 0;
  std::string block, header, tests, docs, checked_as, capabilities, memory_space, thread_safe;
};

inline std::string trim(std::string s) {
  auto ws = [](char c) { return c == ' ' || c == '\t'; };
  while (!s.empty() && ws(s.back())) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && ws(s[i])) ++i;
  return s.substr(i);
}
inline std::string strip_ticks(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), '`'), s.end());
  return trim(s);
}
/// Splits a cell on commas that are not inside <...> (template arguments).
inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : s) {
    if (c == '<') ++depth;
    if (c == '>') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(strip_ticks(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) out.push_back(strip_ticks(cur));
  return out;
}
/// The targets of the markdown links in a cell: [text](target).
inline std::vector<std::string> link_targets(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t i = s.find("]("); i != std::string::npos; i = s.find("](", i + 1)) {
    const std::size_t end = s.find(')', i);
    std::string t = s.substr(i + 2, end - i - 2);
    if (const auto h = t.find('#'); h != std::string::npos) t.resize(h);
    out.push_back(t);
  }
  return out;
}

inline const char* const columns[] = {"block",        "header",       "tests",      "docs",
                                      "checked as",   "capabilities", "memory space", "thread-safe"};

/// The rows of the page's one table (the lines between its header and the first line that is not a row).
inline std::vector<Row> read_table(std::vector<std::string>& errors) {
  std::ifstream in(source_dir / "docs" / "blocks.md");
  if (!in) {
    errors.push_back("cannot read docs/blocks.md");
    return {};
  }
  std::vector<Row> rows;
  std::string line;
  int n = 0;
  bool in_table = false;
  while (std::getline(in, line)) {
    ++n;
    if (!in_table) {
      if (line.rfind("| block |", 0) == 0) {
        std::string want = "|";
        for (const char* c : columns) want += std::string(" ") + c + " |";
        if (line != want) errors.push_back("docs/blocks.md:" + std::to_string(n) + ": the header must be: " + want);
        in_table = true;
        std::getline(in, line);  // |---|---|...
        ++n;
      }
      continue;
    }
    if (line.empty() || line[0] != '|') break;
    std::vector<std::string> cells;
    std::string cell;
    for (std::size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '|') {
        cells.push_back(trim(cell));
        cell.clear();
      } else {
        cell += line[i];
      }
    }
    if (cells.size() != std::size(columns)) {
      errors.push_back("docs/blocks.md:" + std::to_string(n) + ": " + std::to_string(cells.size()) + " cells, want " +
                       std::to_string(std::size(columns)));
      continue;
    }
    rows.push_back({n, cells[0], cells[1], cells[2], cells[3], strip_ticks(cells[4]), strip_ticks(cells[5]),
                    strip_ticks(cells[6]), cells[7]});
  }
  if (rows.empty()) errors.push_back("docs/blocks.md: no table found");
  return rows;
}

/// Public headers (alloy/...), as the page names them: every *.hpp under include/alloy and building_blocks/alloy
/// outside detail/.
inline std::set<std::string> public_headers() {
  std::set<std::string> out;
  for (const char* root : {"include", "building_blocks"}) {
    const auto base = source_dir / root;
    for (const auto& e : std::filesystem::recursive_directory_iterator(base / "alloy")) {
      if (!e.is_regular_file() || e.path().extension() != ".hpp") continue;
      const std::string rel = std::filesystem::relative(e.path(), base).generic_string();
      if (rel.find("/detail/") != std::string::npos) continue;
      out.insert(rel);
    }
  }
  return out;
}

/// The test sources in tests/ (top level): each is a ctest test.
inline std::set<std::string> test_files() {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(source_dir / "tests")) {
    const auto ext = e.path().extension();
    if (e.is_regular_file() && (ext == ".cpp" || ext == ".c")) out.insert(e.path().filename().string());
  }
  return out;
}

/// The page's list of tests that belong to no header: the line starting "Tests of no public header:".
inline std::set<std::string> other_tests() {
  std::ifstream in(source_dir / "docs" / "blocks.md");
  std::string line;
  std::set<std::string> out;
  const std::string key = "Tests of no public header:";
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    for (auto& t : split_list(line.substr(key.size()))) {
      if (!t.empty() && t.back() == '.') t.pop_back();
      out.insert(t);
    }
  }
  return out;
}

/// The stem a test of header h is named after: alloy/x.hpp -> "x", alloy/adapters/x.hpp -> "adapters_x".
inline std::string header_stem(const std::string& h) {
  std::string s = h.substr(0, h.size() - 4);                 // without ".hpp"
  if (s.rfind("alloy/", 0) == 0) s = s.substr(6);
  for (auto& ch : s)
    if (ch == '/') ch = '_';
  return s;
}
/// Whether `name` (a file name without extension) is `stem` or `stem` followed by '_' and a variant.
inline bool named_after(const std::string& name, const std::string& stem) {
  return name == stem || (name.size() > stem.size() && name.rfind(stem, 0) == 0 && name[stem.size()] == '_');
}
/// Tests named after no header on purpose (the page says why): the thread-safety suite every Shared block runs, and
/// the CUDA parents driven through the adapters.
inline const std::set<std::string> cross_cutting_tests = {"thread_safety", "adapters_cuda_parents"};
/// Fuzz targets named after no public header: a stack of several blocks, and the showcase of examples/.
inline const std::set<std::string> cross_cutting_fuzzers = {"composed_stack", "general_purpose"};

/// The naming rule: a test file in a row is named after the row's header (`region_shared.cpp` for SharedRegion in
/// alloy/region.hpp), after the detail header whose unit it tests (`bitmap_summary.cpp`), or is cross-cutting; a
/// fuzz target in tests/fuzz/ is named after a public header (or is cross-cutting).
inline void check_names(const std::vector<Row>& rows, const std::set<std::string>& headers,
                        std::vector<std::string>& errors) {
  const auto stem_of = [](const std::string& file) { return file.substr(0, file.rfind('.')); };
  for (const auto& r : rows) {
    const std::string h = strip_ticks(r.header);
    for (const auto& t : split_list(r.tests)) {
      if (t == "-") continue;
      const std::string name = stem_of(t);
      if (named_after(name, header_stem(h)) || cross_cutting_tests.count(name) ||
          std::filesystem::exists(source_dir / "building_blocks" / "alloy" / "detail" / (name + ".hpp")) ||
          std::filesystem::exists(source_dir / "include" / "alloy" / "detail" / (name + ".hpp")))
        continue;
      errors.push_back("docs/blocks.md:" + std::to_string(r.line) + ": test file " + t + " is not named after " + h +
                       " (" + header_stem(h) + "[_variant].cpp), nor after a detail header");
    }
  }
  for (const auto& e : std::filesystem::directory_iterator(source_dir / "tests" / "fuzz")) {
    if (!e.is_regular_file() || e.path().extension() != ".cpp") continue;
    const std::string name = e.path().stem().string();
    bool ok = cross_cutting_fuzzers.count(name) != 0;
    for (const auto& h : headers) ok = ok || named_after(name, header_stem(h));
    if (!ok) errors.push_back("tests/fuzz/" + name + ".cpp is named after no public header (<header>[_variant].cpp)");
  }
}

/// Structure: headers, test files and pages named exist; every public header and test file is named.
inline void check_structure(const std::vector<Row>& rows, std::vector<std::string>& errors) {
  const auto headers = public_headers();
  check_names(rows, headers, errors);
  std::set<std::string> named_headers, named_tests;
  for (const auto& r : rows) {
    const std::string at = "docs/blocks.md:" + std::to_string(r.line) + ": ";
    const std::string h = strip_ticks(r.header);
    if (!headers.count(h)) errors.push_back(at + "no public header " + h);
    named_headers.insert(h);
    for (const auto& t : split_list(r.tests)) {
      if (t == "-") continue;
      if (!std::filesystem::exists(source_dir / "tests" / t)) errors.push_back(at + "no test file tests/" + t);
      named_tests.insert(t);
    }
    const auto pages = link_targets(r.docs);
    if (pages.empty()) errors.push_back(at + "no doc page linked");
    for (const auto& p : pages)
      if (!std::filesystem::exists(source_dir / "docs" / p)) errors.push_back(at + "no doc page docs/" + p);
    // "parent's; device parents: no (compile_fail/x.cpp)": the file that pins the refusal exists.
    if (const auto open = r.memory_space.find("compile_fail/"); open != std::string::npos) {
      const auto end = r.memory_space.find(".cpp", open);
      const std::string f = r.memory_space.substr(open, end == std::string::npos ? end : end + 4 - open);
      if (!std::filesystem::exists(source_dir / "tests" / f)) errors.push_back(at + "no test file tests/" + f);
    }
  }
  for (const auto& h : headers)
    if (!named_headers.count(h)) errors.push_back("docs/blocks.md: public header " + h + " has no row");
  const auto others = other_tests();
  for (const auto& t : others)
    if (!std::filesystem::exists(source_dir / "tests" / t)) errors.push_back("docs/blocks.md: no test file tests/" + t);
  for (const auto& t : test_files())
    if (!named_tests.count(t) && !others.count(t) && t != "main.cpp")
      errors.push_back("docs/blocks.md: test file tests/" + t + " is named in no row (nor in 'Tests of no public header')");
}

/// Capabilities and memory space of every row whose "checked as" is registered; `cuda` selects the rows of the
/// headers that need the CUDA runtime (checked only by the CUDA build), the others are checked by the host build.
inline void check_facts(const std::vector<Row>& rows, const Registry& reg, bool cuda,
                        std::vector<std::string>& errors) {
  static const std::set<std::string> cuda_headers = {"alloy/cuda_mallocator.hpp", "alloy/stream_ordered.hpp",
                                                     "alloy/per_device.hpp", "alloy/adapters/cuda_mr_resource.hpp"};
  std::set<std::string> seen;
  for (const auto& r : rows) {
    if (cuda_headers.count(strip_ticks(r.header)) != static_cast<std::size_t>(cuda)) continue;
    const std::string at = "docs/blocks.md:" + std::to_string(r.line) + ": ";
    if (r.checked_as == "-") {
      if (r.capabilities != "-") errors.push_back(at + "a row checked as - has capabilities -");
      continue;
    }
    const auto it = reg.find(r.checked_as);
    if (it == reg.end()) {
      errors.push_back(at + "'" + r.checked_as + "' is not registered in tests/blocks_map" + (cuda ? "_cuda" : "") +
                       ".cpp");
      continue;
    }
    seen.insert(r.checked_as);
    const Facts& f = it->second;
    if (r.capabilities != f.capabilities)
      errors.push_back(at + r.checked_as + ": capabilities `" + r.capabilities + "`, the concepts say `" +
                       f.capabilities + "`");
    const std::string space = r.memory_space.substr(0, r.memory_space.find_first_of(" ;(,"));
    if (space.rfind("parent's", 0) == 0) {
      const bool says_yes = r.memory_space.find("device parents: yes") != std::string::npos;
      const bool says_no = r.memory_space.find("device parents: no") != std::string::npos;
      if (says_yes != f.device_parent_checked || says_yes == says_no)
        errors.push_back(at + r.checked_as + ": say 'device parents: yes' exactly when a device instantiation is "
                              "registered, else 'device parents: no (compile_fail/...)'");
      if (f.memory_space != "host")
        errors.push_back(at + r.checked_as + ": checked over a host parent, but its memory space is " + f.memory_space);
    } else if (space != f.memory_space) {
      errors.push_back(at + r.checked_as + ": memory space `" + space + "`, memory_space_of says `" + f.memory_space +
                       "`");
    }
  }
  for (const auto& [name, f] : reg)
    if (!seen.count(name)) errors.push_back("registered but in no row of docs/blocks.md: " + name);
}

}  // namespace blocks_map
// NOLINTEND(performance-inefficient-string-concatenation)
