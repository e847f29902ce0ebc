#pragma once
// A CUDA stream a test owns: created non-blocking (or with the flags given), destroyed at the end of its scope unless
// the test destroyed it itself and set `s` to null. Converts to alloy::stream_view.
#include <alloy/stream_view.hpp>

#include <cuda_runtime_api.h>

#include <doctest/doctest.h>

namespace alloy::test {

struct Stream {
  cudaStream_t s = nullptr;
  explicit Stream(unsigned flags = cudaStreamNonBlocking) {
    REQUIRE(cudaStreamCreateWithFlags(&s, flags) == cudaSuccess);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    if (s) cudaStreamDestroy(s);
  }
  operator alloy::stream_view() const { return s; }  // NOLINT(google-explicit-constructor): as cudaStream_t is
};

}  // namespace alloy::test
