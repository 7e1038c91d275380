// The pooling layers' templates (wick/nn/modules/pooling_nd.h) for D = 1, 2 and 3: MaxPool (with
// indices), AvgPool (with divisor_override), AdaptiveAvgPool and AdaptiveMaxPool (with indices),
// the layers around the pooling functions. Every rule is written once; where the dimensions
// differ in text or in what the constructor checks (PyTorch prints MaxPool1d's sizes as ints and
// AvgPool1d's as 1-tuples; the 2-d layers leave some checks to F's function), an overload on the
// size type or an `if constexpr` says so next to the rule (Note [N-d layer templates] in
// wick/nn/modules/conv_nd.h).
#include <fmt/format.h>

#include <optional>
#include <string>

#include "conv_axes.h"
#include "repr.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/pooling.h"
#include "wick/nn/modules/pooling1d.h"
#include "wick/nn/modules/pooling3d.h"

namespace wick::nn {

namespace {
using detail::axes;
using detail::every;

// A size as PyTorch prints an argument given as is: "3" for 1-d; for 2-d and 3-d "3" when the
// entries are equal (an int argument), "(3, 2)" otherwise.
std::string size_text(int64_t v) { return fmt::format("{}", v); }
std::string size_text(Int2 v) { return detail::py_int2(v); }
std::string size_text(Int3 v) { return detail::py_int3(v); }

// AvgPool's sizes in its print: PyTorch's AvgPool1d stores them as 1-tuples (_single), "(3,)".
std::string avg_size_text(int64_t v) { return fmt::format("({},)", v); }
std::string avg_size_text(Int2 v) { return size_text(v); }
std::string avg_size_text(Int3 v) { return size_text(v); }

// The layer's name in its messages: "MaxPool2d" for kind "MaxPool" and D = 2.
template <size_t D>
std::string layer_name(const char* kind) {
  static_assert(D >= 1 && D <= 3, "the pooling layers have D = 1, 2 or 3");
  return fmt::format("{}{}d", kind, D);
}

// F::max_pool{1,2,3}d and F::avg_pool{1,2,3}d read a stride of 0 as "none given", but the options
// already default it to kernel_size, so an explicit 0 is a mistake, which PyTorch and LibTorch
// refuse too. The kernel is checked first, as its size is the default stride. A negative stride is
// refused here for 1-d and 3-d; the 2-d layers leave it to F::max_pool2d / F::avg_pool2d, whose
// message names the function. A 1-d zero stride's message has no "got".
template <size_t D>
void check_kernel_and_stride(const std::string& module, conv_size_t<D> kernel_size, conv_size_t<D> stride) {
  const int dims = static_cast<int>(D);
  WICK_CHECK(every(axes(kernel_size), dims, [](int64_t v) { return v > 0; }),
             "{}: kernel_size should be greater than zero, got {}", module, size_text(kernel_size));
  const bool no_zero = every(axes(stride), dims, [](int64_t v) { return v != 0; });
  if constexpr (D == 1)
    WICK_CHECK(no_zero, "{}: stride should not be zero; leave it unset for stride = kernel_size", module);
  else
    WICK_CHECK(no_zero, "{}: stride should not be zero, got {}; leave it unset for stride = kernel_size", module,
               size_text(stride));
  if constexpr (D != 2)
    WICK_CHECK(every(axes(stride), dims, [](int64_t v) { return v > 0; }),
               "{}: stride should be greater than zero, got {}", module, size_text(stride));
}

// An adaptive layer's output_size, checked when it is built: each entry at least 1 (a 3-d size
// printed as a tuple); AdaptiveMaxPool2d's entries may be None; AdaptiveAvgPool2d's Int2 is left
// to F::adaptive_avg_pool2d.
void check_output_size(const std::string& module, int64_t s) {
  WICK_CHECK(s > 0, "{}: output_size should be greater than zero, got {}", module, s);
}
void check_output_size(const std::string& /*module*/, Int2 /*s*/) {}
void check_output_size(const std::string& module, Int3 s) {
  WICK_CHECK(s.d > 0 && s.h > 0 && s.w > 0, "{}: output_size should be greater than zero, got {}", module,
             detail::py_int3(s, true));
}
std::string py_size(std::optional<int64_t> v) { return v ? fmt::format("{}", *v) : std::string("None"); }
void check_output_size(const std::string& module, const OptionalInt2& s) {
  WICK_CHECK(s.h.value_or(1) > 0 && s.w.value_or(1) > 0,
             "{}: output_size should be greater than zero (or None to keep the input's size), got ({}, {})", module,
             py_size(s.h), py_size(s.w));
}

// An adaptive layer's output_size in its print. PyTorch prints the argument as given: "3" for an
// int, "(2, 3)" or "(None, 3)" for a tuple; wick prints "3" when the sizes are one number.
std::string output_size_text(int64_t s) { return size_text(s); }
std::string output_size_text(Int2 s) { return size_text(s); }
std::string output_size_text(Int3 s) { return size_text(s); }
std::string output_size_text(const OptionalInt2& s) {
  if (s.h && s.w && *s.h == *s.w) return fmt::format("{}", *s.h);
  return fmt::format("({}, {})", py_size(s.h), py_size(s.w));
}
}  // namespace

// ---- MaxPool ----

template <size_t D, class Derived>
MaxPoolImpl<D, Derived>::MaxPoolImpl(const MaxPoolOptions<D>& options) : options_(options) {
  check_kernel_and_stride<D>(layer_name<D>("MaxPool"), options.kernel_size(), options.stride());
}

template <size_t D, class Derived>
Tensor MaxPoolImpl<D, Derived>::forward(const Tensor& input) {
  const auto& o = options_;
  if constexpr (D == 1)
    return F::max_pool1d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
  else if constexpr (D == 2)
    return F::max_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
  else
    return F::max_pool3d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

template <size_t D, class Derived>
std::tuple<Tensor, Tensor> MaxPoolImpl<D, Derived>::forward_with_indices(const Tensor& input) {
  const auto& o = options_;
  if constexpr (D == 1)
    return F::max_pool1d_with_indices(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
  else if constexpr (D == 2)
    return F::max_pool2d_with_indices(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
  else
    return F::max_pool3d_with_indices(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

// PyTorch's _MaxPoolNd.extra_repr prints the arguments as given.
template <size_t D, class Derived>
std::string MaxPoolImpl<D, Derived>::extra_repr() const {
  const auto& o = options_;
  return fmt::format("kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={}", size_text(o.kernel_size()),
                     size_text(o.stride()), size_text(o.padding()), size_text(o.dilation()),
                     detail::py_bool(o.ceil_mode()));
}

// ---- AvgPool ----

template <size_t D, class Derived>
AvgPoolImpl<D, Derived>::AvgPoolImpl(const AvgPoolOptions<D>& options) : options_(options) {
  const std::string name = layer_name<D>("AvgPool");
  check_kernel_and_stride<D>(name, options.kernel_size(), options.stride());
  WICK_CHECK(options.divisor_override() != 0,
             "{}: divisor_override must not be zero; leave it unset to divide by each window's size", name);
}

template <size_t D, class Derived>
Tensor AvgPoolImpl<D, Derived>::forward(const Tensor& input) {
  const auto& o = options_;
  if constexpr (D == 1)
    return F::avg_pool1d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad(),
                         o.divisor_override());
  else if constexpr (D == 2)
    return F::avg_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad(),
                         o.divisor_override());
  else
    return F::avg_pool3d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad(),
                         o.divisor_override());
}

// PyTorch's AvgPoolNd prints kernel_size, stride and padding (AvgPool1d's as 1-tuples); ceil_mode
// and count_include_pad are not printed.
template <size_t D, class Derived>
std::string AvgPoolImpl<D, Derived>::extra_repr() const {
  const auto& o = options_;
  return fmt::format("kernel_size={}, stride={}, padding={}", avg_size_text(o.kernel_size()), avg_size_text(o.stride()),
                     avg_size_text(o.padding()));
}

// ---- AdaptiveAvgPool ----

template <size_t D, class S, class Derived>
AdaptiveAvgPoolImpl<D, S, Derived>::AdaptiveAvgPoolImpl(const AdaptiveAvgPoolOptions<S>& options) : options_(options) {
  check_output_size(layer_name<D>("AdaptiveAvgPool"), options.output_size());
}

template <size_t D, class S, class Derived>
Tensor AdaptiveAvgPoolImpl<D, S, Derived>::forward(const Tensor& input) {
  if constexpr (D == 1)
    return F::adaptive_avg_pool1d(input, options_.output_size());
  else if constexpr (D == 2)
    return F::adaptive_avg_pool2d(input, options_.output_size());
  else
    return F::adaptive_avg_pool3d(input, options_.output_size());
}

template <size_t D, class S, class Derived>
std::string AdaptiveAvgPoolImpl<D, S, Derived>::extra_repr() const {
  return fmt::format("output_size={}", output_size_text(options_.output_size()));
}

// ---- AdaptiveMaxPool ----

template <size_t D, class S, class Derived>
AdaptiveMaxPoolImpl<D, S, Derived>::AdaptiveMaxPoolImpl(const AdaptiveMaxPoolOptions<S>& options) : options_(options) {
  check_output_size(layer_name<D>("AdaptiveMaxPool"), options.output_size());
}

template <size_t D, class S, class Derived>
Tensor AdaptiveMaxPoolImpl<D, S, Derived>::forward(const Tensor& input) {
  if constexpr (D == 1)
    return F::adaptive_max_pool1d(input, options_.output_size());
  else if constexpr (D == 2)
    return F::adaptive_max_pool2d(input, options_.output_size());
  else
    return F::adaptive_max_pool3d(input, options_.output_size());
}

template <size_t D, class S, class Derived>
std::tuple<Tensor, Tensor> AdaptiveMaxPoolImpl<D, S, Derived>::forward_with_indices(const Tensor& input) {
  if constexpr (D == 1)
    return F::adaptive_max_pool1d_with_indices(input, options_.output_size());
  else if constexpr (D == 2)
    return F::adaptive_max_pool2d_with_indices(input, options_.output_size());
  else
    return F::adaptive_max_pool3d_with_indices(input, options_.output_size());
}

template <size_t D, class S, class Derived>
std::string AdaptiveMaxPoolImpl<D, S, Derived>::extra_repr() const {
  return fmt::format("output_size={}", output_size_text(options_.output_size()));
}

template class MaxPoolImpl<1, MaxPool1dImpl>;
template class MaxPoolImpl<2, MaxPool2dImpl>;
template class MaxPoolImpl<3, MaxPool3dImpl>;
template class AvgPoolImpl<1, AvgPool1dImpl>;
template class AvgPoolImpl<2, AvgPool2dImpl>;
template class AvgPoolImpl<3, AvgPool3dImpl>;
template class AdaptiveAvgPoolImpl<1, int64_t, AdaptiveAvgPool1dImpl>;
template class AdaptiveAvgPoolImpl<2, Int2, AdaptiveAvgPool2dImpl>;
template class AdaptiveAvgPoolImpl<3, Int3, AdaptiveAvgPool3dImpl>;
template class AdaptiveMaxPoolImpl<1, int64_t, AdaptiveMaxPool1dImpl>;
template class AdaptiveMaxPoolImpl<2, OptionalInt2, AdaptiveMaxPool2dImpl>;
template class AdaptiveMaxPoolImpl<3, Int3, AdaptiveMaxPool3dImpl>;

}  // namespace wick::nn
