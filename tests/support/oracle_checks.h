#pragma once
// Checking an output computed by wick, and its gradients, against an oracle case (oracle.h).
#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/oracle.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/functional_3d.h"
#include "wick/nn/module.h"

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

/// How check_oracle_ops asserts an output's dtype: not at all, CHECKed, or REQUIREd after its shape.
enum class OracleDtype { kUnchecked, kCheck, kRequire };

/// What check_oracle_ops asserts of each output besides check_oracle_case.
struct OracleOpChecks {
  double out_rtol = 0, grad_rtol = 0, atol = 0;  ///< check_oracle_case's tolerances
  bool require_defined = false;                  ///< REQUIRE(out.defined()) first
  OracleDtype dtype = OracleDtype::kCheck;       ///< out.dtype() == c.out.dtype()
};

/// An oracle case's op applied to the case's leaves on `dev`.
using OracleRun = std::function<Tensor(const OracleCase& c, const std::vector<Tensor>& leaves, Device dev)>;

/// How many cases check_oracle_ops ran, per op and in all.
struct OracleOpCounts {
  std::map<std::string, int> by_op;
  int total = 0;
};

/// For each oracle case whose op is in `ops`, on every test device (INFO names the case and the
/// device): runs `run` on the case's leaves, asserts what `k` asks (defined, dtype) and REQUIREs the
/// case's shape, then check_oracle_case with `k`'s tolerances. Returns the cases counted.
inline OracleOpCounts check_oracle_ops(const std::set<std::string>& ops, const OracleRun& run,
                                       const OracleOpChecks& k) {
  OracleOpCounts seen;
  for (const OracleCase& c : oracle_cases()) {
    if (!ops.count(c.op)) continue;
    for (Device dev : test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const std::vector<Tensor> x = c.leaves(dev);
      const Tensor out = run(c, x, dev);
      if (k.require_defined) REQUIRE(out.defined());
      if (k.dtype == OracleDtype::kCheck) CHECK(out.dtype() == c.out.dtype());
      REQUIRE(out.sizes() == c.out.sizes());
      if (k.dtype == OracleDtype::kRequire) REQUIRE(out.dtype() == c.out.dtype());
      check_oracle_case(c, out, x, dev, k.out_rtol, k.grad_rtol, k.atol);
    }
    ++seen.by_op[c.op];
    ++seen.total;
  }
  return seen;
}

/// A [d, h, w] list in the case's kwargs as an Int3 (absent: `fallback`); REQUIREs three entries.
inline nn::Int3 kwarg_int3(const OracleCase& c, const char* key, nn::Int3 fallback) {
  if (!c.kwargs.contains(key)) return fallback;
  const auto v = c.kwargs[key].get<std::vector<int64_t>>();
  REQUIRE(v.size() == 3);
  return nn::Int3(v[0], v[1], v[2]);
}

/// A layer case: copies PyTorch's parameters into `m` by name (the case's "inputs" kwarg: "input",
/// then the layer's parameter names in order), runs `forward` on the data input and checks the
/// flattened output and the gradients of the input and every parameter (check_oracle_case).
inline void check_oracle_layer(const OracleCase& c, nn::Module& m, const std::function<Tensor(const Tensor&)>& forward,
                               Device dev, double out_rtol, double grad_rtol, double atol) {
  INFO(c.label() << " on " << dev.str());
  const auto names = c.kwargs.at("inputs").get<std::vector<std::string>>();
  REQUIRE(names.size() == c.inputs.size());
  REQUIRE(names.at(0) == "input");
  std::vector<Tensor> leaves = c.leaves(dev);
  m.to(dev);
  const nn::OrderedDict<Tensor> params = m.named_parameters();
  REQUIRE(params.keys() == std::vector<std::string>(names.begin() + 1, names.end()));
  std::vector<Tensor> wrt(leaves.size());
  wrt[0] = leaves[0];
  {
    NoGradGuard no_grad;
    for (size_t j = 1; j < names.size(); ++j) {
      Tensor p = params[names[j]];
      REQUIRE(p.sizes() == leaves[j].sizes());
      p.copy_(leaves[j]);
      wrt[j] = p;
    }
  }
  check_oracle_case(c, forward(leaves[0]).reshape({-1}), wrt, dev, out_rtol, grad_rtol, atol);
}

}  // namespace wick::test
