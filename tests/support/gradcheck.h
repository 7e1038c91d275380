#pragma once
// Catch2 wrappers around wick::autograd::gradcheck / gradgradcheck that print the mismatch.
//
//   CHECK_GRADCHECK([](const TensorList& x) { return TensorList{wick::exp(x[0])}; },
//                   {wick::randn({3, 4}, wick::TensorOptions(wick::kFloat64).requires_grad())});
#include <catch2/catch.hpp>
#include <functional>
#include <vector>

#include "wick/autograd/functions.h"
#include "wick/autograd/grad.h"
#include "wick/autograd/grad_mode.h"
#include "wick/autograd/gradcheck.h"

#define WICK_TEST_GRADCHECK_IMPL(CHECKER, fn, ...)                    \
  do {                                                                \
    const auto wick_gc_ = ::wick::autograd::CHECKER(fn, __VA_ARGS__); \
    INFO(#CHECKER ": " << wick_gc_.message);                          \
    CHECK(wick_gc_.ok);                                               \
  } while (0)

/// CHECK_GRADCHECK(fn, inputs[, GradcheckOptions])
#define CHECK_GRADCHECK(fn, ...) WICK_TEST_GRADCHECK_IMPL(gradcheck, fn, __VA_ARGS__)
/// CHECK_GRADGRADCHECK(fn, inputs[, GradcheckOptions])
#define CHECK_GRADGRADCHECK(fn, ...) WICK_TEST_GRADCHECK_IMPL(gradgradcheck, fn, __VA_ARGS__)
/// CHECK_GRADCHECK and CHECK_GRADGRADCHECK of the same fn and inputs.
#define CHECK_GRADCHECKS(fn, ...)         \
  do {                                    \
    CHECK_GRADCHECK(fn, __VA_ARGS__);     \
    CHECK_GRADGRADCHECK(fn, __VA_ARGS__); \
  } while (0)

namespace wick::test {

/// Double backward: CHECK_GRADCHECK of x -> grad(fn(x), x, gout, create_graph) for a random
/// float64 gout on each output's device. It keeps the gradients that depend on the inputs (a
/// bias gradient may not). In the numerical pass the inputs do not require grad, so fresh leaves
/// are made. (Written here rather than with autograd::gradgradcheck, whose numerical pass is not
/// used by the nn tests.)
inline void check_double_backward(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
                                  const std::vector<Tensor>& inputs) {
  using TL = std::vector<Tensor>;
  TL gouts;
  for (const Tensor& o : fn(inputs))
    gouts.push_back(wick::randn(o.sizes(), TensorOptions(kFloat64).device(o.device())));
  auto first = [&](const TL& x) {
    AutoGradMode on(true);
    TL leaves;
    for (const Tensor& t : x) leaves.push_back(t.requires_grad() ? t : t.detach().requires_grad_(true));
    TL out;
    for (const Tensor& g : wick::autograd::grad(fn(leaves), leaves, gouts, true, /*create_graph=*/true,
                                                /*allow_unused=*/true))
      if (g.defined() && g.requires_grad()) out.push_back(g);
    return out;
  };
  CHECK_GRADCHECK(first, inputs);
}

}  // namespace wick::test
