#pragma once
/// \file alloy/ternary.hpp
/// Ternary: D's three-valued logic (`std.typecons.Ternary`), the answer of `owns`, `empty` and
/// `resolve_internal_pointer`. `Ternary{}` is `unknown`. The operators follow Kleene's logic:
/// `no & unknown == no`, `yes | unknown == yes`, `~unknown == unknown`.
#include <cstdint>

namespace alloy {

/// Ternary
///
/// Semantics: `unknown` (the default, `Ternary{}`), `no`, `yes`; `to_ternary(bool)`; `~`, `&`, `|` follow Kleene's
/// logic (`no` decides an `&`, `yes` decides an `|`), `^` is unknown when either side is.
/// Example:
/// ```cpp
/// using alloy::Ternary;
/// static_assert(Ternary{} == Ternary::unknown);
/// static_assert((Ternary::no & Ternary::unknown) == Ternary::no);
/// static_assert((Ternary::yes | Ternary::unknown) == Ternary::yes);
/// static_assert(~Ternary::unknown == Ternary::unknown);
/// Ternary t = alloy::to_ternary(true);
/// t &= Ternary::unknown;
/// CHECK(t == Ternary::unknown);
/// ```
enum class Ternary : std::uint8_t { unknown = 0, no = 1, yes = 2 };

constexpr Ternary to_ternary(bool b) noexcept { return b ? Ternary::yes : Ternary::no; }

constexpr Ternary operator~(Ternary a) noexcept {
  return a == Ternary::yes ? Ternary::no : a == Ternary::no ? Ternary::yes : Ternary::unknown;
}
constexpr Ternary operator&(Ternary a, Ternary b) noexcept {
  if (a == Ternary::no || b == Ternary::no) return Ternary::no;
  if (a == Ternary::yes && b == Ternary::yes) return Ternary::yes;
  return Ternary::unknown;
}
constexpr Ternary operator|(Ternary a, Ternary b) noexcept {
  if (a == Ternary::yes || b == Ternary::yes) return Ternary::yes;
  if (a == Ternary::no && b == Ternary::no) return Ternary::no;
  return Ternary::unknown;
}
constexpr Ternary operator^(Ternary a, Ternary b) noexcept {
  if (a == Ternary::unknown || b == Ternary::unknown) return Ternary::unknown;
  return to_ternary(a != b);
}
constexpr Ternary& operator&=(Ternary& a, Ternary b) noexcept { return a = a & b; }
constexpr Ternary& operator|=(Ternary& a, Ternary b) noexcept { return a = a | b; }

}  // namespace alloy
