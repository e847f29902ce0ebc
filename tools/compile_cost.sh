#!/usr/bin/env bash
# What including alloy costs a translation unit: g++ -std=c++20 -O2 -c, user CPU seconds, median of N runs, less an
# empty unit's. Rows: every public host header alone, the umbrella <alloy/alloy.hpp>, and a five-layer stack used
# through PmrResource by a std::pmr::vector (the shape a user writes).
# Usage: tools/compile_cost.sh [runs]   (default 5; prints a Markdown table)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
cxx=${CXX:-g++}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(-std=c++20 -O2 -Iinclude -Ibuilding_blocks -c -o "$tmp/x.o")

median_user() {  # median user seconds of compiling $1, $runs times
  local t=()
  for ((i = 0; i < runs; ++i)); do
    /usr/bin/time -o "$tmp/t" -f %U "$cxx" "${flags[@]}" "$1" >/dev/null 2>&1
    t+=("$(tail -1 "$tmp/t")")
  done
  printf '%s\n' "${t[@]}" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'
}

printf 'int main() {}\n' >"$tmp/empty.cpp"
base=$(median_user "$tmp/empty.cpp")
row() { awk -v t="$2" -v b="$base" -v n="$1" 'BEGIN {printf "| %s | %.2f |\n", n, t - b}'; }

echo "| translation unit | s added ($cxx -O2, median of $runs; empty unit $base s) |"
echo "|---|--:|"
for h in $(cd include && ls alloy/*.hpp alloy/adapters/*.hpp; cd ../building_blocks && ls alloy/*.hpp); do
  case "$h" in *cuda*|*stream_ordered*|*per_device*|*tensorrt*) continue ;; esac  # CUDA headers: not host-only
  printf '#include <%s>\nint main() {}\n' "$h" >"$tmp/h.cpp"
  row "\`<$h>\`" "$(median_user "$tmp/h.cpp")"
done
cat >"$tmp/stack.cpp" <<'EOF'
#include <alloy/adapters/pmr_resource.hpp>
#include <alloy/allocator_list.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/free_list.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/segregator.hpp>
#include <alloy/stats_collector.hpp>
#include <memory_resource>
#include <vector>
struct Chunk {
  alloy::BitmappedBlock<64, 64, alloy::Mallocator> operator()(std::size_t n) const {
    return alloy::BitmappedBlock<64, 64, alloy::Mallocator>(n < (1u << 20) ? (1u << 20) : n);
  }
};
using Stack = alloy::StatsCollector<alloy::Segregator<256, alloy::FreeList<alloy::AllocatorList<Chunk>, 0, 256>,
                                                      alloy::Mallocator>>;
int main() {
  alloy::PmrResource<Stack> res;
  std::pmr::vector<int> v(&res);
  for (int i = 0; i < 1000; ++i) v.push_back(i);
  return v[999] == 999 ? 0 : 1;
}
EOF
row "a five-layer stack through PmrResource and std::pmr::vector (StatsCollector, Segregator, FreeList, AllocatorList, BitmappedBlock)" "$(median_user "$tmp/stack.cpp")"
