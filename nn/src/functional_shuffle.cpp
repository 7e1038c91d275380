// F::channel_shuffle and F::one_hot: channel_shuffle reads the channels as a [groups, C / groups]
// grid and transposes it (reshape, transpose, reshape: differentiable, any dtype); one_hot is
// wick::one_hot under LibTorch's F:: name.
#include "wick/nn/functional_shuffle.h"

#include <fmt/format.h>

#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/core/error.h"

namespace wick::nn::functional {

Tensor channel_shuffle(const Tensor& input, int64_t groups) {
  WICK_CHECK(input.defined(), "channel_shuffle: input is undefined");
  WICK_CHECK(input.dim() > 2,
             "channel_shuffle: expects an input of at least 3 dims [N, C, *], got shape {}; unsqueeze a batch dim",
             detail::shape_str(input));
  WICK_CHECK(groups > 0, "channel_shuffle: the number of groups must be positive, got groups = {}", groups);
  const int64_t c = input.size(1);
  WICK_CHECK(c % groups == 0,
             "channel_shuffle: the {} channels of input {} are not divisible by groups = {}; pick a divisor of {}", c,
             detail::shape_str(input), groups, c);
  // [N, C, *] -> [N, groups, C / groups, *] -> swap the two -> [N, C, *].
  DimVector grid(input.sizes());
  grid[1] = c / groups;
  grid.insert(1, groups);
  return input.reshape(grid).transpose(1, 2).reshape(input.sizes());
}

Tensor one_hot(const Tensor& tensor, int64_t num_classes) { return wick::one_hot(tensor, num_classes); }

}  // namespace wick::nn::functional
