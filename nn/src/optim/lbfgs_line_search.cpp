// LBFGS's strong-Wolfe line search: PyTorch 1.13's _strong_wolfe and _cubic_interpolate, branch
// for branch.
#include "lbfgs_line_search.h"

#include <cmath>
#include <vector>

namespace wick::optim::detail {

namespace {
// Python's max(a, b) and min(a, b): the first unless the second is strictly beyond it (NaN stays).
double py_max(double a, double b) { return b > a ? b : a; }
double py_min(double a, double b) { return b < a ? b : a; }
double max_abs(const Tensor& t) { return t.abs().max().item<double>(); }
}  // namespace

double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2,
                         std::optional<std::pair<double, double>> bounds) {
  double lo = 0, hi = 0;
  if (bounds) {
    lo = bounds->first;
    hi = bounds->second;
  } else if (x1 <= x2) {
    lo = x1;
    hi = x2;
  } else {
    lo = x2;
    hi = x1;
  }
  const double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  const double d2_square = d1 * d1 - g1 * g2;
  if (d2_square >= 0) {
    const double d2 = std::sqrt(d2_square);
    const double min_pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                                    : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
    return py_min(py_max(min_pos, lo), hi);
  }
  return (lo + hi) / 2.;
}

WolfeResult strong_wolfe(const DirectionalEvaluate& obj, double t, const Tensor& d, double f, const Tensor& g0,
                         double gtd) {
  constexpr double c1 = 1e-4, c2 = 0.9, tolerance_change = 1e-9;
  constexpr int64_t max_ls = 25;
  const double d_norm = max_abs(d);
  const Tensor g = g0.clone();
  auto [f_new, g_new] = obj(t);
  int64_t ls_func_evals = 1;
  double gtd_new = g_new.dot(d).item<double>();

  // Bracket an interval containing a point satisfying the Wolfe criteria.
  double t_prev = 0, f_prev = f, gtd_prev = gtd;
  Tensor g_prev = g;
  bool done = false;
  int64_t ls_iter = 0;
  std::vector<double> bracket, bracket_f, bracket_gtd;
  std::vector<Tensor> bracket_g;
  while (ls_iter < max_ls) {
    if (f_new > (f + c1 * t * gtd) || (ls_iter > 1 && f_new >= f_prev)) {
      bracket = {t_prev, t};
      bracket_f = {f_prev, f_new};
      bracket_g = {g_prev, g_new.clone()};
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    if (std::abs(gtd_new) <= -c2 * gtd) {
      bracket = {t};
      bracket_f = {f_new};
      bracket_g = {g_new};
      done = true;
      break;
    }
    if (gtd_new >= 0) {
      bracket = {t_prev, t};
      bracket_f = {f_prev, f_new};
      bracket_g = {g_prev, g_new.clone()};
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    // Interpolate.
    const double min_step = t + 0.01 * (t - t_prev);
    const double max_step = t * 10;
    const double tmp = t;
    t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, std::make_pair(min_step, max_step));
    // Next step.
    t_prev = tmp;
    f_prev = f_new;
    g_prev = g_new.clone();
    gtd_prev = gtd_new;
    std::tie(f_new, g_new) = obj(t);
    ls_func_evals += 1;
    gtd_new = g_new.dot(d).item<double>();
    ls_iter += 1;
  }
  // Reached the maximum number of iterations?
  if (ls_iter == max_ls) {
    bracket = {0, t};
    bracket_f = {f, f_new};
    bracket_g = {g, g_new};
  }

  // Zoom phase: refine the bracket until a point satisfies the criteria.
  bool insuf_progress = false;
  size_t low_pos = bracket_f[0] <= bracket_f.back() ? 0 : 1, high_pos = 1 - low_pos;
  while (!done && ls_iter < max_ls) {
    if (std::abs(bracket[1] - bracket[0]) * d_norm < tolerance_change) break;  // the bracket is too small
    t = cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]);
    // Too close to a boundary: after insufficient progress, or at the boundary, move 0.1 of the
    // bracket's length inside it.
    const double bmax = py_max(bracket[0], bracket[1]), bmin = py_min(bracket[0], bracket[1]);
    const double eps = 0.1 * (bmax - bmin);
    if (py_min(bmax - t, t - bmin) < eps) {
      if (insuf_progress || t >= bmax || t <= bmin) {
        t = std::abs(t - bmax) < std::abs(t - bmin) ? bmax - eps : bmin + eps;
        insuf_progress = false;
      } else {
        insuf_progress = true;
      }
    } else {
      insuf_progress = false;
    }
    std::tie(f_new, g_new) = obj(t);
    ls_func_evals += 1;
    gtd_new = g_new.dot(d).item<double>();
    ls_iter += 1;
    if (f_new > (f + c1 * t * gtd) || f_new >= bracket_f[low_pos]) {
      // Armijo condition not satisfied or not lower than the lowest point.
      bracket[high_pos] = t;
      bracket_f[high_pos] = f_new;
      bracket_g[high_pos] = g_new.clone();
      bracket_gtd[high_pos] = gtd_new;
      low_pos = bracket_f[0] <= bracket_f[1] ? 0 : 1;
      high_pos = 1 - low_pos;
    } else {
      if (std::abs(gtd_new) <= -c2 * gtd) {
        done = true;  // the Wolfe conditions hold
      } else if (gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0) {
        // The old high becomes the new low.
        bracket[high_pos] = bracket[low_pos];
        bracket_f[high_pos] = bracket_f[low_pos];
        bracket_g[high_pos] = bracket_g[low_pos];
        bracket_gtd[high_pos] = bracket_gtd[low_pos];
      }
      // The new point becomes the new low.
      bracket[low_pos] = t;
      bracket_f[low_pos] = f_new;
      bracket_g[low_pos] = g_new.clone();
      bracket_gtd[low_pos] = gtd_new;
    }
  }
  return {bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals};
}

}  // namespace wick::optim::detail
