// gradcheck and gradgradcheck: analytic Jacobians (one backward per output element) against
// central differences, in float64.
#include "wick/autograd/gradcheck.h"

#include <cmath>

#include "wick/autograd/functions.h"
#include "wick/autograd/grad.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"

namespace wick::autograd {

namespace {
using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

std::vector<double> flat_values(const std::vector<Tensor>& outs) {
  std::vector<double> v;
  for (const Tensor& o : outs) {
    if (!o.defined() || !o.is_floating_point()) continue;
    auto x = o.to_vector<double>();
    v.insert(v.end(), x.begin(), x.end());
  }
  return v;
}
}  // namespace

GradcheckResult gradcheck(const Fn& fn, const std::vector<Tensor>& inputs, GradcheckOptions opts) {
  std::vector<size_t> checked;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].requires_grad()) continue;
    WICK_CHECK_TYPE(inputs[i].dtype() == kFloat64, "gradcheck: input {} is {}; gradcheck needs float64 inputs", i,
                    inputs[i].dtype());
    checked.push_back(i);
  }
  WICK_CHECK(!checked.empty(), "gradcheck: no input requires grad");

  std::vector<Tensor> outs = fn(inputs);
  std::vector<Tensor> diff_outs;
  for (size_t i = 0; i < outs.size(); ++i) {
    const Tensor& o = outs[i];
    if (!o.defined() || !o.is_floating_point()) continue;
    WICK_CHECK_TYPE(o.dtype() == kFloat64,
                    "gradcheck: output {} is {}; gradcheck needs float64 outputs (a float32 output's rounding "
                    "swamps the central differences): convert it with .to(kFloat64) inside the function",
                    i, o.dtype());
    diff_outs.push_back(o);
  }
  size_t n_out = 0;
  for (const Tensor& o : diff_outs) n_out += static_cast<size_t>(o.numel());

  std::vector<Tensor> wrt;
  for (size_t i : checked) wrt.push_back(inputs[i]);

  // Analytic: row r of J^T from one backward with a one-hot gradient.
  std::vector<std::vector<std::vector<double>>> analytic(checked.size());  // [input][in elem][out elem]
  for (size_t k = 0; k < checked.size(); ++k)
    analytic[k].assign(static_cast<size_t>(wrt[k].numel()), std::vector<double>(n_out, 0.0));
  size_t r = 0;
  for (size_t oi = 0; oi < diff_outs.size(); ++oi) {
    for (int64_t e = 0; e < diff_outs[oi].numel(); ++e, ++r) {
      if (!diff_outs[oi].requires_grad()) continue;
      // Only outputs that require grad can be roots of a backward (the others contribute zero).
      std::vector<Tensor> roots, gos;
      for (size_t oj = 0; oj < diff_outs.size(); ++oj) {
        if (!diff_outs[oj].requires_grad()) continue;
        // A one-hot gradient, written with tensor ops so that it works on every device; element e
        // of the contiguous z is the output's element e in the order flat_values reads.
        Tensor z = zeros(diff_outs[oj].sizes(), diff_outs[oj].options());
        if (oj == oi) z.view({-1}).narrow(0, e, 1).fill_(1.0);
        roots.push_back(diff_outs[oj]);
        gos.push_back(z);
      }
      std::vector<Tensor> gs = grad(roots, wrt, gos, true, false, true);
      for (size_t k = 0; k < gs.size(); ++k) {
        if (!gs[k].defined()) continue;
        auto v = gs[k].contiguous().to_vector<double>();
        for (size_t j = 0; j < v.size(); ++j) analytic[k][j][r] = v[j];
      }
    }
  }

  // Numeric: central differences, one input element at a time.
  NoGradGuard no_grad;
  for (size_t k = 0; k < checked.size(); ++k) {
    const size_t idx = checked[k];
    for (int64_t j = 0; j < inputs[idx].numel(); ++j) {
      std::vector<Tensor> plus = inputs, minus = inputs;
      Tensor base = inputs[idx].contiguous().clone();
      Tensor p = base.clone(), m = base.clone();
      p.view({-1}).narrow(0, j, 1).add_(opts.eps);  // tensor ops: the input may be on any device
      m.view({-1}).narrow(0, j, 1).add_(-opts.eps);
      // The perturbed copies keep requires_grad: fn may depend on it (gradgradcheck's first-order
      // function differentiates with respect to the inputs that require grad).
      plus[idx] = p.view(inputs[idx].sizes()).requires_grad_(true);
      minus[idx] = m.view(inputs[idx].sizes()).requires_grad_(true);
      auto fp = flat_values(fn(plus));
      auto fm = flat_values(fn(minus));
      WICK_CHECK(fp.size() == n_out && fm.size() == n_out,
                 "gradcheck: the function returned {} and {} output "
                 "elements for perturbed inputs but {} for the original ones",
                 fp.size(), fm.size(), n_out);
      for (size_t o = 0; o < n_out; ++o) {
        const double num = (fp[o] - fm[o]) / (2 * opts.eps);
        const double ana = analytic[k][static_cast<size_t>(j)][o];
        if (std::abs(num - ana) > opts.atol + opts.rtol * std::abs(num) || std::isnan(ana) != std::isnan(num)) {
          return {false, fmt::format("gradcheck: Jacobian mismatch for input {} element {} and output element {}: "
                                     "analytic {} vs numerical {}",
                                     idx, j, o, ana, num)};
        }
      }
    }
  }
  return {};
}

GradcheckResult gradgradcheck(const Fn& fn, const std::vector<Tensor>& inputs, GradcheckOptions opts) {
  std::vector<Tensor> outs = fn(inputs);
  std::vector<Tensor> grad_outs;
  for (const Tensor& o : outs) {
    Tensor g = randn(o.sizes(), o.options());
    g.requires_grad_(true);
    grad_outs.push_back(g);
  }
  const size_t n_in = inputs.size();
  std::vector<Tensor> all = inputs;
  all.insert(all.end(), grad_outs.begin(), grad_outs.end());
  auto first_order = [&](const std::vector<Tensor>& xs) {
    std::vector<Tensor> in(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(n_in));
    std::vector<Tensor> go(xs.begin() + static_cast<std::ptrdiff_t>(n_in), xs.end());
    std::vector<Tensor> wrt;
    for (const Tensor& t : in)
      if (t.defined() && t.requires_grad()) wrt.push_back(t);
    if (!GradMode::is_enabled()) {
      // Numerical pass: evaluate the first derivative with recording on, then return values.
      AutoGradMode enable(true);
      std::vector<Tensor> in2;
      for (const Tensor& t : in) {
        Tensor c = t.detach().clone();
        if (t.requires_grad()) c.requires_grad_(true);
        in2.push_back(c);
      }
      std::vector<Tensor> wrt2;
      for (const Tensor& t : in2)
        if (t.requires_grad()) wrt2.push_back(t);
      std::vector<Tensor> o2 = fn(in2);
      auto gs = grad(o2, wrt2, go, true, false, true);
      for (size_t i = 0; i < gs.size(); ++i)  // unused inputs: zeros, as in the analytic pass
        gs[i] = gs[i].defined() ? gs[i].detach() : zeros(wrt2[i].sizes(), wrt2[i].options());
      return gs;
    }
    std::vector<Tensor> o = fn(in);
    auto gs = grad(o, wrt, go, true, true, true);
    for (size_t i = 0; i < gs.size(); ++i)
      if (!gs[i].defined()) gs[i] = zeros(wrt[i].sizes(), wrt[i].options());
    return gs;
  };
  return gradcheck(first_order, all, opts);
}

}  // namespace wick::autograd
