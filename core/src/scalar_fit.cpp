// Note [Scalar fits dtype] (wick/core/scalar_fit.h).
#include "wick/core/scalar_fit.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <limits>

#include "wick/core/checked_math.h"
#include "wick/core/error.h"

namespace wick {

namespace {
constexpr double kFloat32Max = static_cast<double>(std::numeric_limits<float>::max());
}  // namespace

bool scalar_fits(Scalar v, DType dtype) {
  if (!v.is_floating()) return true;  // bool or int64: |v| <= 2^63 is within float32's range
  const double d = v.to_double();
  switch (dtype) {
    case DType::Float32:
      return !std::isfinite(d) || std::abs(d) <= kFloat32Max;  // inf and NaN are float32 values
    case DType::Int64:
      return double_fits_int64(d);  // false for NaN and inf
    case DType::Bool:
    case DType::Float64:
      return true;
  }
  return true;
}

void check_scalar_fits(const char* op, const char* arg, Scalar v, DType dtype, IntArrayRef shape) {
  if (scalar_fits(v, dtype)) [[likely]]
    return;
  const char* range = dtype == DType::Float32 ? "[-3.4028234663852886e+38, 3.4028234663852886e+38] (or inf, nan)"
                                              : "[-2^63, 2^63) (finite)";
  const char* wider = dtype == DType::Float32 ? "a float64 tensor" : "a floating tensor";
  WICK_FAIL(
      "{}: the {} {} does not fit {} (the tensor of shape [{}]), whose range is {}; use {}, or a value "
      "within {}'s range",
      op, arg, v.to_double(), dtype, fmt::join(shape, ", "), range, wider, dtype);
}

}  // namespace wick
