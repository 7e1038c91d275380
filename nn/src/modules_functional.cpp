// Functional, ChannelShuffle, AlphaDropout and FeatureAlphaDropout: thin layers around a function
// (the alpha dropouts apply only in training mode).
#include <fmt/format.h>

#include "repr.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/alpha_dropout.h"
#include "wick/nn/modules/functional_module.h"

namespace wick::nn {

FunctionalImpl::FunctionalImpl(Function function) : function_(std::move(function)) {
  WICK_CHECK(static_cast<bool>(function_), "Functional: the function is empty; pass a callable Tensor(Tensor)");
}
Tensor FunctionalImpl::forward(const Tensor& input) { return function_(input); }

ChannelShuffleImpl::ChannelShuffleImpl(const ChannelShuffleOptions& options) : options_(options) {
  WICK_CHECK(options.groups() > 0, "ChannelShuffle: the number of groups must be positive, got groups = {}",
             options.groups());
}
Tensor ChannelShuffleImpl::forward(const Tensor& input) { return F::channel_shuffle(input, options_.groups()); }
std::string ChannelShuffleImpl::extra_repr() const { return fmt::format("groups={}", options_.groups()); }

namespace {
// Checked when built, as PyTorch's _DropoutNd.__init__.
void check_p(const char* module, const DropoutOptions& o) {
  WICK_CHECK(o.p() >= 0.0 && o.p() <= 1.0, "{}: probability p must be in [0, 1], got {}", module, o.p());
}
F::AlphaDropoutFuncOptions func_options(const DropoutOptions& o, bool training) {
  return F::AlphaDropoutFuncOptions().p(o.p()).training(training).inplace(o.inplace());
}
std::string repr(const DropoutOptions& o) {
  return fmt::format("p={}, inplace={}", detail::py_float(o.p()), detail::py_bool(o.inplace()));
}
}  // namespace

AlphaDropoutImpl::AlphaDropoutImpl(const AlphaDropoutOptions& options) : options_(options) {
  check_p("AlphaDropout", options);
}
Tensor AlphaDropoutImpl::forward(const Tensor& input) {
  return F::alpha_dropout(input, func_options(options_, is_training()));
}
std::string AlphaDropoutImpl::extra_repr() const { return repr(options_); }

FeatureAlphaDropoutImpl::FeatureAlphaDropoutImpl(const FeatureAlphaDropoutOptions& options) : options_(options) {
  check_p("FeatureAlphaDropout", options);
}
Tensor FeatureAlphaDropoutImpl::forward(const Tensor& input) {
  return F::feature_alpha_dropout(input, func_options(options_, is_training()));
}
std::string FeatureAlphaDropoutImpl::extra_repr() const { return repr(options_); }

}  // namespace wick::nn
