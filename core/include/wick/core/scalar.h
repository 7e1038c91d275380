#pragma once
// Scalar: a number passed to an op (alpha, a fill value, the right operand of `t + 2.5`).
// It remembers its category (bool, integer, floating) for dtype promotion, as a Python number
// does in PyTorch ("wrapped numbers" take part in promotion only by category).
#include <cstdint>
#include <type_traits>

#include "wick/core/dtype.h"

namespace wick {

class Scalar {
 public:
  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : d_(v), i_(v), dtype_(DType::Bool) {}  // NOLINT
  template <typename I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  Scalar(I v) : d_(static_cast<double>(v)), i_(static_cast<int64_t>(v)), dtype_(DType::Int64) {}  // NOLINT
  template <typename F, std::enable_if_t<std::is_floating_point_v<F>, int> = 0>
  Scalar(F v) : d_(static_cast<double>(v)), i_(static_cast<int64_t>(v)), dtype_(DType::Float64) {}  // NOLINT

  /// The category's widest type: Bool, Int64 or Float64.
  DType dtype() const { return dtype_; }
  bool is_floating() const { return dtype_ == DType::Float64; }
  double to_double() const { return d_; }
  int64_t to_int() const { return i_; }
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) return dtype_ == DType::Float64 ? d_ != 0.0 : i_ != 0;
    else if constexpr (std::is_integral_v<T>) return dtype_ == DType::Float64 ? static_cast<T>(d_) : static_cast<T>(i_);
    else return dtype_ == DType::Float64 ? static_cast<T>(d_) : static_cast<T>(i_);
  }

 private:
  double d_;
  int64_t i_;
  DType dtype_;
};

}  // namespace wick
