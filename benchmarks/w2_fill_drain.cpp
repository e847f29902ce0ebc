// W2, fill-drain (docs/workloads.md): 256 KiB arena, 64-byte blocks (4096); allocate 4096 x 64 B until full,
// then deallocate all in one fixed shuffled order (Fisher-Yates with the workload generator, built before timing);
// 1000 rounds. ns/op = time / (1000 * 2 * 4096).
#include "common.hpp"
#include "stacks.hpp"

#include <array>
#include <numeric>
#include <utility>

namespace alloy_bench {
namespace {

constexpr std::size_t w2_arena = 256 * KiB;
constexpr std::size_t w2_blocks = 4096;
constexpr std::size_t w2_rounds = 1000;

std::array<std::uint32_t, w2_blocks> w2_permutation() {
  std::array<std::uint32_t, w2_blocks> p{};
  std::iota(p.begin(), p.end(), 0u);
  Xorshift64s rng;  // reseeded: every repetition builds the same order
  for (std::size_t i = w2_blocks - 1; i >= 1; --i) std::swap(p[i], p[rng.next() % (i + 1)]);
  return p;
}

template <class A>
[[gnu::noinline]] std::size_t w2_loop(A& a, const std::array<std::uint32_t, w2_blocks>& perm, std::size_t rounds,
                                       std::array<Block, w2_blocks>& blocks) {
  Sink sink;
  std::size_t failures = 0;
  for (std::size_t r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < w2_blocks; ++i) {
      Block b = a.allocate(64);
      if (!b) [[unlikely]] ++failures;
      else sink.touch(b, i);
      blocks[i] = b;
    }
    for (std::size_t i = 0; i < w2_blocks; ++i) {
      Block& b = blocks[perm[i]];
      if (b) a.deallocate(b);
    }
  }
  return failures;
}

template <class S>
void w2_bench(benchmark::State& state) {
  for (auto _ : state) {
    const auto perm = w2_permutation();
    std::array<Block, w2_blocks> blocks{};
    auto a = S::make(w2_arena);
    escape(a);
    Stopwatch sw;
    sw.start();
    const std::size_t failures = w2_loop(a, perm, w2_rounds, blocks);
    const double ns = sw.elapsed_ns();
    report(state, ns, 2.0 * w2_blocks * w2_rounds);
    state.counters["failures"] = benchmark::Counter(static_cast<double>(failures));
  }
  state.SetLabel(kind_label<S>());
}

template <class S>
void w2_callgrind(std::size_t rounds) {
  const auto perm = w2_permutation();
  std::array<Block, w2_blocks> blocks{};
  auto a = S::make(w2_arena);
  escape(a);
  w2_loop(a, perm, rounds, blocks);
}

const int registered = [] {
  for_each_stack<W2Stacks>([](auto t) {
    using S = typename decltype(t)::type;
    register_stack<S>("W2", &w2_bench<S>);
    callgrind_registry()[std::string("W2/") + S::name] = {&w2_callgrind<S>, 2.0 * w2_blocks};
  });
  return 0;
}();

}  // namespace
}  // namespace alloy_bench
