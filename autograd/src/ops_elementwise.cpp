// Differentiable elementwise ops. Each backward is written on the public API (double backward).
#include <cmath>

#include "alpha_fit.h"
#include "op_helpers.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

Tensor add(const Tensor& a, const Tensor& b, Scalar alpha) {
  check_alpha_fits("add", a, b, alpha);
  const bool unit = !alpha.is_floating() && alpha.to_int() == 1;
  Tensor out = unit ? native::binary(BinaryOp::Add, a, b)
                    : native::binary(BinaryOp::Add, a, native::binary(BinaryOp::Mul, b, alpha));
  if (needs_grad({&a, &b})) {
    DimVector sa(a.sizes()), sb(b.sizes());
    DType da = a.dtype(), db = b.dtype();
    record_function("AddBackward", {a, b}, {out}, [=](const VL& g, const VL&) -> VL {
      return {grad_to(g[0], sa, da), grad_to(unit ? g[0] : mul(g[0], scalar_tensor(alpha, g[0].options())), sb, db)};
    });
  }
  return out;
}

Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha) {
  check_alpha_fits("sub", a, b, alpha);
  const bool unit = !alpha.is_floating() && alpha.to_int() == 1;
  Tensor out = unit ? native::binary(BinaryOp::Sub, a, b)
                    : native::binary(BinaryOp::Sub, a, native::binary(BinaryOp::Mul, b, alpha));
  if (needs_grad({&a, &b})) {
    DimVector sa(a.sizes()), sb(b.sizes());
    DType da = a.dtype(), db = b.dtype();
    record_function("SubBackward", {a, b}, {out}, [=](const VL& g, const VL&) -> VL {
      Tensor gb = unit ? neg(g[0]) : mul(g[0], scalar_tensor(-alpha.to_double(), g[0].options()));
      return {grad_to(g[0], sa, da), grad_to(gb, sb, db)};
    });
  }
  return out;
}

// Note [Scalar operands] (autograd side): x + 1, x * 2.5 and their kin go to native::binary(op,
// a, Scalar), so a backend with the binary_scalar stub runs them in one launch. The CPU has no
// such stub and takes the 0-d tensor path, which gives the values the tensor-tensor op gave.
// The backward nodes keep the tensor-tensor ops' names.
Tensor detail::scalar_op(BinaryOp op, const Tensor& a, Scalar b) {
  WICK_CHECK(op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul || op == BinaryOp::Div,
             "scalar_op: only add, sub, mul and div take a Scalar here");
  Tensor out = native::binary(op, a, b);
  if (needs_grad({&a})) {
    DimVector sa(a.sizes());
    DType da = a.dtype();
    const char* name = op == BinaryOp::Add   ? "AddBackward"
                       : op == BinaryOp::Sub ? "SubBackward"
                       : op == BinaryOp::Mul ? "MulBackward"
                                             : "DivBackward";
    record_function(name, {a}, {out}, [=](const VL& g, const VL&) -> VL {
      const bool scaled = op == BinaryOp::Mul || op == BinaryOp::Div;
      return {grad_to(scaled ? scalar_op(op, g[0], b) : g[0], sa, da)};
    });
  }
  return out;
}

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = native::binary(BinaryOp::Mul, a, b);
  if (needs_grad({&a, &b})) {
    DimVector sa(a.sizes()), sb(b.sizes());
    DType da = a.dtype(), db = b.dtype();
    const bool ra = a.requires_grad(), rb = b.requires_grad();
    record_function(
        "MulBackward", {a, b}, {out},
        [=](const VL& g, const VL& s) -> VL {
          return {ra ? grad_to(mul(g[0], s[1]), sa, da) : Tensor(), rb ? grad_to(mul(g[0], s[0]), sb, db) : Tensor()};
        },
        {rb ? a : Tensor(), ra ? b : Tensor()});
  }
  return out;
}

Tensor div(const Tensor& a, const Tensor& b) {
  Tensor out = native::binary(BinaryOp::Div, a, b);
  if (needs_grad({&a, &b})) {
    DimVector sa(a.sizes()), sb(b.sizes());
    DType da = a.dtype(), db = b.dtype();
    const bool rb = b.requires_grad();
    record_function("DivBackward", {a, b}, {out},
                    [=](const VL& g, const VL& s) -> VL {
                      Tensor ga = div(g[0], s[1]);
                      // -g * ((a / b) / b), as PyTorch: g * a / (b * b) over- or underflows in
                      // b * b (float32 |b| above 1.8e19 or below 1e-19) where the quotients do not.
                      Tensor gb = rb ? neg(mul(g[0], div(div(s[0], s[1]), s[1]))) : Tensor();
                      return {grad_to(ga, sa, da), rb ? grad_to(gb, sb, db) : Tensor()};
                    },
                    {a, b});
  }
  return out;
}

