#pragma once
/// \file alloy/stream_view.hpp
/// stream_view: a non-owning CUDA stream handle that exists with or without CUDA.
///
/// It stores the `cudaStream_t` as the pointer it is (`CUstream_st*`), so it is the same type in every translation
/// unit, and converts from a `cudaStream_t` without including any CUDA header. The default is the default stream
/// (null handle). `cuda_stream_view.hpp` adds conversions to `cuda::stream_ref` where CCCL is present.
#include <cstdint>

struct CUstream_st;  // cudaStream_t is `CUstream_st*`; declaring it needs no CUDA header.

namespace alloy {

class stream_view {
 public:
  constexpr stream_view() noexcept = default;
  constexpr stream_view(CUstream_st* s) noexcept : stream_(s) {}  // NOLINT: implicit from cudaStream_t, as RMM
  [[nodiscard]] constexpr CUstream_st* value() const noexcept { return stream_; }
  constexpr operator CUstream_st*() const noexcept { return stream_; }  // NOLINT: implicit to cudaStream_t, as RMM
  [[nodiscard]] constexpr bool is_default() const noexcept { return stream_ == nullptr; }
  friend constexpr bool operator==(stream_view, stream_view) = default;

 private:
  CUstream_st* stream_ = nullptr;
};

inline constexpr stream_view default_stream{};

}  // namespace alloy
