#pragma once
// How long the randomized tests run. `tools/test.sh` (and CI) runs a twentieth of the full length, so that the suite
// stays under ten minutes on two CPUs; `tools/test.sh --long` sets ALLOY_TEST_LONG=1 for the full length (10^6
// operations per block and mode), run by hand before a release. Seeds are the same either way: a short run is the
// start of the long one.
#include <cstddef>
#include <cstdlib>

namespace alloy::test {

inline bool long_tests() noexcept {
  const char* e = std::getenv("ALLOY_TEST_LONG");
  return e != nullptr && e[0] != '\0' && !(e[0] == '0' && e[1] == '\0');
}

/// `full` operations under ALLOY_TEST_LONG, a twentieth of them otherwise.
inline std::size_t test_length(std::size_t full) noexcept { return long_tests() ? full : full / 20; }

}  // namespace alloy::test
