// device_buffer over device stacks on the CPU: BitmappedBlock, Region and AllocatorList of BitmappedBlock, all over
// NoAccessAllocator (pages mapped PROT_NONE: a host read or write of the managed memory crashes the test). The same
// operations as over CudaMallocator: resize, reserve, shrink_to_fit, deep copy (same stack, to and from host memory),
// move, set_stream, external memory, and a randomized sequence checked against a host model. Every byte goes through
// the stack's copy primitive (forwarded down to NoAccessAllocator::copy).
#include <alloy/device_buffer.hpp>

#include <alloy/allocator_list.hpp>
#include <alloy/bitmapped_block.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/region.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include <doctest/doctest.h>

#include "support/rng.hpp"

namespace {

using alloy::device_buffer;
using alloy::NoAccessAllocator;
using alloy::stream_view;

using Bitmapped = alloy::BitmappedBlock<256, 256, NoAccessAllocator>;
using DeviceRegion = alloy::Region<NoAccessAllocator>;
struct BitmappedFactory {  // 1 MiB device pools, larger on demand; the list's bookkeeping stays on the host
  Bitmapped operator()(std::size_t n) const { return Bitmapped(std::max<std::size_t>(n, 1 << 20)); }
};
using PoolList = alloy::AllocatorList<BitmappedFactory>;

// Every stack reports device memory and can copy: the memory-space rule's preconditions for device_buffer.
static_assert(alloy::memory_space_of<Bitmapped>() == alloy::MemorySpace::device);
static_assert(alloy::memory_space_of<DeviceRegion>() == alloy::MemorySpace::device);
static_assert(alloy::memory_space_of<PoolList>() == alloy::MemorySpace::device);
static_assert(alloy::has_copy<Bitmapped> && alloy::has_copy<DeviceRegion> && alloy::has_copy<PoolList>);
static_assert(sizeof(device_buffer<Bitmapped>) == 5 * sizeof(void*));  // stateful: one pointer more

struct BitmappedStack {
  using A = Bitmapped;
  static std::unique_ptr<A> make() { return std::make_unique<A>(std::size_t{16} << 20); }
};
struct RegionStack {
  using A = DeviceRegion;
  static std::unique_ptr<A> make() { return std::make_unique<A>(std::size_t{64} << 20); }
};
struct ListStack {
  using A = PoolList;
  static std::unique_ptr<A> make() { return std::make_unique<A>(); }
};

stream_view fake_stream(std::uintptr_t id) { return stream_view(reinterpret_cast<CUstream_st*>(id)); }

template <class A>
std::vector<unsigned char> read_back(const device_buffer<A>& b) {
  std::vector<unsigned char> out(b.size());
  if (b.size()) REQUIRE(b.allocator().copy(out.data(), b.data(), b.size(), b.stream()));
  return out;
}
std::vector<unsigned char> pattern(std::size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(seed * 151 + i * 11 + (i >> 9));
  return v;
}

}  // namespace

