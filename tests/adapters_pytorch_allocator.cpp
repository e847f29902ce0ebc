// ctest-labels: tsan
// The PyTorch pluggable allocator: loads the shared libraries built from tests/adapters/pytorch_stack.cpp with
// dlopen and drives them as PyTorch's CUDAPluggableAllocator does (alloc(size, device, stream), free(ptr, size,
// device, stream)), from several threads. The header's own functions are tested directly too.
#include <alloy/adapters/pytorch_allocator.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/no_access_allocator.hpp>
#include <alloy/null_allocator.hpp>
#include <alloy/region.hpp>

#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#if defined(ALLOY_TORCH_LIB_MALLOCATOR) && defined(ALLOY_TORCH_LIB_NOACCESS)
namespace {
using AllocFn = void* (*)(ssize_t, int, CUstream_st*);
using FreeFn = void (*)(void*, ssize_t, int, CUstream_st*);
using LiveFn = std::size_t (*)(int);
using SpaceFn = int (*)();

struct Lib {
  void* h = nullptr;
  AllocFn alloc = nullptr;
  FreeFn free = nullptr;
  LiveFn live = nullptr;
  SpaceFn space = nullptr;
  explicit Lib(const char* path) {
    h = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
    REQUIRE_MESSAGE(h != nullptr, ::dlerror());
    alloc = reinterpret_cast<AllocFn>(::dlsym(h, "alloy_torch_alloc"));
    free = reinterpret_cast<FreeFn>(::dlsym(h, "alloy_torch_free"));
    live = reinterpret_cast<LiveFn>(::dlsym(h, "alloy_torch_live_bytes"));
    space = reinterpret_cast<SpaceFn>(::dlsym(h, "alloy_torch_memory_space"));
    const bool all_found = alloc && free && live && space;
    REQUIRE(all_found);
  }
  ~Lib() { ::dlclose(h); }
  Lib(const Lib&) = delete;
  Lib& operator=(const Lib&) = delete;
};

// Random alloc/free on several devices and threads; every pointer is distinct, aligned, and freed with its size.
void drive(Lib& lib, bool host, int threads, int ops) {
  auto* stream = reinterpret_cast<CUstream_st*>(std::uintptr_t{0x5000});  // opaque to host stacks
  std::vector<std::thread> ts;
  std::vector<int> bad(threads, 0);
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      std::uint64_t x = 0x2545F4914F6CDD1Dull + t;
      struct Live { void* p; ssize_t n; int dev; unsigned char tag; };
      std::vector<Live> live;
      for (int i = 0; i < ops; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (live.empty() || x % 3 != 0) {
          const ssize_t n = 1 + static_cast<ssize_t>(x % 5000);
          const int dev = static_cast<int>((x >> 20) % 3);
          void* p = lib.alloc(n, dev, stream);
          if (p == nullptr) { ++bad[t]; continue; }
          const auto tag = static_cast<unsigned char>(x >> 32);
          if (host) std::memset(p, tag, static_cast<std::size_t>(n));
          live.push_back({p, n, dev, tag});
        } else {
          const std::size_t k = (x >> 8) % live.size();
          Live l = live[k];
          if (host) {
            const auto* c = static_cast<const unsigned char*>(l.p);
            if (c[0] != l.tag || c[l.n - 1] != l.tag) ++bad[t];
          }
          lib.free(l.p, l.n, l.dev, stream);
          live[k] = live.back();
          live.pop_back();
        }
      }
      for (Live l : live) lib.free(l.p, l.n, l.dev, stream);
    });
  }
  for (auto& th : ts) th.join();
  for (int b : bad) CHECK(b == 0);
  for (int d = 0; d < 3; ++d) CHECK(lib.live(d) == 0);
}
}  // namespace
#endif

