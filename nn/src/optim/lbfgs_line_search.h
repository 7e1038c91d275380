#pragma once
// PyTorch 1.13's _strong_wolfe and _cubic_interpolate (torch/optim/lbfgs.py, ported from
// torch/optim's lswolfe.lua and polyinterp.lua) for LBFGS, with the numbers on the host in double
// and Python's min and max (which keep the first argument unless another is strictly beyond it).
#include <functional>
#include <optional>
#include <utility>

#include "wick/core/tensor.h"

namespace wick::optim::detail {

/// The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2, clamped to
/// `bounds` (default: [min(x1, x2), max(x1, x2)]); the bounds' midpoint when the cubic has none.
double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2,
                         std::optional<std::pair<double, double>> bounds = std::nullopt);

/// The loss and flat gradient at x + t d (the parameters are put back at x afterwards).
using DirectionalEvaluate = std::function<std::pair<double, Tensor>(double t)>;

struct WolfeResult {
  double loss;
  Tensor flat_grad;
  double t;
  int64_t func_evals;
};

/// A step t along d meeting the strong Wolfe conditions (c1 1e-4, c2 0.9, tolerance_change 1e-9,
/// at most 25 evaluations, as PyTorch's LBFGS calls it), from the loss f, flat gradient g and
/// directional derivative gtd at t = 0 and the first trial step t.
WolfeResult strong_wolfe(const DirectionalEvaluate& obj, double t, const Tensor& d, double f, const Tensor& g,
                         double gtd);

}  // namespace wick::optim::detail
