#!/usr/bin/env bash
# What including alloy costs a translation unit: g++ -std=c++20 -O2 -c, user+sys CPU seconds, best of N runs (CPU
# time, not wall time: the machine is shared, and the least of N is the run least disturbed), less an empty unit's.
# Rows: every public host header alone; the umbrella <alloy/alloy.hpp>; a five-layer stack used through PmrResource
# by a std::pmr::vector (the shape a user writes); and two floors: the standard (and Mp11) headers that the umbrella's
# headers include, alone, and the stack's program with std::pmr::new_delete_resource() in place of the alloy stack,
# over the standard headers that its alloy headers include. A floor is what the row above it cannot go below while
# those headers stay.
# Usage: tools/compile_cost.sh [runs]   (default 5; prints a Markdown table)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
cxx=${CXX:-g++}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(-std=c++20 -O2 -Iinclude -Ibuilding_blocks -c -o "$tmp/x.o")

best_cpu() {  # least user+sys seconds of compiling $1, $runs times
  local t=()
  for ((i = 0; i < runs; ++i)); do
    /usr/bin/time -o "$tmp/t" -f '%U %S' "$cxx" "${flags[@]}" "$1" >/dev/null 2>&1
    t+=("$(tail -1 "$tmp/t" | awk '{print $1 + $2}')")
  done
  printf '%s\n' "${t[@]}" | sort -n | head -1
}
std_includes() {  # the non-alloy #include lines of every alloy header that the unit $1 reaches
  local h
  for h in $("$cxx" -std=c++20 -Iinclude -Ibuilding_blocks -fsyntax-only -H "$1" 2>&1 |
             awk '/^\.+ (include|building_blocks)\// {print $2}' | sort -u); do
    awk '/^#include </ && !/<alloy\// {sub(/ *\/\/.*/, ""); print}' "$h"
  done | sort -u
}

printf 'int main() {}\n' >"$tmp/empty.cpp"
base=$(best_cpu "$tmp/empty.cpp")
row() { awk -v t="$2" -v b="$base" -v n="$1" 'BEGIN {printf "| %s | %.2f |\n", n, t - b}'; }

echo "| translation unit | s added ($cxx -O2 -c, user+sys, best of $runs; empty unit $base s) |"
echo "|---|--:|"
for h in $(cd include && ls alloy/*.hpp alloy/adapters/*.hpp; cd ../building_blocks && ls alloy/*.hpp); do
  case "$h" in *cuda*|*stream_ordered*|*per_device*|*tensorrt*) continue ;; esac  # CUDA headers: not host-only
  printf '#include <%s>\nint main() {}\n' "$h" >"$tmp/h.cpp"
  row "\`<$h>\`" "$(best_cpu "$tmp/h.cpp")"
done
printf '#include <alloy/alloy.hpp>\nint main() {}\n' >"$tmp/umbrella.cpp"
{ std_includes "$tmp/umbrella.cpp"; printf 'int main() {}\n'; } >"$tmp/umbrella_floor.cpp"
row "floor of the umbrella: the standard and Mp11 headers its headers include, alone" \
  "$(best_cpu "$tmp/umbrella_floor.cpp")"
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
row "a five-layer stack through PmrResource and std::pmr::vector (StatsCollector, Segregator, FreeList, AllocatorList, BitmappedBlock)" "$(best_cpu "$tmp/stack.cpp")"
{
  std_includes "$tmp/stack.cpp"
  cat <<'EOF'
#include <memory_resource>
#include <vector>
int main() {
  std::pmr::vector<int> v(std::pmr::new_delete_resource());
  for (int i = 0; i < 1000; ++i) v.push_back(i);
  return v[999] == 999 ? 0 : 1;
}
EOF
} >"$tmp/stack_floor.cpp"
row "floor of the stack: the same program over std::pmr::new_delete_resource(), with the standard and Mp11 headers of the stack's alloy headers" \
  "$(best_cpu "$tmp/stack_floor.cpp")"
