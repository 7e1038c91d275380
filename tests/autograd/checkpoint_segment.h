#pragma once
// The segment both activation-checkpoint tests run (activation_checkpoint_test.cpp for the
// reentrant kind, checkpoint_nonreentrant_test.cpp): two inputs, a captured parameter pair and
// two outputs, and the seeded float64 tensors they are made of.
#include <wick/wick.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace wick::test::checkpointing {

inline Tensor seeded(IntArrayRef shape, uint64_t seed, Device d) {
  manual_seed(seed);
  return randn(shape, kFloat64).to(d);
}
inline Tensor leaf(IntArrayRef shape, uint64_t seed, Device d) { return seeded(shape, seed, d).requires_grad_(true); }

// `calls` counts its runs and `grad_mode` the grad mode of each; `inner` is its intermediate,
// seen weakly.
struct Segment {
  Tensor w, b;
  int calls = 0;
  std::vector<bool> grad_mode;
  std::weak_ptr<TensorImpl> inner;
  std::vector<Tensor> operator()(const std::vector<Tensor>& xs) {
    ++calls;
    grad_mode.push_back(GradMode::is_enabled());
    Tensor h = tanh(add(matmul(xs[0], w), b));
    inner = h.impl_ptr();
    return {mul(sin(h), xs[1]), sum(exp(h), {1})};
  }
};

// sum(out0 * g0) + sum(out1 * g1): one scalar through both outputs.
inline Tensor loss(const std::vector<Tensor>& outs, const Tensor& g0, const Tensor& g1) {
  return add(sum(mul(outs[0], g0)), sum(mul(outs[1], g1)));
}

}  // namespace wick::test::checkpointing
