#pragma once
// What the optimizer reference tests share (tests/support/optim_reference.h for SGD and Adam,
// tests/support/rmsprop_adagrad_reference.h for RMSprop and Adagrad): the two parameters'
// starting values and loss coefficients, the loss's gradients, and the element-wise comparison.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "wick/autograd/functions.h"

namespace wick::test::optim_common {

/// Two parameters (6 and 4 elements) with loss = sum(0.5 * c * p^2 + d * p): Ref has p, c and d.
template <class Ref>
std::vector<Ref> make_refs() {
  Ref a, b;
  a.p = {0.5, -1.25, 2.0, 0.75, -0.3, 1.1};
  a.c = {1.0, 0.5, 2.0, 0.1, 3.0, 0.7};
  a.d = {0.2, -0.4, 0.1, 0.9, -1.0, 0.05};
  b.p = {-2.0, 0.4, 1.5, 0.01};
  b.c = {0.3, 1.7, 0.9, 2.5};
  b.d = {-0.6, 0.8, 0.0, 0.3};
  return {a, b};
}

/// `v` as a leaf of `shape` and dtype `dt` that requires grad.
inline Tensor to_tensor(const std::vector<double>& v, IntArrayRef shape, DType dt) {
  return wick::tensor(v, shape, TensorOptions(dt)).requires_grad_(true);
}

/// loss = sum(0.5 * c * p^2 + d * p) over every parameter, then backward.
template <class Ref>
void compute_grads(const std::vector<Tensor>& ps, const std::vector<Ref>& refs) {
  Tensor loss;
  for (size_t i = 0; i < ps.size(); ++i) {
    Tensor c = wick::tensor(refs[i].c, ps[i].sizes(), TensorOptions(ps[i].dtype()));
    Tensor d = wick::tensor(refs[i].d, ps[i].sizes(), TensorOptions(ps[i].dtype()));
    Tensor li = wick::sum(c * ps[i] * ps[i] * 0.5 + d * ps[i]);
    loss = loss.defined() ? loss + li : li;
  }
  loss.backward();
}

/// CHECKs every element of `t` against `ref` within rtol (relative to max(1, |ref|)).
inline void check_close(const Tensor& t, const std::vector<double>& ref, double rtol, const std::string& what) {
  auto got = t.to_vector<double>();
  REQUIRE(got.size() == ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    INFO(what << " element " << i << ": got " << got[i] << " want " << ref[i]);
    CHECK(std::abs(got[i] - ref[i]) <= rtol * std::max(1.0, std::abs(ref[i])));
  }
}

}  // namespace wick::test::optim_common
