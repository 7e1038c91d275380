// Fold, Unfold, LPPool1d/2d, MaxUnpool1d/2d/3d and LocalResponseNorm: the layers around
// F::fold, F::unfold, F::lp_pool1d/2d, F::max_unpool1d/2d/3d and F::local_response_norm. Each
// constructor refuses what every forward would refuse, so a bad layer fails where it is built.
#include <fmt/format.h>

#include <cmath>

#include "repr.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/fold.h"
#include "wick/nn/modules/pooling_lp_unpool.h"

namespace wick::nn {

namespace {
// At least `min` on both axes.
void check_at_least(const char* module, const char* what, Int2 v, int64_t min) {
  WICK_CHECK(v.h >= min && v.w >= min, "{}: {} should be at least {}, got ({}, {})", module, what, min, v.h, v.w);
}
void check_at_least(const char* module, const char* what, Int3 v, int64_t min) {
  WICK_CHECK(v.d >= min && v.h >= min && v.w >= min, "{}: {} should be at least {}, got ({}, {}, {})", module, what,
             min, v.d, v.h, v.w);
}
void check_at_least(const char* module, const char* what, int64_t v, int64_t min) {
  WICK_CHECK(v >= min, "{}: {} should be at least {}, got {}", module, what, min, v);
}

void check_norm_type(const char* module, double norm_type) {
  WICK_CHECK(std::isfinite(norm_type) && norm_type != 0.0, "{}: norm_type must be finite and nonzero, got {}", module,
             norm_type);
}

// The unpooling layers' checks: kernel_size and stride at least 1, padding at least 0.
template <class Options>
void check_unpool(const char* module, const Options& o) {
  check_at_least(module, "kernel_size", o.kernel_size(), 1);
  check_at_least(module, "stride", o.stride(), 1);
  check_at_least(module, "padding", o.padding(), 0);
}

// forward_value's arguments: input, indices and, optionally, output_size (None or a list of ints).
template <class Impl>
Value unpool_forward_value(Impl& m, const std::vector<Value>& args) {
  WICK_CHECK(args.size() == 2 || args.size() == 3,
             "{}.forward_value: forward takes input, indices and optionally output_size, but {} arguments were given",
             m.name(), args.size());
  if (args.size() == 2 || args[2].is_none()) return Value(m.forward(args[0].tensor(), args[1].tensor()));
  WICK_CHECK_TYPE(args[2].is_sequence(), "{}.forward_value: output_size must be None or a list of ints, got {}",
                  m.name(), args[2].describe());
  std::vector<int64_t> sizes;
  for (const Value& v : args[2].items()) sizes.push_back(v.to_int());
  return Value(m.forward(args[0].tensor(), args[1].tensor(), sizes));
}
}  // namespace

FoldImpl::FoldImpl(const FoldOptions& options) : options_(options) {
  check_at_least("Fold", "output_size", options.output_size(), 1);
  check_at_least("Fold", "kernel_size", options.kernel_size(), 1);
  check_at_least("Fold", "dilation", options.dilation(), 1);
  check_at_least("Fold", "padding", options.padding(), 0);
  check_at_least("Fold", "stride", options.stride(), 1);
}

Tensor FoldImpl::forward(const Tensor& input) {
  const auto& o = options_;
  return F::fold(input, o.output_size(), o.kernel_size(), o.dilation(), o.padding(), o.stride());
}

// PyTorch's Fold prints its arguments as given: an int where both sizes are equal.
std::string FoldImpl::extra_repr() const {
  const auto& o = options_;
  return fmt::format("output_size={}, kernel_size={}, dilation={}, padding={}, stride={}",
                     detail::py_int2(o.output_size()), detail::py_int2(o.kernel_size()), detail::py_int2(o.dilation()),
                     detail::py_int2(o.padding()), detail::py_int2(o.stride()));
}

UnfoldImpl::UnfoldImpl(const UnfoldOptions& options) : options_(options) {
  check_at_least("Unfold", "kernel_size", options.kernel_size(), 1);
  check_at_least("Unfold", "dilation", options.dilation(), 1);
  check_at_least("Unfold", "padding", options.padding(), 0);
  check_at_least("Unfold", "stride", options.stride(), 1);
}

Tensor UnfoldImpl::forward(const Tensor& input) {
  const auto& o = options_;
  return F::unfold(input, o.kernel_size(), o.dilation(), o.padding(), o.stride());
}

std::string UnfoldImpl::extra_repr() const {
  const auto& o = options_;
  return fmt::format("kernel_size={}, dilation={}, padding={}, stride={}", detail::py_int2(o.kernel_size()),
                     detail::py_int2(o.dilation()), detail::py_int2(o.padding()), detail::py_int2(o.stride()));
}

LPPool1dImpl::LPPool1dImpl(const LPPool1dOptions& options) : options_(options) {
  check_norm_type("LPPool1d", options.norm_type());
  check_at_least("LPPool1d", "kernel_size", options.kernel_size(), 1);
  check_at_least("LPPool1d", "stride", options.stride(), 1);
}

Tensor LPPool1dImpl::forward(const Tensor& input) {
  const auto& o = options_;
  return F::lp_pool1d(input, o.norm_type(), o.kernel_size(), o.stride(), o.ceil_mode());
}

// norm_type as "{}" prints 2.0 as "2" and 1.5 as "1.5", as PyTorch prints LPPool1d(2, 3) and
// LPPool1d(1.5, 3).
std::string LPPool1dImpl::extra_repr() const {
  const auto& o = options_;
  return fmt::format("norm_type={}, kernel_size={}, stride={}, ceil_mode={}", o.norm_type(), o.kernel_size(),
                     o.stride(), detail::py_bool(o.ceil_mode()));
}

LPPool2dImpl::LPPool2dImpl(const LPPool2dOptions& options) : options_(options) {
  check_norm_type("LPPool2d", options.norm_type());
  check_at_least("LPPool2d", "kernel_size", options.kernel_size(), 1);
  check_at_least("LPPool2d", "stride", options.stride(), 1);
}

Tensor LPPool2dImpl::forward(const Tensor& input) {
  const auto& o = options_;
  return F::lp_pool2d(input, o.norm_type(), o.kernel_size(), o.stride(), o.ceil_mode());
}

std::string LPPool2dImpl::extra_repr() const {
  const auto& o = options_;
  return fmt::format("norm_type={}, kernel_size={}, stride={}, ceil_mode={}", o.norm_type(),
                     detail::py_int2(o.kernel_size()), detail::py_int2(o.stride()), detail::py_bool(o.ceil_mode()));
}

MaxUnpool1dImpl::MaxUnpool1dImpl(const MaxUnpool1dOptions& options) : options_(options) {
  check_unpool("MaxUnpool1d", options);
}

Tensor MaxUnpool1dImpl::forward(const Tensor& input, const Tensor& indices,
                                const std::optional<std::vector<int64_t>>& output_size) {
  const auto& o = options_;
  return F::max_unpool1d(input, indices, o.kernel_size(), o.stride(), o.padding(), output_size);
}

Value MaxUnpool1dImpl::forward_value(const std::vector<Value>& args) { return unpool_forward_value(*this, args); }

// PyTorch's MaxUnpoolNd store their sizes as tuples (_single, _pair, _triple) and print them so.
std::string MaxUnpool1dImpl::extra_repr() const {
  const auto& o = options_;
  return fmt::format("kernel_size=({},), stride=({},), padding=({},)", o.kernel_size(), o.stride(), o.padding());
}

MaxUnpool2dImpl::MaxUnpool2dImpl(const MaxUnpool2dOptions& options) : options_(options) {
  check_unpool("MaxUnpool2d", options);
}

Tensor MaxUnpool2dImpl::forward(const Tensor& input, const Tensor& indices,
                                const std::optional<std::vector<int64_t>>& output_size) {
  const auto& o = options_;
  return F::max_unpool2d(input, indices, o.kernel_size(), o.stride(), o.padding(), output_size);
}

Value MaxUnpool2dImpl::forward_value(const std::vector<Value>& args) { return unpool_forward_value(*this, args); }

std::string MaxUnpool2dImpl::extra_repr() const {
  const auto& o = options_;
  return fmt::format("kernel_size={}, stride={}, padding={}", detail::py_int2(o.kernel_size(), true),
                     detail::py_int2(o.stride(), true), detail::py_int2(o.padding(), true));
}

MaxUnpool3dImpl::MaxUnpool3dImpl(const MaxUnpool3dOptions& options) : options_(options) {
  check_unpool("MaxUnpool3d", options);
}

Tensor MaxUnpool3dImpl::forward(const Tensor& input, const Tensor& indices,
                                const std::optional<std::vector<int64_t>>& output_size) {
  const auto& o = options_;
  return F::max_unpool3d(input, indices, o.kernel_size(), o.stride(), o.padding(), output_size);
}

Value MaxUnpool3dImpl::forward_value(const std::vector<Value>& args) { return unpool_forward_value(*this, args); }

std::string MaxUnpool3dImpl::extra_repr() const {
  const auto& o = options_;
  return fmt::format("kernel_size={}, stride={}, padding={}", detail::py_int3(o.kernel_size(), true),
                     detail::py_int3(o.stride(), true), detail::py_int3(o.padding(), true));
}

LocalResponseNormImpl::LocalResponseNormImpl(const LocalResponseNormOptions& options) : options_(options) {
  check_at_least("LocalResponseNorm", "size", options.size(), 1);
}

Tensor LocalResponseNormImpl::forward(const Tensor& input) {
  const auto& o = options_;
  return F::local_response_norm(input, o.size(), o.alpha(), o.beta(), o.k());
}

std::string LocalResponseNormImpl::extra_repr() const {
  const auto& o = options_;
  return fmt::format("{}, alpha={}, beta={}, k={}", o.size(), detail::py_float(o.alpha()), detail::py_float(o.beta()),
                     detail::py_float(o.k()));
}

}  // namespace wick::nn
