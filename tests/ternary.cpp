#include <alloy/ternary.hpp>

#include <algorithm>

#include <doctest/doctest.h>

using alloy::Ternary;
constexpr Ternary Y = Ternary::yes, N = Ternary::no, U = Ternary::unknown;
static_assert(Ternary{} == U);
static_assert(~Y == N && ~N == Y && ~U == U);
static_assert((N & U) == N && (U & N) == N && (Y & U) == U && (Y & Y) == Y && (U & U) == U && (N & N) == N);
static_assert((Y | U) == Y && (U | Y) == Y && (N | U) == U && (N | N) == N && (U | U) == U && (Y | N) == Y);
static_assert((Y ^ N) == Y && (Y ^ Y) == N && (U ^ Y) == U);
static_assert((Y ^ U) == U && (N ^ U) == U && (U ^ N) == U && (U ^ U) == U && (N ^ N) == N && (N ^ Y) == Y);
static_assert(alloy::to_ternary(true) == Y && alloy::to_ternary(false) == N);

TEST_CASE("Ternary: Kleene truth tables, exhaustively") {
  const Ternary all[] = {N, U, Y};
  auto rank = [](Ternary t) { return t == N ? 0 : t == U ? 1 : 2; };  // Kleene: and = min, or = max, not = 2 - x
  for (Ternary a : all) {
    CHECK(rank(~a) == 2 - rank(a));
    for (Ternary b : all) {
      CHECK(rank(a & b) == std::min(rank(a), rank(b)));
      CHECK(rank(a | b) == std::max(rank(a), rank(b)));
      Ternary c = a;
      c &= b;
      CHECK(c == (a & b));
      c = a;
      c |= b;
      CHECK(c == (a | b));
    }
  }
}
