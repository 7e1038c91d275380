// F::pad (constant mode): the output is filled with the value and the input copied into its
// interior through a view, so the gradient flows back through that view (Note [Views and in-place
// ops] in autograd/src/view_tracking.h). An output that holds nothing of the input is linked to it
// by its own node, with a zero gradient.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "wick/autograd/record.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/core/scalar_fit.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {
// `out` when nothing of the input is in it (a dim cropped to nothing, or an empty input): all
// `value`, but still the input's successor in the graph, with gradient zeros for the input, as
// PyTorch (the copy that links them elsewhere would copy nothing).
Tensor link_to_input(const Tensor& out, const Tensor& input) {
  if (autograd::needs_grad({&input})) {
    const DimVector in_shape(input.sizes());
    autograd::record_function(
        "ConstantPadBackward", {input}, {out},
        [in_shape](const autograd::variable_list& grads, const autograd::variable_list&) -> autograd::variable_list {
          return {zeros(in_shape, grads[0].options())};
        });
  }
  return out;
}
}  // namespace

Tensor pad(const Tensor& input, const std::vector<int64_t>& pad, double value) {
  WICK_CHECK(input.defined(), "pad: input is undefined");
  WICK_CHECK(pad.size() % 2 == 0 && pad.size() / 2 <= static_cast<size_t>(input.dim()),
             "pad: expected (before, after) pairs for at most {} dims (the input is [{}]), got {} values", input.dim(),
             fmt::join(input.sizes(), ", "), pad.size());
  // The value fills the output in the input's dtype: it must fit it (Note [Scalar fits dtype]).
  check_scalar_fits("pad", "value", value, input.dtype(), input.sizes());
  std::vector<int64_t> shape(input.sizes().begin(), input.sizes().end());
  const size_t pairs = pad.size() / 2;
  for (size_t i = 0; i < pairs; ++i) {
    const size_t d = shape.size() - 1 - i;
    int64_t n = 0;
    WICK_CHECK(!add_overflow(shape[d], pad[2 * i], &n) && !add_overflow(n, pad[2 * i + 1], &n),
               "pad: padding ({}, {}) of dim {} (size {}) overflows int64", pad[2 * i], pad[2 * i + 1], d, shape[d]);
    WICK_CHECK(n >= 0, "pad: padding ({}, {}) of dim {} (size {}) gives a negative size {}", pad[2 * i], pad[2 * i + 1],
               d, shape[d], n);
    shape[d] = n;
  }
  Tensor out = wick::full(shape, value, input.options());
  Tensor src = input, dst = out;
  bool kept = input.numel() > 0;
  for (size_t i = 0; kept && i < pairs; ++i) {
    const int64_t d = input.dim() - 1 - static_cast<int64_t>(i);
    const int64_t before = pad[2 * i], after = pad[2 * i + 1];
    const int64_t len = input.size(d) - std::max<int64_t>(-before, 0) - std::max<int64_t>(-after, 0);
    kept = len > 0;
    if (!kept) break;
    src = src.narrow(d, std::max<int64_t>(-before, 0), len);
    dst = dst.narrow(d, std::max<int64_t>(before, 0), len);
  }
  if (kept) {
    dst.copy_(src);
    return out;
  }
  return link_to_input(out, input);
}

}  // namespace wick::nn::functional
