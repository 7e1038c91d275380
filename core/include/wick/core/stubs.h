#pragma once
// The fused kernels reached through DispatchStub (Note [Dispatch stubs]): each declared once
// here, defined in core/src/stubs.cpp, filled by the backends that have the kernel.
#include <cstdint>

#include "wick/core/backend.h"
#include "wick/core/dispatch_stub.h"
#include "wick/core/dtype.h"
#include "wick/core/optim_functors.h"

namespace wick::stubs {

/// out = log_softmax(in) along the last dim of contiguous rows x cols arrays of a floating
/// dtype (cols > 0; in may be out), math::log_softmax_row per row (Note [Fused log_softmax]).
using LogSoftmaxRowsFn = void (*)(DType dtype, int64_t rows, int64_t cols, const void* in, void* out);
extern DispatchStub<LogSoftmaxRowsFn> log_softmax_rows;

/// grad_in = grad_out - exp(out) * sum(grad_out) along the last dim of contiguous rows x cols
/// arrays (log_softmax's backward), math::log_softmax_backward_row per row.
using LogSoftmaxBackwardRowsFn = void (*)(DType dtype, int64_t rows, int64_t cols, const void* grad_out,
                                          const void* out, void* grad_in);
extern DispatchStub<LogSoftmaxBackwardRowsFn> log_softmax_backward_rows;

/// out = softmax(in) along the last dim of contiguous rows x cols arrays of a floating dtype
/// (cols > 0; in may be out), math::softmax_row per row.
using SoftmaxRowsFn = LogSoftmaxRowsFn;
extern DispatchStub<SoftmaxRowsFn> softmax_rows;

/// grad_in = out * (grad_out - sum(grad_out * out)) along the last dim of contiguous rows x cols
/// arrays (softmax's backward), math::softmax_backward_row per row.
using SoftmaxBackwardRowsFn = LogSoftmaxBackwardRowsFn;
extern DispatchStub<SoftmaxBackwardRowsFn> softmax_backward_rows;

/// y = layer_norm(x) over the last `cols` elements of contiguous rows x cols arrays of a floating
/// dtype (cols > 0), with optional affine w, b (null: none), writing each row's mean and rstd
/// (Note [Fused layer_norm], math::layer_norm_row per row).
using LayerNormRowsFn = void (*)(DType dtype, int64_t rows, int64_t cols, const void* x, const void* w, const void* b,
                                 double eps, void* y, void* mean, void* rstd);
extern DispatchStub<LayerNormRowsFn> layer_norm_rows;

/// dx of layer_norm for contiguous rows x cols arrays from g, x, the saved mean and rstd and an
/// optional w (math::layer_norm_backward_row per row).
using LayerNormBackwardRowsFn = void (*)(DType dtype, int64_t rows, int64_t cols, const void* g, const void* x,
                                         const void* w, const void* mean, const void* rstd, void* dx);
extern DispatchStub<LayerNormBackwardRowsFn> layer_norm_backward_rows;

/// One parameter of a fused SGD step: n contiguous elements of p, its gradient g, its momentum
/// buffer (null without momentum), and the update's settings (math::SgdStep per element).
struct SgdStepTensor {
  int64_t n = 0;
  void* p = nullptr;
  const void* g = nullptr;
  void* momentum_buffer = nullptr;
  math::SgdStepArgs args;
};
/// SGD updates, in place, of `count` parameters of one dtype on one device type, in one pass
/// (Note [Fused optimizer steps]): the CPU splits their elements as one range across the intra-op
/// threads. No written array may overlap another parameter's arrays.
using SgdStepFn = void (*)(DType dtype, const SgdStepTensor* tensors, int64_t count);
extern DispatchStub<SgdStepFn> sgd_step;

/// One parameter of a fused Adam/AdamW step: n contiguous elements of p, g and the state
/// (max_exp_avg_sq null without amsgrad), and the update's settings (math::AdamStep per element).
struct AdamStepTensor {
  int64_t n = 0;
  void* p = nullptr;
  const void* g = nullptr;
  void* exp_avg = nullptr;
  void* exp_avg_sq = nullptr;
  void* max_exp_avg_sq = nullptr;
  math::AdamStepArgs args;
};
/// Adam/AdamW updates, in place, of `count` parameters in one pass, as sgd_step.
using AdamStepFn = void (*)(DType dtype, const AdamStepTensor* tensors, int64_t count);
extern DispatchStub<AdamStepFn> adam_step;

/// out = op(a, b) for a tensor a and a scalar b given as a double (converted to a's dtype as
/// fill converts it), in one launch: the same functor as the tensor-tensor op (Note [Scalar
/// operands]). a's dtype is the op's common dtype, out has a's sizes (bool for comparisons).
using BinaryScalarFn = void (*)(BinaryOp op, const KernelTensor& out, const KernelTensor& a, double b);
extern DispatchStub<BinaryScalarFn> binary_scalar;

/// im2col of `images` contiguous images (each g.channels x g.height x g.width, one after the
/// other) into their columns ([images, C*kh*kw, out_h*out_w], contiguous) in one launch (Note
/// [Batched im2col]); a backend without it takes Backend::im2col once per image.
using Im2ColImagesFn = void (*)(const Im2ColArgs& g, int64_t images, const void* image, void* columns);
extern DispatchStub<Im2ColImagesFn> im2col_images;

/// image[n] += col2im(columns[n]) for `images` images laid out as in im2col_images, in one launch.
using Col2ImImagesFn = void (*)(const Im2ColArgs& g, int64_t images, const void* columns, void* image);
extern DispatchStub<Col2ImImagesFn> col2im_images;

}  // namespace wick::stubs
