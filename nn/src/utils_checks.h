#pragma once
// Internal: the checks nn::utils (clip_grad.cpp, convert_parameters.cpp) makes before it writes
// anything in place, so that a refused call changes nothing.
#include <fmt/format.h>

#include <string>

#include "shape_text.h"
#include "wick/core/tensor.h"

namespace wick::nn::utils::detail {

using nn::detail::shape_str;

/// Whether two of t's elements share one memory location through a dim of size > 1 and stride 0
/// (an expand): an in-place write to it would be refused part way through a list.
inline bool has_stride_zero_overlap(const Tensor& t) {
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) > 1 && t.stride(d) == 0) return true;
  return false;
}

/// "[2, 3] (strides [0, 1])".
inline std::string layout_str(const Tensor& t) {
  return fmt::format("{} (strides [{}])", shape_str(t), fmt::join(t.strides(), ", "));
}

}  // namespace wick::nn::utils::detail
