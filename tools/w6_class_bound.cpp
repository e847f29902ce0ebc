// The lower bound behind docs/design_notes.md ("GeneralPurpose"): on W6's sequence (W3's 2048 slots, 10^7 steps of
// allocate 1 + next() % 512 bytes / deallocate, benchmarks/w3_loop.hpp and w6_list_steady.cpp), an allocator that
// keeps every freed block in its size class for ever holds at least the sum over the classes of (the class's peak
// count of live blocks) x (class size). This program replays the sequence (same generator and seed as
// benchmarks/common.hpp's Xorshift64s) and prints that sum for classes of 16, 64 and 256 bytes, beside the peak
// live bytes, which must equal W6's peak_live_bytes (288 KiB) as a check that the sequence is the same.
// Then, for 16-byte classes over a bump pointer, what borrowing across classes does to the bytes held (the bump's
// high-water mark): a request whose class list is empty takes a free block of a larger class, up to f times its
// class size, before it bumps; the block then goes back either to the list of the request's class (its capacity
// is lost to the smaller class) or to the list of its own capacity (which needs the capacity at free: a header or
// a side table, since a Block carries the requested size).
// Last, the first design of examples/general_purpose.hpp's GeneralPurpose (16-byte classes borrowing up to 1.5x,
// freed to the block's own class; docs/cookbook.md has the one it builds now and why) over regions of R bytes as an AllocatorList of Regions serves them (the most recently used
// region first, a new region when none has room), each region's first bytes a map of the blocks' classes: one byte
// per 16-byte granule (R / 16, what GeneralPurpose uses) or one bit per granule marking block starts (R / 128, a
// block's capacity then being the distance to the next start); or no map and a 16-byte header in every block (the
// request grows by 16 bytes, so a 512-byte request takes a 528-byte block). Held = regions x R plus the list's node
// array (48 bytes a node, capacity doubling), which is what W6's counting parent sees; carved = the bytes bumped
// (maps included), which does not round to whole regions.
//   g++ -std=c++20 -O2 tools/w6_class_bound.cpp -o /tmp/w6_class_bound && /tmp/w6_class_bound
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {
struct Xorshift64s {  // benchmarks/common.hpp
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  std::uint64_t next() noexcept {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    return x * 0x2545F4914F6CDD1Dull;
  }
};
constexpr std::size_t slots = 2048, steps = 10'000'000, max_size = 512;
}  // namespace

