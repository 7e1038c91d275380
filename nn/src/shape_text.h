#pragma once
// Internal: how nn's error messages write a tensor's shape.
#include <fmt/format.h>

#include <string>

#include "wick/core/tensor.h"

namespace wick::nn::detail {

/// "[2, 3]", or "undefined" for an undefined tensor.
inline std::string shape_str(const Tensor& t) {
  return t.defined() ? fmt::format("[{}]", fmt::join(t.sizes(), ", ")) : std::string("undefined");
}

}  // namespace wick::nn::detail
