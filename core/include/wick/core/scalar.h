#pragma once
// Scalar: a number passed to an op (alpha, a fill value, the right operand of `t + 2.5`).
// It remembers its category (bool, integer, floating) for dtype promotion, as a Python number
// does in PyTorch ("wrapped numbers" take part in promotion only by category).
//
// A floating Scalar keeps only its double and an integer one only its int64, so no constructor
// converts between them; a conversion asked for later (to_int, to<integer>) is checked: NaN, inf
// or a value out of the target's range is a wick::ValueError, never undefined behaviour.
// An unsigned value past int64's range is refused when the Scalar is made: wick's one integer
// dtype is int64, and wrapping it to a negative number would fill float and integer tensors with
// different values.
#include <cstdint>
#include <limits>
#include <type_traits>

#include "wick/core/dtype.h"
#include "wick/core/error.h"

namespace wick {

class Scalar {
 public:
  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : d_(v), i_(v), dtype_(DType::Bool) {}  // NOLINT
  /// An integer value. Throws wick::ValueError for an unsigned value above int64's maximum.
  template <typename I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  Scalar(I v) : d_(static_cast<double>(v)), i_(checked_int64(v)), dtype_(DType::Int64) {}  // NOLINT
  template <typename F, std::enable_if_t<std::is_floating_point_v<F>, int> = 0>
  Scalar(F v) : d_(static_cast<double>(v)), i_(0), dtype_(DType::Float64) {}  // NOLINT

  /// The category's widest type: Bool, Int64 or Float64.
  DType dtype() const { return dtype_; }
  bool is_floating() const { return dtype_ == DType::Float64; }
  double to_double() const { return d_; }
  /// The value as int64, truncated toward zero; throws wick::ValueError for a floating value
  /// that is NaN, infinite or out of int64's range.
  int64_t to_int() const { return to<int64_t>(); }
  /// The value as T (bool: nonzero; integer: truncated toward zero, range-checked; floating: as
  /// static_cast). Throws wick::ValueError when the value does not fit an integer T.
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) {
      return dtype_ == DType::Float64 ? d_ != 0.0 : i_ != 0;
    } else if constexpr (std::is_integral_v<T>) {
      if (dtype_ != DType::Float64) {
        WICK_CHECK(int64_fits<T>(i_), "Scalar: the integer {} does not fit in {} integer of {} bytes", i_,
                   std::is_signed_v<T> ? "a signed" : "an unsigned", sizeof(T));
        return static_cast<T>(i_);
      }
      // The bounds of T as doubles: min is a power of two (exact); max + 1 is one too.
      constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
      constexpr double hi = static_cast<double>(std::numeric_limits<T>::max() / 2 + 1) * 2.0;
      WICK_CHECK(d_ >= lo && d_ < hi, "Scalar: the floating value {} does not fit in an integer of {} bytes", d_,
                 sizeof(T));
      return static_cast<T>(d_);
    } else {
      return dtype_ == DType::Float64 ? static_cast<T>(d_) : static_cast<T>(i_);
    }
  }

 private:
  template <typename I>
  static int64_t checked_int64(I v) {
    if constexpr (std::is_unsigned_v<I> && sizeof(I) >= sizeof(int64_t)) {
      WICK_CHECK(v <= static_cast<I>(std::numeric_limits<int64_t>::max()),
                 "Scalar: the unsigned value {} does not fit int64, wick's integer type; pass it as a double "
                 "if rounding to 53 bits is acceptable",
                 v);
    }
    return static_cast<int64_t>(v);
  }
  // Whether the int64 `v` is within T's range (T an integer type of at most 64 bits).
  template <typename T>
  static constexpr bool int64_fits(int64_t v) {
    if constexpr (std::is_signed_v<T>) {
      return v >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
             v <= static_cast<int64_t>(std::numeric_limits<T>::max());
    } else {
      return v >= 0 && static_cast<uint64_t>(v) <= static_cast<uint64_t>(std::numeric_limits<T>::max());
    }
  }

  double d_;
  int64_t i_;
  DType dtype_;
};

}  // namespace wick
