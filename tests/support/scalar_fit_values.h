#pragma once
// The values at float32's edge that the Note [Scalar fits dtype] tests use
// (tests/autograd/scalar_fit_test.cpp, tests/nn/scalar_fit_nn_test.cpp), and the small float
// tensors they build on a device.
#include <wick/wick.h>

#include <cmath>
#include <limits>
#include <vector>

#include "support/small_tensors.h"

namespace wick::test::scalar_fit {

inline constexpr double kMax = 3.4028234663852886e38;  // float32's largest finite value
inline constexpr double kHuge = 1e300;
inline const double kAbove = std::nextafter(kMax, 1e300);  // rounds to kMax, but PyTorch refuses it
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline const double kNan = std::nan("");

/// A 1-d float32 / float64 tensor of `v` on `dev`.
inline Tensor f32(const std::vector<double>& v, Device dev) { return wick::test::f64(v).to(dev, kFloat32); }
inline Tensor f64(const std::vector<double>& v, Device dev) { return wick::test::f64(v).to(dev); }

}  // namespace wick::test::scalar_fit
