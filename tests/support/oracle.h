#pragma once
// The PyTorch oracle: reference cases computed by PyTorch in float64 (tests/data/generate.py).
//
// The file tests/data/ops.safetensors (written by tests/data/generate.py; its header says how) holds, per
// case i: c{i}.in{j} (input j), c{i}.out (the output), c{i}.gout (the upstream gradient given to
// backward) and c{i}.gin{j} (the gradient of input j, for differentiable inputs only), plus a
// manifest in __metadata__["cases"]: [{"id", "op", "inputs", "differentiable", "kwargs"}, ...].
//
// Typical use (see tests/autograd/oracle_test.cpp):
//
//   for (const auto& c : wick::test::oracle_cases()) {
//     if (c.op != "linear") continue;
//     auto leaves = c.leaves();                 // inputs, differentiable ones requiring grad
//     Tensor out = my_linear(leaves[0], leaves[1], leaves[2]);
//     CHECK_ALLCLOSE(out, c.out, 1e-9, 0);
//     auto grads = c.backward(out, leaves);     // gradients of the differentiable inputs
//     for (size_t j = 0; j < grads.size(); ++j)
//       if (c.differentiable[j]) CHECK_ALLCLOSE(grads[j], c.gin[j], 1e-9, 0);
//   }
//
// The file can be replaced with $WICK_ORACLE_FILE (e.g. one made by `generate.py --set extended`).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/printers.h"
#include "wick/core/tensor.h"

namespace wick::test {

struct OracleCase {
  int id = 0;
  std::string op;
  nlohmann::json kwargs;             ///< the op's keyword arguments, as recorded by generate.py
  std::vector<Tensor> inputs;        ///< c{id}.in{j} (float64, int64 indices)
  std::vector<bool> differentiable;  ///< per input
  Tensor out, gout;
  std::vector<Tensor> gin;  ///< per input; undefined where not differentiable

  /// "case 12 (sum, kwargs {"dim":[1]})", for INFO/SECTION names.
  std::string label() const;
  /// Fresh copies of the inputs on `device`; differentiable ones require grad.
  std::vector<Tensor> leaves(Device device = kCPU) const;
  /// Gradients of `out` w.r.t. the differentiable `leaves`, with upstream gradient gout (moved
  /// to out's device); one entry per input, undefined for non-differentiable ones.
  std::vector<Tensor> backward(const Tensor& out, const std::vector<Tensor>& leaves) const;
  /// kwargs[key] with a default.
  template <typename T>
  T kw(const char* key, T fallback) const {
    return kwargs.contains(key) ? kwargs[key].get<T>() : fallback;
  }
};

/// c.kwargs[key] as an int64 / a double; throws nlohmann::json's error when the case lacks it.
inline int64_t ikw(const OracleCase& c, const char* key) { return c.kwargs.at(key).get<int64_t>(); }
inline double dkw(const OracleCase& c, const char* key) { return c.kwargs.at(key).get<double>(); }

/// $WICK_ORACLE_FILE if set, else tests/data/ops.safetensors.
std::string oracle_path();
/// Loads and validates every case of a file (throws wick::Error on a malformed file).
std::vector<OracleCase> load_oracle(const std::string& path);
/// The cases of oracle_path(), loaded once.
const std::vector<OracleCase>& oracle_cases();

}  // namespace wick::test
