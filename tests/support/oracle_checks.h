#pragma once
// Checking an output computed by wick, and its gradients, against an oracle case (oracle.h).
#include <catch2/catch.hpp>
#include <vector>

#include "support/allclose.h"
#include "support/oracle.h"

namespace wick::test {

/// CHECKs that `out` is on `dev` and matches c.out within (out_rtol, atol), and that the gradient
/// of each differentiable input `wrt[j]` (OracleCase::backward, with the case's gout) is defined,
/// on `dev`, and matches c.gin[j] within (grad_rtol, atol).
inline void check_oracle_case(const OracleCase& c, const Tensor& out, const std::vector<Tensor>& wrt, Device dev,
                              double out_rtol, double grad_rtol, double atol) {
  CHECK(out.device() == dev);
  CHECK_ALLCLOSE(out, c.out, out_rtol, atol);
  const std::vector<Tensor> grads = c.backward(out, wrt);
  for (size_t j = 0; j < wrt.size(); ++j) {
    if (!c.differentiable[j]) continue;
    INFO("gradient of input " << j);
    REQUIRE(grads[j].defined());
    CHECK(grads[j].device() == dev);
    CHECK_ALLCLOSE(grads[j], c.gin[j], grad_rtol, atol);
  }
}

}  // namespace wick::test
