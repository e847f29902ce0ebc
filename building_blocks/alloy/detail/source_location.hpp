#pragma once
/// \file alloy/detail/source_location.hpp
/// detail::source_location: std::source_location where the standard library has it, else the same interface over
/// the builtins (StatsCollector's per-call sites, Checked's reports).
#include <cstdint>
#if __has_include(<source_location>)
#include <source_location>
#endif

namespace alloy::detail {

#if defined(__cpp_lib_source_location)
using source_location = std::source_location;
#else
// clang 14 with libstdc++ 12 has <source_location> but not the builtin it needs: the same type, from the older
// builtins (which both compilers evaluate at the call site when they are default arguments).
struct source_location {
  static constexpr source_location current(const char* file = __builtin_FILE(),
                                           const char* function = __builtin_FUNCTION(),
                                           std::uint_least32_t line = __builtin_LINE(),
                                           std::uint_least32_t column = __builtin_COLUMN()) noexcept {
    source_location s;
    s.file_ = file;
    s.function_ = function;
    s.line_ = line;
    s.column_ = column;
    return s;
  }
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr const char* function_name() const noexcept { return function_; }
  constexpr std::uint_least32_t line() const noexcept { return line_; }
  constexpr std::uint_least32_t column() const noexcept { return column_; }

 private:
  const char* file_ = "";
  const char* function_ = "";
  std::uint_least32_t line_ = 0, column_ = 0;
};
#endif

}  // namespace alloy::detail
