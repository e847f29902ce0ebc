// expect: Quantizer: Rounding must never decrease
// Never below n, but 2000 bytes for sizes up to 1000 and n itself above: the quantum of 1000 bytes would exceed that
// of 1001 (D's precondition: monotonic).
#include <alloy/mallocator.hpp>
#include <alloy/quantizer.hpp>
struct Dip {
  constexpr std::size_t operator()(std::size_t n) const noexcept { return n <= 1000 ? 2000 : n; }
};
alloy::Quantizer<alloy::Mallocator, Dip> a;
