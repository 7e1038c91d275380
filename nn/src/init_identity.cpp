// init::eye_ and init::dirac_: the initializers that make a layer pass its input through.
// Both zero the tensor and write their ones through a strided view of it, so they work on any
// dtype, device and layout without a host copy.
#include <algorithm>

#include "init_checks.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/native.h"
#include "wick/nn/init.h"

namespace wick::nn::init {

using detail::shape_str;

Tensor eye_(Tensor t) {
  detail::check_defined("eye_", t);
  WICK_CHECK(t.dim() == 2,
             "init.eye_: only 2-d tensors are supported (an identity matrix), got shape {}; for a conv weight "
             "[out, in, k...] use dirac_",
             shape_str(t));
  NoGradGuard no_grad;
  native::fill_(t, 0);
  const int64_t k = std::min(t.size(0), t.size(1));
  if (k > 0) native::fill_(native::as_strided(t, {k}, {t.stride(0) + t.stride(1)}, 0), 1);
  return t;
}

Tensor dirac_(Tensor t, int64_t groups) {
  detail::check_defined("dirac_", t);
  WICK_CHECK(t.dim() >= 3 && t.dim() <= 5,
             "init.dirac_: only 3-, 4- and 5-d tensors (conv weights [out, in, k...]) are supported, got shape {}; "
             "for a 2-d matrix use eye_",
             shape_str(t));
  WICK_CHECK(groups >= 1, "init.dirac_: groups must be at least 1, got {} (shape {})", groups, shape_str(t));
  WICK_CHECK(t.size(0) % groups == 0,
             "init.dirac_: the out channels (dim 0 of shape {}, {}) must be divisible by groups = {}; pass the "
             "groups of the convolution this weight belongs to",
             shape_str(t), t.size(0), groups);
  NoGradGuard no_grad;
  native::fill_(t, 0);
  if (t.numel() == 0) return t;
  const int64_t out_per_group = t.size(0) / groups;
  const int64_t n = std::min(out_per_group, t.size(1));
  // The ones of group g lie on a line through [g * out_per_group, 0, centre...] that steps one
  // out and one in channel at a time.
  int64_t centre = 0;
  for (int64_t d = 2; d < t.dim(); ++d) centre += (t.size(d) / 2) * t.stride(d);
  for (int64_t g = 0; g < groups && n > 0; ++g)
    native::fill_(native::as_strided(t, {n}, {t.stride(0) + t.stride(1)}, g * out_per_group * t.stride(0) + centre), 1);
  return t;
}

}  // namespace wick::nn::init
