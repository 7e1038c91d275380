// nn::utils::parameters_to_vector and vector_to_parameters (PyTorch 1.13's
// torch/nn/utils/convert_parameters.py).
#include "wick/nn/utils/convert_parameters.h"

#include <fmt/format.h>

#include "utils_checks.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"

namespace wick::nn::utils {

namespace {

using detail::has_stride_zero_overlap;
using detail::layout_str;
using detail::shape_str;

// PyTorch's _check_param_device: every parameter defined and on the first one's device.
void check_one_device(const char* op, const std::vector<Tensor>& parameters) {
  for (size_t i = 0; i < parameters.size(); ++i) {
    const Tensor& p = parameters[i];
    WICK_CHECK(p.defined(), "{}: parameter {} of {} is undefined; pass defined tensors (module->parameters())", op, i,
               parameters.size());
    WICK_CHECK(p.device() == parameters[0].device(),
               "{}: parameter 0 is on {} but parameter {} (shape {}) is on {}; parameters on several devices are "
               "not supported, move them to one first (module->to(device))",
               op, parameters[0].device(), i, shape_str(p), p.device());
  }
}

}  // namespace

Tensor parameters_to_vector(const std::vector<Tensor>& parameters) {
  WICK_CHECK(!parameters.empty(),
             "parameters_to_vector: got no parameters, so there is nothing to concatenate (PyTorch: cat of an "
             "empty list)");
  check_one_device("parameters_to_vector", parameters);
  std::vector<Tensor> flat;
  flat.reserve(parameters.size());
  for (size_t i = 0; i < parameters.size(); ++i) {
    try {
      flat.push_back(parameters[i].view({-1}));
    } catch (const Error& e) {
      rethrow_with_context(e, fmt::format("parameters_to_vector: parameter {}: ", i));
    }
  }
  return wick::cat(flat);
}

void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters) {
  WICK_CHECK(vec.defined(), "vector_to_parameters: vec is undefined; pass the 1-d tensor parameters_to_vector gives");
  WICK_CHECK(vec.dim() == 1,
             "vector_to_parameters: vec must be 1-d, as parameters_to_vector gives, but it has shape {}; flatten it "
             "with vec.reshape({{-1}}) if its elements are in the parameters' order",
             shape_str(vec));
  check_one_device("vector_to_parameters", parameters);
  int64_t total = 0;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const Tensor& p = parameters[i];
    WICK_CHECK(!has_stride_zero_overlap(p),
               "vector_to_parameters: parameter {} has shape {}: its elements share memory, so it cannot be "
               "written in place",
               i, layout_str(p));
    total += p.numel();
  }
  if (!parameters.empty())
    WICK_CHECK(vec.device() == parameters[0].device(),
               "vector_to_parameters: vec (shape {}) is on {} but the parameters are on {}; move it there first "
               "(vec.to(device))",
               shape_str(vec), vec.device(), parameters[0].device());
  WICK_CHECK(vec.numel() == total,
             "vector_to_parameters: vec has shape {} but the {} parameters have {} elements in all; vec must hold "
             "exactly one value per parameter element (parameters_to_vector of parameters of the same shapes)",
             shape_str(vec), parameters.size(), total);

  NoGradGuard no_grad;
  int64_t offset = 0;
  for (Tensor p : parameters) {
    const int64_t n = p.numel();
    p.copy_(vec.narrow(0, offset, n).reshape(p.sizes()));
    offset += n;
  }
}

}  // namespace wick::nn::utils
