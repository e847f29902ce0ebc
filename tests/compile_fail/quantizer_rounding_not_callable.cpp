// expect: Quantizer: Rounding must be a class type with `std::size_t operator\(\)\(std::size_t n\) const`
// D passes a function; alloy a class type (a stateless one costs nothing): here a number is passed by mistake.
#include <alloy/mallocator.hpp>
#include <alloy/quantizer.hpp>
alloy::Quantizer<alloy::Mallocator, int> a;
