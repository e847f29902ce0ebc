// expect: Quantizer: Rounding shrinks a size
// A "rounding" that halves: the parent would get fewer bytes than the caller asked for.
#include <alloy/mallocator.hpp>
#include <alloy/quantizer.hpp>
struct Half {
  constexpr std::size_t operator()(std::size_t n) const noexcept { return n / 2 + 1; }
};
alloy::Quantizer<alloy::Mallocator, Half> a;