TEST_CASE_TEMPLATE("device_buffer over a device stack: every operation, no host touch", S, BitmappedStack,
                   RegionStack, ListStack) {
  using A = typename S::A;
  const std::size_t live_before = NoAccessAllocator::live_blocks();
  {
    auto stack = S::make();
    A& a = *stack;
    const stream_view s1 = fake_stream(0x11), s2 = fake_stream(0x22);
    const auto src = pattern(3000, 1);

    device_buffer<A> b(src.data(), src.size(), s1, a);
    CHECK(&b.allocator() == &a);
    CHECK(b.size() == 3000);
    CHECK(alloy::is_aligned(b.data(), A::alignment));
    CHECK(alloy::owns(a, {b.data(), b.capacity()}) != alloy::Ternary::no);
    CHECK(read_back(b) == src);

    // resize within and past the capacity
    void* const p = b.data();
    b.resize(1000, s2);
    CHECK(b.data() == p);
    CHECK(b.stream() == s2);
    b.resize(20000, s2);
    CHECK(b.capacity() == 20000);
    auto back = read_back(b);
    CHECK(std::equal(src.begin(), src.begin() + 1000, back.begin()));

    // reserve keeps size and bytes
    b.resize(1000, s1);
    b.reserve(50000, s1);
    CHECK(b.capacity() == 50000);
    CHECK(read_back(b) == std::vector<unsigned char>(src.begin(), src.begin() + 1000));

    // shrink_to_fit
    b.shrink_to_fit(s1);
    CHECK(b.capacity() == 1000);
    CHECK(read_back(b) == std::vector<unsigned char>(src.begin(), src.begin() + 1000));

    // deep copies: within the stack, to host, back from host
    device_buffer<A> c(b, s2);
    CHECK(c.data() != b.data());
    CHECK(&c.allocator() == &a);
    CHECK(read_back(c) == read_back(b));
    device_buffer<alloy::Mallocator> host(c, s2);
    CHECK(std::memcmp(host.data(), src.data(), 1000) == 0);
    device_buffer<A> from_host(host, s2, a);
    CHECK(read_back(from_host) == read_back(b));
    device_buffer<NoAccessAllocator> plain(from_host, s2);  // stack -> plain device allocator
    CHECK(read_back(plain) == read_back(b));

    // move
    void* const q = c.data();
    device_buffer<A> m(std::move(c));
    CHECK(m.data() == q);
    CHECK(c.data() == nullptr);  // NOLINT(bugprone-use-after-move): a moved-from buffer is empty
    m = std::move(from_host);
    CHECK(read_back(m) == read_back(b));

    // set_stream
    m.set_stream(s1);
    CHECK(m.stream() == s1);

    // external memory from the same stack: wrapped, never freed by the buffer
    alloy::Block ext = a.allocate(4096);
    REQUIRE(ext);
    {
      device_buffer<A> e(alloy::external_memory, ext.ptr, ext.size, s1, a);
      CHECK(e.is_external());
      e.resize(8192, s1);  // grows into owned memory from the stack
      CHECK(!e.is_external());
    }
    CHECK(alloy::owns(a, ext) != alloy::Ternary::no);
    (void)alloy::deallocate(a, ext);
  }
  CHECK(NoAccessAllocator::live_blocks() == live_before);
}

TEST_CASE_TEMPLATE("device_buffer over a device stack: randomized against a host model", S, BitmappedStack,
                   RegionStack, ListStack) {
  using A = typename S::A;
  auto stack = S::make();
  A& a = *stack;
  alloy::test::Rng rng{0x5eedu + sizeof(A)};
  std::vector<device_buffer<A>> bufs(8);
  std::vector<std::vector<unsigned char>> models(8);
  for (auto& b : bufs) b = device_buffer<A>(0, {}, a);
  const int steps = std::is_same_v<A, DeviceRegion> ? 400 : 2000;  // a region never reuses memory
  for (int step = 0; step < steps; ++step) {
    const std::size_t i = rng.below(bufs.size());
    auto& b = bufs[i];
    auto& model = models[i];
    const std::size_t n = rng.below(4) == 0 ? 0 : rng.below(12000);
    switch (rng.below(5)) {
      case 0: {
        const auto src = pattern(n, static_cast<unsigned>(step));
        b = device_buffer<A>(src.data(), src.size(), fake_stream(step + 1), a);
        model = src;
        break;
      }
      case 1: {
        const std::size_t old = model.size();
        b.resize(n, fake_stream(step + 1));
        model.resize(n);
        if (n > old) {
          const auto fill = pattern(n - old, static_cast<unsigned>(step) * 3);
          REQUIRE(a.copy(static_cast<char*>(b.data()) + old, fill.data(), fill.size(), {}));
          std::copy(fill.begin(), fill.end(), model.begin() + static_cast<std::ptrdiff_t>(old));
        }
        break;
      }
      case 2: b.reserve(n, {}); break;
      case 3: b.shrink_to_fit({}); break;
      default: {
        const std::size_t j = rng.below(bufs.size());
        if (j != i) {
          bufs[j] = device_buffer<A>(b, {});
          models[j] = model;
        }
      }
    }
    REQUIRE(b.size() == model.size());
    REQUIRE(b.capacity() >= b.size());
    if (step % 8 == 0) REQUIRE(read_back(b) == model);
  }
  for (std::size_t i = 0; i < bufs.size(); ++i) CHECK(read_back(bufs[i]) == models[i]);
}
