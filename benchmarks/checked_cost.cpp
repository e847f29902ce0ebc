// What Checked costs on W1-W3 (docs/checked.md): one workload, plain or checked, at a given length, for callgrind.
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null alloy_checked_cost w1 checked 100000   (and 200000)
// The difference in instructions between the two lengths, divided by the extra operations, is the cost per operation
// with set-up cancelled. W1: pairs (2 ops each); W2: rounds of 4096 allocations and 4096 shuffled frees; W3: steps.
// W1 and W2 under Checked use 128-byte blocks: a 64-byte request needs 64 + 32 (header) + 16 (guard) bytes.
#include <alloy/bitmapped_block.hpp>
#include <alloy/checked.hpp>
#include <alloy/mallocator.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
using namespace alloy;
struct X { std::uint64_t x = 0x9E3779B97F4A7C15ull; std::uint64_t next() { x ^= x >> 12; x ^= x << 25; x ^= x >> 27; return x * 0x2545F4914F6CDD1Dull; } };
volatile std::uintptr_t sink;
template <class A> std::size_t w1(A& a, std::size_t pairs) {
  for (std::size_t i = 0; i < pairs; ++i) { Block b = a.allocate(64); *static_cast<char*>(b.ptr) = 1; sink = sink + address_of(b.ptr); a.deallocate(b); }
  return 2 * pairs;
}
template <class A> std::size_t w2(A& a, std::size_t rounds) {
  std::vector<Block> bs(4096); std::vector<std::size_t> perm(4096); X r;
  for (std::size_t i = 0; i < 4096; ++i) perm[i] = i;
  for (std::size_t i = 4095; i > 0; --i) std::swap(perm[i], perm[r.next() % (i + 1)]);
  for (std::size_t k = 0; k < rounds; ++k) {
    for (auto& b : bs) { b = a.allocate(64); *static_cast<char*>(b.ptr) = 1; sink = sink + address_of(b.ptr); }
    for (std::size_t i : perm) a.deallocate(bs[i]);
  }
  return rounds * 8192;
}
template <class A> std::size_t w3(A& a, std::size_t steps) {
  std::vector<Block> slots(2048); X r;
  for (std::size_t i = 0; i < steps; ++i) {
    Block& b = slots[r.next() % 2048];
    if (!b) { b = a.allocate(1 + r.next() % 512); if (b) { *static_cast<char*>(b.ptr) = 1; sink = sink + address_of(b.ptr); } }
    else { a.deallocate(b); b = {}; }
  }
  for (Block& b : slots) if (b) a.deallocate(b);
  return steps;
}
int main(int argc, char** argv) {
  if (argc != 4) return 2;
  const bool checked = std::strcmp(argv[2], "checked") == 0;
  const std::size_t scale = std::strtoul(argv[3], nullptr, 10);
  using W12 = BitmappedBlock<64, 16, Mallocator, Multiblock::no>;
  using W12C = BitmappedBlock<128, 16, Mallocator, Multiblock::no>;  // 64 bytes + 32 header + 16 guard fit in 128
  using W3 = BitmappedBlock<64, 16, Mallocator, Multiblock::yes>;
  if (argv[1][1] == '1') { if (checked) { Checked<W12C> a(W12C(1 << 21)); w1(a, scale); } else { W12 a(1 << 20); w1(a, scale); } }
  if (argv[1][1] == '2') { if (checked) { Checked<W12C> a(W12C(1 << 19)); w2(a, scale); } else { W12 a(1 << 18); w2(a, scale); } }
  if (argv[1][1] == '3') { if (checked) { Checked<W3> a(W3(1 << 22)); w3(a, scale); } else { W3 a(1 << 22); w3(a, scale); } }
}
