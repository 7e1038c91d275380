#pragma once
// wick::nn::utils gradient clipping: torch.nn.utils.clip_grad_norm_ and clip_grad_value_ with
// PyTorch 1.13's rules and LibTorch's C++ signatures (torch/nn/utils/clip_grad.h). Both change
// the gradients in place (the same tensors, their version counters moved as by any in-place op)
// under NoGradGuard, skip parameters whose grad() is undefined, and check every argument and
// gradient before changing any, so a refused call changes nothing. docs/training.md, "Gradient
// clipping and parameter vectors".
#include <initializer_list>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::nn::utils {

/// Scales the gradients of `parameters` so that their total norm, taken over all of them as if
/// concatenated into one vector, is at most `max_norm`; returns that total norm as it was before
/// scaling (0 when no parameter has a gradient). As PyTorch 1.13:
///   total = max over the gradients of max |g|                    (norm_type inf)
///         = norm(stack([norm(g, norm_type) for each g]), norm_type)  (any other order: 2, 1,
///           3, 0 which counts nonzeros, negative or -inf, with torch.norm's meaning)
/// computed with wick's tensor ops on the first gradient's device (each gradient's norm moved
/// there), in the promoted dtype of the gradients (float32 unless one is float64); then every
/// gradient is multiplied by min(max_norm / (total + 1e-6), 1), computed in that dtype on that
/// device. The multiply happens always, as in 1.13 (a coefficient of 1 leaves the values as they
/// were), so a NaN or infinite total makes the gradients NaN (or 0 and NaN) unless
/// `error_if_nonfinite`, which raises a ValueError instead and changes nothing.
/// ValueError for max_norm NaN or negative (PyTorch scales by NaN or flips the gradients' sign),
/// norm_type NaN, an undefined parameter, or a gradient whose elements share memory (expand);
/// TypeError for a gradient that is not float32 or float64. Differences from PyTorch: an empty
/// gradient counts as norm 0 for every order (PyTorch 1.13 raises for inf, taking max() of no
/// elements, and gives 0 for the others); the coefficient is max_norm / (total + 1e-6), a division
/// as in LibTorch, where Python computes (total + 1e-6).reciprocal() * max_norm (which can differ
/// in the last bit).
double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
/// The same for a braced list of tensors: clip_grad_norm_({w, b}, 1.0).
double clip_grad_norm_(std::initializer_list<Tensor> parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
/// The same for one tensor.
double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

/// Clamps every element of every defined gradient of `parameters` into [-clip_value, clip_value]
/// in place (NaN stays NaN), as PyTorch 1.13. ValueError for clip_value NaN or negative (PyTorch
/// clamps with min > max, which sets every gradient element to -|clip_value|, or to NaN), an
/// undefined parameter, or a gradient whose elements share memory; TypeError for a gradient that
/// is not float32 or float64. PyTorch clamps through `.grad.data`, which leaves the gradient's
/// version counter alone; wick's clamp moves it, as clip_grad_norm_'s multiply does in both.
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);
/// The same for a braced list of tensors.
void clip_grad_value_(std::initializer_list<Tensor> parameters, double clip_value);
/// The same for one tensor.
void clip_grad_value_(const Tensor& parameter, double clip_value);

}  // namespace wick::nn::utils