TEST_CASE("PyTorch allocator: the header's functions") {
  using T = alloy::PyTorchAllocator<alloy::Mallocator, 4>;
  CHECK(T::alloc(0, 0, nullptr) == nullptr);
  CHECK(T::alloc(-5, 0, nullptr) == nullptr);
  CHECK(T::alloc(16, 4, nullptr) == nullptr);   // device out of range
  CHECK(T::alloc(16, -1, nullptr) == nullptr);
  void* p = T::alloc(100, 3, nullptr);
  REQUIRE(p != nullptr);
  CHECK(T::live_bytes(3) == 100);
  CHECK(T::live_bytes(0) == 0);
  T::free(p, 100, 3, nullptr);
  T::free(nullptr, 0, 0, nullptr);  // a no-op
  CHECK(T::live_bytes(3) == 0);
  using D = alloy::PyTorchAllocator<alloy::NoAccessAllocator, 2>;
  void* d = D::alloc(10, 1, nullptr);
  CHECK(alloy::NoAccessAllocator::instance.owns({d, 10}) == alloy::Ternary::yes);
  D::free(d, 10, 1, nullptr);
  CHECK(alloy::NoAccessAllocator::live_blocks() == 0);
}

TEST_CASE("PyTorch allocator: a failed alloc counts no live bytes") {
  using T = alloy::PyTorchAllocator<alloy::NullAllocator, 1>;
  CHECK(T::alloc(100, 0, nullptr) == nullptr);
  CHECK(T::live_bytes(0) == 0);
}

// A Region is not thread-safe; the adapter's per-device mutex makes it so (TSan checks the claim).
struct TorchArena : alloy::Region<alloy::Mallocator> {
  TorchArena() noexcept : alloy::Region<alloy::Mallocator>(std::size_t{1} << 22) {}
};

TEST_CASE("PyTorch allocator: a Region per device, 6 threads over 2 devices") {
  using T = alloy::PyTorchAllocator<TorchArena, 2>;
  std::vector<std::thread> ts;
  std::vector<int> bad(6, 0);
  for (int k = 0; k < 6; ++k) {
    ts.emplace_back([&, k] {
      const int dev = k % 2;
      std::vector<std::pair<void*, ssize_t>> mine;
      for (int i = 0; i < 2000; ++i) {
        if (mine.size() < 8 && i % 3 != 2) {
          const ssize_t n = 1 + (i * 13 + k) % 300;
          void* p = T::alloc(n, dev, nullptr);
          if (p == nullptr) { ++bad[k]; continue; }
          std::memset(p, k, static_cast<std::size_t>(n));
          mine.emplace_back(p, n);
        } else if (!mine.empty()) {
          auto [p, n] = mine.back();
          mine.pop_back();
          if (static_cast<unsigned char*>(p)[n - 1] != k) ++bad[k];
          T::free(p, n, dev, nullptr);
        }
      }
      for (auto [p, n] : mine) T::free(p, n, dev, nullptr);
    });
  }
  for (auto& th : ts) th.join();
  for (int b : bad) CHECK(b == 0);
  CHECK(T::live_bytes(0) == 0);
  CHECK(T::live_bytes(1) == 0);
}

#if defined(ALLOY_TORCH_LIB_MALLOCATOR) && defined(ALLOY_TORCH_LIB_NOACCESS)
TEST_CASE("PyTorch allocator: dlopen a library over Mallocator and drive it from 4 threads") {
  Lib lib(ALLOY_TORCH_LIB_MALLOCATOR);
  CHECK(lib.space() == static_cast<int>(alloy::MemorySpace::host));
  drive(lib, true, 4, 50'000);
}
TEST_CASE("PyTorch allocator: dlopen a library over NoAccessAllocator (device-like: never touched)") {
  Lib lib(ALLOY_TORCH_LIB_NOACCESS);
  CHECK(lib.space() == static_cast<int>(alloy::MemorySpace::device));
  drive(lib, false, 4, 5'000);
}
#else
TEST_CASE("PyTorch allocator: shared libraries") {
  MESSAGE("built without cmake/alloy_adapters.cmake: the dlopen tests are left out");
}
#endif