Tensor pow(const Tensor& a, Scalar e) {
  // Scalars reach kernels as doubles, exact only up to 2^53: a larger integer exponent of an
  // integer tensor takes the exact tensor-exponent path instead (int64 result, wrapping, as
  // PyTorch's), where a double would round it (or, past INT64_MAX, make the result float32).
  if (!e.is_floating() && a.defined() && !is_floating(a.dtype()) && !int64_fits_double(e.to_int())) {
    WICK_CHECK(e.to_int() >= 0,
               "pow: integers to negative integer powers are not allowed (a {} tensor of shape [{}] to the power {}); "
               "convert the tensor to a floating type first, e.g. .to(wick::kFloat32)",
               a.dtype(), fmt::join(a.sizes(), ", "), e.to_int());
    return native::binary(BinaryOp::Pow, a, native::scalar_tensor(e, kInt64, a.device()));
  }
  Tensor out = native::unary(UnaryOp::PowScalar, a, e.to_double());
  if (needs_grad({&a})) {
    const double ev = e.to_double();
    record_function("PowBackward0", {a}, {out},
                    [=](const VL& g, const VL& s) -> VL {
                      if (ev == 0.0) return {zeros_like(s[0])};
                      return {mul(g[0], mul(pow(s[0], ev - 1.0), scalar_tensor(ev, s[0].options())))};
                    },
                    {a});
  }
  return out;
}

Tensor pow(const Tensor& a, const Tensor& e) {
  Tensor out = native::binary(BinaryOp::Pow, a, e);
  if (needs_grad({&a, &e})) {
    DimVector sa(a.sizes()), se(e.sizes());
    DType da = a.dtype(), de = e.dtype();
    record_function("PowBackward1", {a, e}, {out},
                    [=](const VL& g, const VL& s) -> VL {
                      const Tensor &x = s[0], &y = s[1], &r = s[2];
                      Tensor ga = mul(g[0], mul(y, pow(x, sub(y, ones_like(y)))));
                      // Where y == 0 the gradient is 0 even at x == 0 (0 * 0^-1 would be NaN), as PyTorch.
                      ga = where(eq(y, zeros_like(y)), zeros_like(ga), ga);
                      // d/dy x^y = x^y log x; defined as 0 where x == 0 and y >= 0 (PyTorch's convention).
                      Tensor gy = mul(g[0], mul(r, log(x)));
                      gy = where(logical_and(eq(x, zeros_like(x)), ge(y, zeros_like(y))), zeros_like(gy), gy);
                      return {grad_to(ga, sa, da), grad_to(gy, se, de)};
                    },
                    {a, e}, {out});
  }
  return out;
}

namespace {
// maximum/minimum: the gradient goes to the selected operand; ties split it in half.
Tensor extremum(BinaryOp op, const Tensor& a, const Tensor& b, const char* name) {
  Tensor out = native::binary(op, a, b);
  if (needs_grad({&a, &b})) {
    DimVector sa(a.sizes()), sb(b.sizes());
    DType da = a.dtype(), db = b.dtype();
    const bool is_max = op == BinaryOp::Maximum;
    record_function(name, {a, b}, {out},
                    [=](const VL& g, const VL& s) -> VL {
                      Tensor wins = is_max ? gt(s[0], s[1]) : lt(s[0], s[1]);
                      Tensor ties = eq(s[0], s[1]);
                      Tensor half = mul(g[0], scalar_tensor(0.5, g[0].options()));
                      Tensor z = zeros_like(g[0]);
                      Tensor ga = where(wins, g[0], where(ties, half, z));
                      Tensor gb = where(wins, z, where(ties, half, g[0]));
                      return {grad_to(ga, sa, da), grad_to(gb, sb, db)};
                    },
                    {a, b});
  }
  return out;
}
}  // namespace

Tensor maximum(const Tensor& a, const Tensor& b) { return extremum(BinaryOp::Maximum, a, b, "MaximumBackward"); }
Tensor minimum(const Tensor& a, const Tensor& b) { return extremum(BinaryOp::Minimum, a, b, "MinimumBackward"); }

