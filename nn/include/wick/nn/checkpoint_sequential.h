#pragma once
// checkpoint_sequential (PyTorch 1.13's torch.utils.checkpoint.checkpoint_sequential): a
// Sequential run in segments, each but the last under an activation checkpoint
// (wick/autograd/activation_checkpoint.h), so only the segments' boundaries are kept for backward.
#include <cstdint>

#include "wick/autograd/activation_checkpoint.h"
#include "wick/core/tensor.h"
#include "wick/nn/modules/container.h"

namespace wick::nn {

/// Runs `seq` on `input` in `segments` consecutive parts of size(seq) / segments children each
/// (the last part takes the rest): every part but the last runs under
/// autograd::checkpoint, the last one normally, as PyTorch's. Returns the output of the last
/// child. Each child is called through its tensor forward. ValueError when segments < 1 or
/// segments > the number of children (PyTorch leaves those unchecked); the errors of
/// autograd::checkpoint otherwise (an input that does not require grad while grad mode is on).
Tensor checkpoint_sequential(const Sequential& seq, int64_t segments, const Tensor& input,
                             bool preserve_rng_state = true);

/// checkpoint_sequential with checkpoint's options: `{.use_reentrant = false}` checkpoints each
/// segment with saved-tensor hooks (Note [Non-reentrant checkpoint]), which takes an input that
/// does not require grad.
Tensor checkpoint_sequential(const Sequential& seq, int64_t segments, const Tensor& input,
                             const autograd::CheckpointOptions& options);

}  // namespace wick::nn
