// linear and addmm against the composite they replace (matmul of weight.t() plus a broadcast add,
// whose gradients go through TransposeBackward and AddBackward), on every device, for
// contiguous, transposed and strided operands (Note [GEMM without copies]). The float64
// gradchecks of linear are in functional_gradcheck_test.cpp, PyTorch's values in
// functional_oracle_test.cpp.
#include <catch2/catch.hpp>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/gradcheck.h"
#include "wick/autograd/functions.h"
#include "wick/core/generator.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"

using namespace wick;
namespace F = wick::nn::functional;

namespace {
// The composite linear, the reference.
Tensor composite_linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  Tensor y = matmul(x, w.t());
  return b.defined() ? add(y, b) : y;
}

struct Grads {
  Tensor out, gx, gw, gb;
};
Grads run(bool fused, const Tensor& x0, const Tensor& w0, const Tensor& b0, const Tensor& gout) {
  Tensor x = x0.detach().requires_grad_(true), w = w0.detach().requires_grad_(true);
  Tensor b = b0.defined() ? b0.detach().requires_grad_(true) : Tensor();
  Tensor out = fused ? F::linear(x, w, b) : composite_linear(x, w, b);
  out.backward(gout);
  return {out.detach(), x.grad(), w.grad(), b.defined() ? b.grad() : Tensor()};
}
}  // namespace

TEST_CASE("linear matches matmul plus add for every operand layout, forward and backward", "[nn][linear]") {
  for (const Device d : test::test_devices()) {
    for (const DType dt : {kFloat32, kFloat64}) {
      CAPTURE(d, dt);
      manual_seed(3);
      const TensorOptions o = TensorOptions(dt).device(d);
      const double tol = dt == kFloat32 ? 1e-5 : 1e-12;
      // x: contiguous, transposed ([in, batch] storage), a strided slice; w: contiguous and transposed.
      const Tensor x_plain = randn({6, 5}, o);
      const Tensor x_t = randn({5, 6}, o).t();
      const Tensor x_strided = randn({6, 10}, o).slice(1, 0, 10, 2);
      const Tensor x_3d = randn({2, 3, 5}, o);
      const Tensor w_plain = randn({4, 5}, o);
      const Tensor w_t = randn({5, 4}, o).t();
      const Tensor bias = randn({4}, o);
      for (const Tensor& x : {x_plain, x_t, x_strided, x_3d}) {
        for (const Tensor& w : {w_plain, w_t}) {
          for (const Tensor& b : {bias, Tensor()}) {
            DimVector os(x.sizes());
            os.back() = 4;
            const Tensor gout = randn(os, o);
            const Grads got = run(true, x, w, b, gout), want = run(false, x, w, b, gout);
            CHECK_ALLCLOSE(got.out, want.out, tol, tol);
            CHECK_ALLCLOSE(got.gx, want.gx, tol, tol);
            CHECK_ALLCLOSE(got.gw, want.gw, tol, tol);
            CHECK(got.gw.is_contiguous());  // written in place of the weight's layout, no copy
            if (b.defined()) CHECK_ALLCLOSE(got.gb, want.gb, tol, tol);
          }
        }
      }
    }
  }
}

TEST_CASE("linear of a 1-d input and of an empty batch", "[nn][linear]") {
  manual_seed(4);
  const Tensor x = randn({5}), w = randn({3, 5}), b = randn({3});
  const Grads got = run(true, x, w, b, ones({3})), want = run(false, x, w, b, ones({3}));
  CHECK(got.out.sizes() == IntArrayRef({3}));
  CHECK_ALLCLOSE(got.out, want.out, 1e-6, 1e-6);
  CHECK_ALLCLOSE(got.gx, want.gx, 1e-6, 1e-6);
  CHECK_ALLCLOSE(got.gw, want.gw, 1e-6, 1e-6);
  const Tensor e = F::linear(zeros({0, 5}), w, b);
  CHECK(e.sizes() == IntArrayRef({0, 3}));
  // k = 0: the output is the bias alone.
  const Tensor k0 = F::linear(zeros({2, 0}), zeros({3, 0}), b);
  CHECK_ALLCLOSE(k0, b.unsqueeze(0).expand({2, 3}), 0, 0);
}

TEST_CASE("native addmm adds a broadcast bias through GEMM and checks its operands", "[nn][linear]") {
  manual_seed(5);
  const Tensor a = randn({3, 4}), m = randn({6, 4}).t(), row = randn({6}), full = randn({3, 6}), col = randn({3, 1});
  for (const Tensor& bias : {row, full, col}) {
    CHECK_ALLCLOSE(native::addmm(bias, a, m), add(matmul(a, m), bias), 1e-5, 1e-5);
  }
  CHECK_ALLCLOSE(native::addmm(Tensor(), a, m), matmul(a, m), 0, 0);
  CHECK_THROWS_AS(native::addmm(randn({5}), a, m), ValueError);       // bias does not broadcast
  CHECK_THROWS_AS(native::addmm(row, a, randn({5, 6})), ValueError);  // 4 != 5
  CHECK_THROWS_AS(native::addmm(row, a, randn({4, 6}, kFloat64)), TypeError);
  CHECK_THROWS_AS(native::addmm(row, randn({2, 3, 4}), m), ValueError);  // not 2-d
  CHECK_THROWS_AS(F::linear(randn({2, 4}, TensorOptions().device(Device("cpu:1"))), randn({3, 4}), randn({3})),
                  ValueError);
}