namespace {
using UnaryBackward = Tensor (*)(const Tensor& g, const Tensor& x, const Tensor& out);
// A unary op whose backward uses the input (x) and/or the output.
Tensor unary_op(UnaryOp op, const Tensor& a, const char* name, UnaryBackward bw, bool save_x, bool save_out) {
  Tensor out = native::unary(op, a);
  if (needs_grad({&a})) {
    record_function(
        name, {a}, {out},
        [bw, save_x, save_out](const VL& g, const VL& s) -> VL {
          Tensor x = save_x ? s[0] : Tensor();
          Tensor o = save_out ? s[save_x ? 1 : 0] : Tensor();
          return {bw(g[0], x, o)};
        },
        save_x ? VL{a} : VL{}, save_out ? VL{out} : VL{});
  }
  return out;
}
Tensor half_of(const Tensor& t) { return mul(t, scalar_tensor(0.5, t.options())); }
}  // namespace

Tensor neg(const Tensor& a) {
  return unary_op(
      UnaryOp::Neg, a, "NegBackward", [](const Tensor& g, const Tensor&, const Tensor&) { return neg(g); }, false,
      false);
}
Tensor abs(const Tensor& a) {
  return unary_op(
      UnaryOp::Abs, a, "AbsBackward", [](const Tensor& g, const Tensor& x, const Tensor&) { return mul(g, sign(x)); },
      true, false);
}
Tensor exp(const Tensor& a) {
  return unary_op(
      UnaryOp::Exp, a, "ExpBackward", [](const Tensor& g, const Tensor&, const Tensor& o) { return mul(g, o); }, false,
      true);
}
Tensor log(const Tensor& a) {
  return unary_op(
      UnaryOp::Log, a, "LogBackward", [](const Tensor& g, const Tensor& x, const Tensor&) { return div(g, x); }, true,
      false);
}
Tensor sqrt(const Tensor& a) {
  return unary_op(
      UnaryOp::Sqrt, a, "SqrtBackward",
      [](const Tensor& g, const Tensor&, const Tensor& o) { return div(half_of(g), o); }, false, true);
}
Tensor rsqrt(const Tensor& a) {
  return unary_op(
      UnaryOp::Rsqrt, a, "RsqrtBackward",
      [](const Tensor& g, const Tensor&, const Tensor& o) { return neg(half_of(mul(g, pow(o, 3.0)))); }, false, true);
}
Tensor tanh(const Tensor& a) {
  return unary_op(
      UnaryOp::Tanh, a, "TanhBackward",
      [](const Tensor& g, const Tensor&, const Tensor& o) { return mul(g, sub(ones_like(o), mul(o, o))); }, false,
      true);
}
Tensor sigmoid(const Tensor& a) {
  return unary_op(
      UnaryOp::Sigmoid, a, "SigmoidBackward",
      [](const Tensor& g, const Tensor&, const Tensor& o) { return mul(g, mul(o, sub(ones_like(o), o))); }, false,
      true);
}
namespace {
// relu's backward, g where out > 0 else 0, in one kernel pass. Linear in g, so its own backward
// is the same function of the incoming gradient (double backward).
Tensor relu_backward(const Tensor& g, const Tensor& out) {
  Tensor r = native::binary(BinaryOp::ReluBackward, g, out);
  if (needs_grad({&g})) {
    record_function("ReluBackwardBackward", {g}, {r},
                    [](const VL& gg, const VL& s) -> VL { return {relu_backward(gg[0], s[0])}; }, {out.detach()});
  }
  return r;
}
}  // namespace

