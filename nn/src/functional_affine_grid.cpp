// F::affine_grid, with PyTorch 1.13's rules (torch/nn/functional.py's checks and ATen's
// AffineGridGenerator.cpp): the base grid of normalized output positions, built in theta's dtype,
// times theta^T. A matmul, so differentiable (twice) in theta on every device.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {
// linspace_from_neg_one: steps positions from -1 to 1, scaled by (steps - 1) / steps without
// align_corners (pixel centres); a single step is 0.
Tensor positions(int64_t steps, bool align_corners, const TensorOptions& opts) {
  if (steps <= 1) return zeros({steps}, opts);
  Tensor r = linspace(-1.0, 1.0, steps, opts);
  if (!align_corners) r = r * static_cast<double>(steps - 1) / static_cast<double>(steps);
  return r;
}
}  // namespace

Tensor affine_grid(const Tensor& theta, IntArrayRef size, bool align_corners) {
  const std::string size_text = fmt::format("[{}]", fmt::join(size, ", "));
  WICK_CHECK(theta.defined(), "affine_grid: theta is undefined (size {})", size_text);
  WICK_CHECK_TYPE(theta.is_floating_point(), "affine_grid: theta must be float32 or float64, got {} (shape {})",
                  theta.dtype(), detail::shape_str(theta));
  const auto rank = static_cast<int64_t>(size.size());
  WICK_CHECK_NOT_IMPLEMENTED(rank == 4 || rank == 5,
                             "affine_grid: size must have 4 entries {{N, C, H, W}} (2-d transforms) or 5 "
                             "{{N, C, D, H, W}} (3-d transforms), got {}",
                             size_text);
  const int64_t rows = rank - 2;  // 2 x 3 or 3 x 4 matrices
  WICK_CHECK(theta.dim() == 3 && theta.size(1) == rows && theta.size(2) == rows + 1,
             "affine_grid: for size {} theta must be a batch of {}-d affine matrices [N, {}, {}], got {}", size_text,
             rows, rows, rows + 1, detail::shape_str(theta));
  for (int64_t s : size) WICK_CHECK(s > 0, "affine_grid: every entry of size must be positive, got {}", size_text);
  WICK_CHECK(theta.size(0) == size[0], "affine_grid: theta {} has batch {} but size {} asks for {}",
             detail::shape_str(theta), theta.size(0), size_text, size[0]);
  const TensorOptions opts = theta.options();
  // base [*spatial, rows + 1]: (x, y[, z], 1) with x along the last dim of size.
  std::vector<int64_t> spatial(size.begin() + 2, size.end());
  std::vector<Tensor> columns;
  for (int64_t j = 0; j < rows; ++j) {
    const int64_t dim = rows - 1 - j;  // x is the last spatial dim
    std::vector<int64_t> shape(static_cast<size_t>(rows), 1);
    shape[static_cast<size_t>(dim)] = spatial[static_cast<size_t>(dim)];
    columns.push_back(
        expand(reshape(positions(spatial[static_cast<size_t>(dim)], align_corners, opts), shape), spatial));
  }
  columns.push_back(ones(spatial, opts));
  int64_t points = 1;
  for (int64_t s : spatial) points *= s;
  const Tensor base = reshape(stack(columns, -1), {points, rows + 1});
  // [points, rows + 1] @ [N, rows + 1, rows] -> [N, points, rows]
  const Tensor grid = matmul(base, transpose(theta, 1, 2));
  std::vector<int64_t> out_shape = {size[0]};
  out_shape.insert(out_shape.end(), spatial.begin(), spatial.end());
  out_shape.push_back(rows);
  return reshape(grid, out_shape);
}

}  // namespace wick::nn::functional
