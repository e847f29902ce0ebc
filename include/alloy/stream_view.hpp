#pragma once
/// \file alloy/stream_view.hpp
/// stream_view: a non-owning CUDA stream handle that exists with or without CUDA.
///
/// It stores the `cudaStream_t` as the pointer it is (`CUstream_st*`), so it is the same type in every translation
/// unit, with or without CUDA, and converts from a `cudaStream_t` without including any CUDA header. The default is
/// the default stream (null handle). It also converts to and from `cuda::stream_ref` (CCCL) and any other
/// stream-reference type of that shape (a `value_type` that is `cudaStream_t`, a constructor from it and `get()`):
/// those conversions are constrained templates, so this header never names CCCL and the class is the same token
/// sequence in every translation unit (ODR-safe), whether CCCL is included or not.
///
/// Example:
/// ```cpp
/// alloy::stream_view s;
/// CHECK(s.is_default());
/// CHECK(s == alloy::default_stream);
/// CUstream_st* raw = s;                   // to cudaStream_t
/// CHECK(raw == nullptr);
/// struct fake_stream_ref {                // the shape of cuda::stream_ref
///   using value_type = CUstream_st*;
///   fake_stream_ref(value_type v) : v_(v) {}  // NOLINT(google-explicit-constructor): implicit, as cuda::stream_ref's
///   value_type get() const noexcept { return v_; }
///   value_type v_;
/// };
/// alignas(16) static unsigned char stream_object[16];  // stands in for a stream the driver made
/// auto* handle = reinterpret_cast<CUstream_st*>(stream_object);
/// fake_stream_ref r = alloy::stream_view(handle);   // stream_view -> stream_ref
/// CHECK(r.get() == handle);
/// alloy::stream_view back = r;                      // stream_ref -> stream_view
/// CHECK(back.value() == handle);
/// ```
#include <concepts>
#include <cstdint>

struct CUstream_st;  // cudaStream_t is `CUstream_st*`; declaring it needs no CUDA header.

namespace alloy {

/// A stream reference type of `cuda::stream_ref`'s shape: `value_type` is `cudaStream_t`, it is constructible from
/// one, and `get()` gives it back.
template <class T>
concept stream_ref_like = std::same_as<typename T::value_type, CUstream_st*> &&
                          std::constructible_from<T, CUstream_st*> && requires(const T& t) {
                            { t.get() } -> std::same_as<CUstream_st*>;
                          };

class stream_view {
 public:
  constexpr stream_view() noexcept = default;
  // NOLINTNEXTLINE(google-explicit-constructor): from cudaStream_t, as RMM
  constexpr stream_view(CUstream_st* s) noexcept : stream_(s) {}
  /// From `cuda::stream_ref` (or any stream_ref_like type).
  template <stream_ref_like R>
  // NOLINTNEXTLINE(google-explicit-constructor): as RMM's cuda_stream_view
  constexpr stream_view(const R& r) noexcept : stream_(r.get()) {}
  [[nodiscard]] constexpr CUstream_st* value() const noexcept { return stream_; }
  // NOLINTNEXTLINE(google-explicit-constructor): to cudaStream_t, as RMM
  constexpr operator CUstream_st*() const noexcept { return stream_; }
  /// To `cuda::stream_ref` (or any stream_ref_like type), so a stream_view passes where CCCL wants a stream_ref.
  template <stream_ref_like R>
  constexpr operator R() const noexcept {  // NOLINT(google-explicit-constructor): as RMM's cuda_stream_view
    return R(stream_);
  }
  [[nodiscard]] constexpr bool is_default() const noexcept { return stream_ == nullptr; }
  friend constexpr bool operator==(stream_view, stream_view) = default;

 private:
  CUstream_st* stream_ = nullptr;
};

inline constexpr stream_view default_stream{};

}  // namespace alloy