int main() {
  const std::size_t steps_per_class[] = {16, 64, 256};
  std::vector<std::size_t> slot(slots, 0);  // the live block's size, 0 = empty
  std::vector<std::size_t> count[3], peak[3];
  for (int k = 0; k < 3; ++k) count[k] = peak[k] = std::vector<std::size_t>(max_size / steps_per_class[k], 0);
  std::size_t live = 0, peak_live = 0;
  Xorshift64s rng;
  for (std::size_t i = 0; i < steps; ++i) {
    std::size_t& s = slot[rng.next() % slots];
    if (s == 0) {
      s = 1 + rng.next() % max_size;
      live += s;
      peak_live = std::max(peak_live, live);
      for (int k = 0; k < 3; ++k) {
        const std::size_t c = (s - 1) / steps_per_class[k];
        peak[k][c] = std::max(peak[k][c], ++count[k][c]);
      }
    } else {
      live -= s;
      for (int k = 0; k < 3; ++k) --count[k][(s - 1) / steps_per_class[k]];
      s = 0;
    }
  }
  std::printf("peak live: %zu bytes (%.1f KiB)\n", peak_live, peak_live / 1024.0);
  for (int k = 0; k < 3; ++k) {
    std::size_t sum = 0;
    for (std::size_t c = 0; c < peak[k].size(); ++c) sum += peak[k][c] * (c + 1) * steps_per_class[k];
    std::printf("%3zu-byte classes: sum of per-class high-water marks %zu bytes (%.1f KiB)\n", steps_per_class[k], sum,
                sum / 1024.0);
  }
  constexpr std::size_t step = 16, nc = max_size / step;
  for (const bool back_to_own : {false, true}) {
    for (const double f : {1.25, 1.5, 2.0, 64.0}) {
      std::vector<std::size_t> size(slots, 0), cap(slots, 0);
      std::vector<std::vector<std::size_t>> lists(nc);  // the capacities of the free blocks on each class's list
      std::size_t held = 0, borrowed = 0, allocations = 0;
      Xorshift64s r;
      for (std::size_t i = 0; i < steps; ++i) {
        const std::size_t k = r.next() % slots;
        if (size[k] == 0) {
          const std::size_t n = 1 + r.next() % max_size, c = (n - 1) / step;
          std::size_t got = 0;
          ++allocations;
          for (std::size_t d = c; d < nc && (d + 1) <= f * (c + 1); ++d) {
            if (!lists[d].empty()) {
              got = lists[d].back();
              lists[d].pop_back();
              borrowed += d != c;
              break;
            }
          }
          if (!got) held += got = (c + 1) * step;
          size[k] = n;
          cap[k] = got;
        } else {
          lists[back_to_own ? (cap[k] - 1) / step : (size[k] - 1) / step].push_back(cap[k]);
          size[k] = 0;
        }
      }
      std::printf("16-byte classes, borrowing up to %4.2fx, freed to the %s class: held %.1f KiB (%.1f%% of "
                  "allocations borrowed)\n",
                  f, back_to_own ? "block's own" : "request's", held / 1024.0, 100.0 * borrowed / allocations);
    }
  }
  for (const std::size_t map_div : {std::size_t{16}, std::size_t{128}, std::size_t{0}}) {  // 0: a header, no map
    const std::size_t header = map_div == 0 ? step : 0, ncl = (max_size + header) / step;
    for (const std::size_t region : {std::size_t{8} << 10, std::size_t{16} << 10, std::size_t{32} << 10,
                                     std::size_t{64} << 10}) {
      const std::size_t map =
          map_div == 0 ? 0 : std::max<std::size_t>(step, (region / map_div + step - 1) / step * step);
      std::vector<std::size_t> size(slots, 0), cap(slots, 0), bump;  // bump: each region's offset, MRU first
      std::vector<std::vector<std::size_t>> lists(ncl);
      Xorshift64s r;
      for (std::size_t i = 0; i < steps; ++i) {
        const std::size_t k = r.next() % slots;
        if (size[k] == 0) {
          const std::size_t n = 1 + r.next() % max_size + header, c = (n - 1) / step;
          std::size_t got = 0;
          for (std::size_t d = c; d < ncl && 2 * (d + 1) <= 3 * (c + 1); ++d) {
            if (!lists[d].empty()) {
              got = lists[d].back();
              lists[d].pop_back();
              break;
            }
          }
          if (!got) {
            got = (c + 1) * step;
            std::size_t j = 0;
            while (j < bump.size() && bump[j] + got > region) ++j;
            if (j == bump.size()) bump.push_back(map);
            bump[j] += got;
            std::rotate(bump.begin(), bump.begin() + j, bump.begin() + j + 1);
          }
          size[k] = n;
          cap[k] = got;
        } else {
          lists[(cap[k] - 1) / step].push_back(cap[k]);
          size[k] = 0;
        }
      }
      std::size_t nodes = 1, carved = 0;
      while (nodes < bump.size()) nodes *= 2;
      for (const std::size_t b : bump) carved += b;
      std::printf("borrowing up to 1.5x over %2zu KiB regions, %s: %zu regions, held %.1f KiB, carved %.1f KiB\n",
                  region >> 10, map_div == 16 ? "a byte map per granule" : map_div == 128 ? "a bit map per granule "
                                                                                         : "a 16-byte header      ",
                  bump.size(), (bump.size() * region + nodes * 48) / 1024.0, carved / 1024.0);
    }
  }
}
