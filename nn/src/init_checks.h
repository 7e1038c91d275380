#pragma once
// Internal: the argument checks the nn::init functions share (nn/src/init*.cpp).
#include <string>

#include "shape_text.h"
#include "wick/core/error.h"
#include "wick/core/tensor.h"

namespace wick::nn::init::detail {

using nn::detail::shape_str;

/// A ValueError naming `op` for an undefined tensor.
inline void check_defined(const char* op, const Tensor& t) {
  WICK_CHECK(t.defined(), "init.{}: the tensor is undefined", op);
}

/// check_defined, then a TypeError naming `op` unless the tensor is float32 or float64.
inline void check_floating(const char* op, const Tensor& t) {
  check_defined(op, t);
  WICK_CHECK_TYPE(t.is_floating_point(), "init.{}: expected a float32 or float64 tensor, got {} (shape {})", op,
                  t.dtype(), shape_str(t));
}

}  // namespace wick::nn::init::detail
