#pragma once
// Internal: Python-style formatting for extra_repr() (True/False, float repr, int-or-tuple).
#include <fmt/format.h>

#include <string>

#include "wick/nn/functional.h"

namespace wick::nn::detail {

inline const char* py_bool(bool b) { return b ? "True" : "False"; }

/// Python's repr of a float: shortest round trip, "1.0" for integral values, "1e-05".
inline std::string py_float(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

/// "3" when both are equal (as PyTorch prints an int argument), "(3, 2)" otherwise.
inline std::string py_int2(Int2 v, bool as_tuple = false) {
  if (v.h == v.w && !as_tuple) return fmt::format("{}", v.h);
  return fmt::format("({}, {})", v.h, v.w);
}

/// "3" when all three are equal (as PyTorch prints an int argument), "(3, 2, 2)" otherwise.
inline std::string py_int3(Int3 v, bool as_tuple = false) {
  if (v.d == v.h && v.h == v.w && !as_tuple) return fmt::format("{}", v.d);
  return fmt::format("({}, {}, {})", v.d, v.h, v.w);
}

}  // namespace wick::nn::detail
