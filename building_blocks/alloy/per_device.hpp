#pragma once
/// \file alloy/per_device.hpp
/// `PerDevice<Factory>`: one stack per GPU, made on first use with that GPU current (RMM's per_device_resource, as
/// a type).
///
/// This header includes the CUDA runtime API (`<cuda_runtime_api.h>`): link `alloy::cuda`.
#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include <alloy/errors.hpp>

namespace alloy {

/// PerDevice<Factory>
///
/// Semantics: holds one allocator per CUDA device, `Factory{}(device)` (or a stored factory's), made the first time
/// `get(device)` or `current()` asks for it, with that device current while the factory runs (so a pool's
/// `cudaMalloc`, `cudaMemPoolCreate` or events land on it), and the caller's device current again afterwards. The
/// stacks live as long as the PerDevice and are destroyed with the device they belong to current.
/// Factory: a class type whose `operator()(int device) const` returns the stack by value (it need not be movable:
/// it is built in place, on the heap, once per device).
/// Capabilities: a registry, not an allocator: memory from device d's stack goes back to device d's stack, which
/// `get(d)` names from any thread. `device_count()`, `current()` (the stack of `cudaGetDevice`'s device).
/// Thread safety: `get` and `current` are thread-safe (each stack is built once); the stacks are as thread-safe as
/// they are (use Shared blocks across threads).
/// Failure: `get(d)` throws `alloy::invalid_argument` for a device outside [0, device_count()), and
/// `alloy::cuda_error` when device d cannot be made current; without a device `device_count()` is 0. An exception
/// from the factory leaves that device's stack unmade (the next call tries again).
/// Example (runs over the real runtime and over the CPU stand-in, which has one device):
/// ```cpp
/// #include <alloy/cuda_mallocator.hpp>
/// #include <alloy/region.hpp>
/// using DeviceRegion = alloy::Region<alloy::CudaMallocator>;
/// struct Arena {
///   DeviceRegion operator()(int) const { return DeviceRegion(1 << 20); }
/// };
/// alloy::PerDevice<Arena> arenas;
/// if (arenas.device_count() > 0) {
///   alloy::Block b = arenas.current().allocate(4096);   // from the current device's arena
///   CHECK(b.size == 4096);
///   CHECK(&arenas.get(0) == &arenas.current());
/// } else {
///   CHECK_THROWS_AS(arenas.get(0), alloy::invalid_argument);
/// }
/// ```
template <class Factory>
  requires std::is_class_v<Factory>
class PerDevice {
 public:
  using allocator_type = std::remove_cvref_t<std::invoke_result_t<const Factory&, int>>;

  explicit PerDevice(Factory f = Factory{}) : f_(std::move(f)) {
    int n = 0;
    if (::cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)::cudaGetLastError();
      n = 0;
    }
    count_ = n;
    slots_ = std::make_unique<slot[]>(static_cast<std::size_t>(n));
  }
  PerDevice(const PerDevice&) = delete;
  PerDevice& operator=(const PerDevice&) = delete;
  ~PerDevice() {
    for (int d = 0; d < count_; ++d) {
      if (slots_[static_cast<std::size_t>(d)].stack) {
        on_device g(d, std::nothrow);
        slots_[static_cast<std::size_t>(d)].stack.reset();
      }
    }
  }

  [[nodiscard]] int device_count() const noexcept { return count_; }

  /// Device d's stack, made now if it is the first call for d.
  allocator_type& get(int device) {
    if (device < 0 || device >= count_)
      throw invalid_argument("alloy::PerDevice::get: device " + std::to_string(device) + " outside [0, " +
                             std::to_string(count_) + ")");
    slot& s = slots_[static_cast<std::size_t>(device)];
    std::call_once(s.once, [&] {
      on_device g(device);
      s.stack.reset(new allocator_type(f_(device)));  // built in place from the factory's prvalue: no move needed
    });
    return *s.stack;
  }
  /// The current device's stack (`cudaGetDevice`).
  allocator_type& current() {
    int d = -1;
    if (::cudaGetDevice(&d) != cudaSuccess) {
      (void)::cudaGetLastError();
      d = -1;
    }
    return get(d);
  }
  /// Whether device d's stack has been made. Not synchronized with a `get` running in another thread.
  [[nodiscard]] bool has(int device) const noexcept {
    return device >= 0 && device < count_ && slots_[static_cast<std::size_t>(device)].stack != nullptr;
  }

 private:
  struct slot {
    std::once_flag once;
    std::unique_ptr<allocator_type> stack;
  };
  // Makes device d current for a scope. Building a stack on the wrong device is an error (throws cuda_error);
  // destroying one (nothrow) goes on as well as it can.
  struct on_device {
    int previous = -1;
    explicit on_device(int d) {
      if (::cudaGetDevice(&previous) != cudaSuccess) previous = -1;
      if (previous != d) {
        const cudaError_t e = ::cudaSetDevice(d);
        if (e != cudaSuccess) {
          (void)::cudaGetLastError();
          throw cuda_error(static_cast<int>(e), "alloy::PerDevice: cudaSetDevice(" + std::to_string(d) + ") failed");
        }
      }
    }
    on_device(int d, std::nothrow_t) noexcept {
      if (::cudaGetDevice(&previous) != cudaSuccess) previous = -1;
      if (previous != d && ::cudaSetDevice(d) != cudaSuccess) (void)::cudaGetLastError();
    }
    ~on_device() {
      if (previous >= 0) (void)::cudaSetDevice(previous);
    }
  };

  Factory f_;
  int count_ = 0;
  std::unique_ptr<slot[]> slots_;
};

}  // namespace alloy
