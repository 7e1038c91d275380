// InstanceNorm1d/2d/3d's forward (their state is NormBase's, modules_norm.cpp).
#include <fmt/format.h>

#include "shape_text.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/instancenorm.h"

namespace wick::nn {

template <class Derived>
void InstanceNormBase<Derived>::check_input(const Tensor& input) const {
  const int64_t d = unbatched_dim();
  const char* layout = d == 2   ? "[C, L] or [N, C, L]"
                       : d == 3 ? "[C, H, W] or [N, C, H, W]"
                                : "[C, D, H, W] or [N, C, D, H, W]";
  WICK_CHECK(input.defined() && (input.dim() == d || input.dim() == d + 1),
             "{}: expected {}D or {}D input (got {}D input); it takes {} ({}-d or {}-d), got {}", this->name(), d,
             d + 1, input.defined() ? input.dim() : 0, layout, d, d + 1,
             input.defined() ? fmt::format("input {}", detail::shape_str(input)) : std::string("an undefined tensor"));
}

template <class Derived>
Tensor InstanceNormBase<Derived>::forward(const Tensor& input) {
  this->check_input(input);
  const InstanceNormOptions& o = this->options();
  const bool unbatched = input.dim() == unbatched_dim();
  const Tensor x = unbatched ? unsqueeze(input, 0) : input;
  // With a weight or running statistics the channels must be num_features; F::instance_norm
  // would refuse the mismatch too, but in terms of the parameters' shapes rather than the layer's.
  WICK_CHECK(!(o.affine() || o.track_running_stats()) || x.size(1) == o.num_features(),
             "{}: expected input's size at dim={} to match num_features ({}), but got {} (input {})", this->name(),
             unbatched ? 0 : 1, o.num_features(), x.size(1), detail::shape_str(input));
  // As PyTorch 1.13: instance statistics in training or without running statistics, the running
  // ones in eval mode when tracked; num_batches_tracked is never counted.
  const bool use_input_stats = this->is_training() || !o.track_running_stats();
  Tensor out = F::instance_norm(x, this->running_mean(), this->running_var(), this->weight(), this->bias(),
                                use_input_stats, o.momentum(), o.eps());
  return unbatched ? squeeze(out, 0) : out;
}

template class InstanceNormBase<InstanceNorm1dImpl>;
template class InstanceNormBase<InstanceNorm2dImpl>;
template class InstanceNormBase<InstanceNorm3dImpl>;

}  // namespace wick::nn
