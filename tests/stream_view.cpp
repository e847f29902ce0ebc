// stream_view: the handle survives every conversion and equality compares it; the stream_ref shape is checked whole.
#include <alloy/stream_view.hpp>

#include <cstdint>
#include <type_traits>

#include <doctest/doctest.h>

using alloy::stream_view;

namespace {
CUstream_st* handle(std::uintptr_t id) { return reinterpret_cast<CUstream_st*>(id); }

struct ref_shape {  // cuda::stream_ref's shape
  using value_type = CUstream_st*;
  ref_shape(value_type v) : v_(v) {}  // NOLINT(google-explicit-constructor): as cuda::stream_ref
  value_type get() const noexcept { return v_; }
  value_type v_;
};
struct wrong_value_type {  // constructible and get() as a stream_ref, but its value_type is not cudaStream_t
  using value_type = void*;
  wrong_value_type(CUstream_st* v) : v_(v) {}  // NOLINT(google-explicit-constructor): as cuda::stream_ref
  CUstream_st* get() const noexcept { return v_; }
  CUstream_st* v_;
};
}  // namespace

static_assert(alloy::stream_ref_like<ref_shape>);
static_assert(!alloy::stream_ref_like<wrong_value_type>);
static_assert(!std::is_convertible_v<wrong_value_type, stream_view>);

TEST_CASE("stream_view: equality compares the handle") {
  const stream_view a(handle(0x10)), b(handle(0x20));
  CHECK(a == stream_view(handle(0x10)));
  CHECK_FALSE(a == b);
  CHECK(a != b);
  CHECK_FALSE(a == alloy::default_stream);
  CHECK_FALSE(a.is_default());
  const stream_view from_ref = ref_shape(handle(0x30));
  CHECK(from_ref == stream_view(handle(0x30)));
  CHECK_FALSE(from_ref == a);
}
