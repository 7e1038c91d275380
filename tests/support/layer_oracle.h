#pragma once
// The layer cases of the PyTorch oracle (generate.py's layer_cases, cell_cases and decoder_cases):
// a case's inputs are its data tensors and then PyTorch's parameters, named in kwargs["inputs"].
// Used by tests/nn/layers_oracle*_test.cpp.
#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/oracle.h"
#include "wick/autograd/grad.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/nn.h"

namespace wick::test::layer_oracle {

// 1e-13 absolute covers gradients that cancel to ~1e-16 (as the op oracle's).
inline constexpr double kRtol = 1e-9, kAtol = 1e-13;

using Inputs = std::map<std::string, Tensor>;
using Run = std::function<std::vector<Tensor>(nn::Module&, const Inputs&)>;

inline Tensor flat_cat(const std::vector<Tensor>& outs) {
  std::vector<Tensor> flat;
  for (const Tensor& t : outs)
    if (t.defined()) flat.push_back(t.reshape({-1}));
  return cat(flat, 0);
}

// Loads the case's parameters into `m` (checking the names against PyTorch's), runs it and
// compares the output and every gradient (data inputs and parameters).
inline void check_layer(const OracleCase& c, nn::Module& m, Device dev, const Run& run) {
  INFO(c.label() << " on " << dev.str());
  const auto names = c.kwargs.at("inputs").get<std::vector<std::string>>();
  REQUIRE(names.size() == c.inputs.size());
  std::vector<Tensor> leaves = c.leaves(dev);
  m.to(dev);
  m.train(true);  // dropout is 0 in every case
  const nn::OrderedDict<Tensor> params = m.named_parameters();
  REQUIRE(names.size() >= params.size());  // a case built for another configuration of the layer
  const size_t n_data = names.size() - params.size();
  std::vector<std::string> expected(names.begin() + static_cast<std::ptrdiff_t>(n_data), names.end());
  REQUIRE(params.keys() == expected);
  Inputs data;
  std::vector<Tensor> wrt(leaves.size());
  for (size_t j = 0; j < names.size(); ++j) {
    if (j < n_data) {
      data[names[j]] = leaves[j];
      wrt[j] = leaves[j];
    } else {
      Tensor p = params[names[j]];
      NoGradGuard no_grad;
      p.copy_(leaves[j]);
      wrt[j] = p;
    }
  }
  Tensor out = flat_cat(run(m, data));
  CHECK(out.device() == dev);
  CHECK_ALLCLOSE(out, c.out, kRtol, kAtol);
  std::vector<Tensor> diff;
  for (size_t j = 0; j < wrt.size(); ++j)
    if (c.differentiable[j]) diff.push_back(wrt[j]);
  auto grads = autograd::grad({out}, diff, {c.gout.to(dev)}, std::nullopt, false, /*allow_unused=*/true);
  size_t k = 0;
  for (size_t j = 0; j < wrt.size(); ++j) {
    if (!c.differentiable[j]) continue;
    INFO("gradient of " << names[j]);
    REQUIRE(grads[k].defined());
    CHECK_ALLCLOSE(grads[k], c.gin[j], kRtol, kAtol);
    ++k;
  }
}

/// in[name], or an undefined tensor when the case has no input of that name.
inline Tensor input_or_none(const Inputs& in, const char* name) { return in.count(name) ? in.at(name) : Tensor(); }

}  // namespace wick::test::layer_oracle