Tensor relu(const Tensor& a) {
  return unary_op(
      UnaryOp::Relu, a, "ReluBackward",
      [](const Tensor& g, const Tensor&, const Tensor& o) { return relu_backward(g, o); }, false, true);
}
Tensor gelu(const Tensor& a) {
  return unary_op(
      UnaryOp::Gelu, a, "GeluBackward",
      [](const Tensor& g, const Tensor& x, const Tensor&) {
        // d/dx x*Phi(x) = Phi(x) + x*phi(x): one fused pass (math::gelu_backward), or, with
        // create_graph, the same formula in differentiable ops so that it has a gradient.
        if (!GradMode::is_enabled() && g.dtype() == x.dtype() && g.device() == x.device())
          return native::binary(BinaryOp::GeluBackward, g, x);
        const double inv_sqrt2 = 0.70710678118654752440, inv_sqrt2pi = 0.39894228040143267794;
        Tensor cdf = half_of(add(ones_like(x), erf(mul(x, scalar_tensor(inv_sqrt2, x.options())))));
        Tensor pdf =
            mul(exp(mul(mul(x, x), scalar_tensor(-0.5, x.options()))), scalar_tensor(inv_sqrt2pi, x.options()));
        return mul(g, add(cdf, mul(x, pdf)));
      },
      true, false);
}
Tensor sin(const Tensor& a) {
  return unary_op(
      UnaryOp::Sin, a, "SinBackward", [](const Tensor& g, const Tensor& x, const Tensor&) { return mul(g, cos(x)); },
      true, false);
}
Tensor cos(const Tensor& a) {
  return unary_op(
      UnaryOp::Cos, a, "CosBackward",
      [](const Tensor& g, const Tensor& x, const Tensor&) { return neg(mul(g, sin(x))); }, true, false);
}
Tensor square(const Tensor& a) {
  return unary_op(
      UnaryOp::Square, a, "SquareBackward",
      [](const Tensor& g, const Tensor& x, const Tensor&) { return mul(g, mul(x, scalar_tensor(2.0, x.options()))); },
      true, false);
}
Tensor reciprocal(const Tensor& a) {
  return unary_op(
      UnaryOp::Reciprocal, a, "ReciprocalBackward",
      [](const Tensor& g, const Tensor&, const Tensor& o) { return neg(mul(g, mul(o, o))); }, false, true);
}
Tensor sign(const Tensor& a) {
  return unary_op(
      UnaryOp::Sign, a, "SignBackward", [](const Tensor& g, const Tensor&, const Tensor&) { return zeros_like(g); },
      false, false);
}
Tensor erf(const Tensor& a) {
  return unary_op(
      UnaryOp::Erf, a, "ErfBackward",
      [](const Tensor& g, const Tensor& x, const Tensor&) {
        const double two_over_sqrt_pi = 1.12837916709551257390;
        return mul(g, mul(exp(neg(mul(x, x))), scalar_tensor(two_over_sqrt_pi, x.options())));
      },
      true, false);
}
Tensor log1p(const Tensor& a) {
  return unary_op(
      UnaryOp::Log1p, a, "Log1pBackward",
      [](const Tensor& g, const Tensor& x, const Tensor&) { return div(g, add(x, ones_like(x))); }, true, false);
}
Tensor expm1(const Tensor& a) {
  return unary_op(
      UnaryOp::Expm1, a, "Expm1Backward",
      [](const Tensor& g, const Tensor&, const Tensor& o) { return mul(g, add(o, ones_like(o))); }, false, true);
}

Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max) {
  Tensor out = distinct(native::clamp(a, min, max), a);
  if (needs_grad({&a})) {
    record_function("ClampBackward", {a}, {out},
                    [min, max](const VL& g, const VL& s) -> VL {
                      const Tensor& x = s[0];
                      Tensor keep = native::ones(x.sizes(), kBool, x.device());
                      if (min) keep = logical_and(keep, ge(x, full_like(x, *min)));
                      if (max) keep = logical_and(keep, le(x, full_like(x, *max)));
                      return {where(keep, g[0], zeros_like(g[0]))};
                    },
                    {a});
  }
  return out;
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  Tensor out = native::where(cond, a, b);
  if (needs_grad({&a, &b})) {
    DimVector sa(a.sizes()), sb(b.sizes());
    DType da = a.dtype(), db = b.dtype();
    record_function("WhereBackward", {a, b}, {out},
                    [=](const VL& g, const VL& s) -> VL {
                      Tensor z = zeros_like(g[0]);
                      return {grad_to(where(s[0], g[0], z), sa, da), grad_to(where(s[0], z, g[0]), sb, db)};
                    },
                    {cond});
  }
  return out;
}

Tensor eq(const Tensor& a, const Tensor& b) { return native::binary(BinaryOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return native::binary(BinaryOp::Ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return native::binary(BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return native::binary(BinaryOp::Le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return native::binary(BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return native::binary(BinaryOp::Ge, a, b); }
Tensor logical_not(const Tensor& a) { return native::unary(UnaryOp::LogicalNot, a); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return native::binary(BinaryOp::LogicalAnd, a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return native::binary(BinaryOp::LogicalOr, a, b); }

}  // namespace wick
