// The fused layer_norm (Note [Fused layer_norm]) against the composite it replaces: the composite
// runs for non-contiguous inputs, so the same values laid out both ways take both paths.
#include <wick/nn/nn.h>
#include <wick/wick.h>

#include <catch2/catch.hpp>

#include "support/allclose.h"

using namespace wick;
namespace F = wick::nn::functional;

namespace {
struct Run {
  Tensor y, dx, dw, db;
};

// layer_norm over the last dim of x ([rows, cols]), laid out contiguously or transposed.
Run run(const Tensor& x_values, const Tensor& w, const Tensor& b, bool contiguous) {
  const int64_t cols = x_values.size(1);
  Tensor x = contiguous ? x_values.clone() : x_values.t().contiguous().t();
  REQUIRE(x.is_contiguous() == contiguous);
  x.requires_grad_(true);
  Tensor wl = w.defined() ? w.clone().requires_grad_(true) : Tensor();
  Tensor bl = b.defined() ? b.clone().requires_grad_(true) : Tensor();
  Tensor y = F::layer_norm(x, {cols}, wl, bl, 1e-5);
  manual_seed(9);
  Tensor up = randn(y.sizes(), y.dtype());
  autograd::backward({y}, {up});
  return {y.detach(), x.grad(), wl.defined() ? wl.grad() : Tensor(), bl.defined() ? bl.grad() : Tensor()};
}
}  // namespace

TEST_CASE("fused layer_norm: equals the composite in values and gradients, with and without affine") {
  for (DType dt : {kFloat64, kFloat32}) {
    const double tol = dt == kFloat64 ? 1e-12 : 2e-5;
    manual_seed(1);
    Tensor x = randn({6, 37}, dt) * 3.0 + 1.5;
    Tensor w = randn({37}, dt), b = randn({37}, dt);
    for (int affine = 0; affine < 3; ++affine) {  // none, weight only, weight and bias
      INFO("dtype " << dt << ", affine " << affine);
      Run fused = run(x, affine ? w : Tensor(), affine == 2 ? b : Tensor(), true);
      Run composite = run(x, affine ? w : Tensor(), affine == 2 ? b : Tensor(), false);
      CHECK_ALLCLOSE(fused.y, composite.y, tol, tol);
      CHECK_ALLCLOSE(fused.dx, composite.dx, tol, tol);
      if (affine) CHECK_ALLCLOSE(fused.dw, composite.dw, tol, tol);
      if (affine == 2) CHECK_ALLCLOSE(fused.db, composite.db, tol, tol);
    }
  }
}

TEST_CASE("fused layer_norm: one node, reached through its stub") {
  Tensor x = randn({4, 8}).requires_grad_(true);
  nn::LayerNorm ln(nn::LayerNormOptions({8}));
  std::string json;
  Tensor y;
  {
    profiler::Trace trace;
    y = ln(x);
    json = trace.stop();
  }
  CHECK(json.find("stub:layer_norm_rows") != std::string::npos);
  REQUIRE(y.grad_fn());
  CHECK(y.grad_fn()->name() == "LayerNormBackward");
  // A constant row has variance 0: rstd = 1 / sqrt(eps), and y = bias.
  Tensor c = full({2, 8}, 3.0);
  CHECK(allclose(ln(c), ln->bias().expand({2, 8}), 1e-6, 1e-6));
}
