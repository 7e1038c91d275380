// Dropout, Dropout1d, Dropout2d, Dropout3d: the layers around F::dropout and the channel
// dropouts, which apply only in training mode.
#include <fmt/format.h>

#include "repr.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/dropout.h"

namespace wick::nn {

namespace {
// Checked when built, as PyTorch's _DropoutNd.__init__ ("dropout probability has to be between
// 0 and 1"), so a bad p never waits for the first training forward.
void check_p(const char* module, const DropoutOptions& o) {
  WICK_CHECK(o.p() >= 0.0 && o.p() <= 1.0, "{}: probability p must be in [0, 1], got {}", module, o.p());
}

F::DropoutFuncOptions func_options(const DropoutOptions& o, bool training) {
  return F::DropoutFuncOptions().p(o.p()).training(training).inplace(o.inplace());
}

// PyTorch's _DropoutNd.extra_repr.
std::string repr(const DropoutOptions& o) {
  return fmt::format("p={}, inplace={}", detail::py_float(o.p()), detail::py_bool(o.inplace()));
}
}  // namespace

DropoutImpl::DropoutImpl(const DropoutOptions& options) : options_(options) { check_p("Dropout", options); }
Tensor DropoutImpl::forward(const Tensor& input) { return F::dropout(input, func_options(options_, is_training())); }
std::string DropoutImpl::extra_repr() const { return repr(options_); }

Dropout1dImpl::Dropout1dImpl(const Dropout1dOptions& options) : options_(options) { check_p("Dropout1d", options); }
Tensor Dropout1dImpl::forward(const Tensor& input) {
  return F::dropout1d(input, func_options(options_, is_training()));
}
std::string Dropout1dImpl::extra_repr() const { return repr(options_); }

Dropout2dImpl::Dropout2dImpl(const Dropout2dOptions& options) : options_(options) { check_p("Dropout2d", options); }
Tensor Dropout2dImpl::forward(const Tensor& input) {
  return F::dropout2d(input, func_options(options_, is_training()));
}
std::string Dropout2dImpl::extra_repr() const { return repr(options_); }

Dropout3dImpl::Dropout3dImpl(const Dropout3dOptions& options) : options_(options) { check_p("Dropout3d", options); }
Tensor Dropout3dImpl::forward(const Tensor& input) {
  return F::dropout3d(input, func_options(options_, is_training()));
}
std::string Dropout3dImpl::extra_repr() const { return repr(options_); }

}  // namespace wick::nn
