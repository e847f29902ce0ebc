// Checked's primitives are noexcept, so its reporting policy must be a noexcept callable.
// expect: the Policy must be callable as policy\(const CheckedReport&\) noexcept
#include <alloy/checked.hpp>
#include <alloy/mallocator.hpp>

struct Throws {
  void operator()(const alloy::CheckedReport&) {}
};

int main() {
  alloy::Checked<alloy::Mallocator, Throws> a;
  return a.allocate(64) ? 0 : 1;
}
