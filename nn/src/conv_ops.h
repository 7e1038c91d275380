#pragma once
// Internal: the differentiable im2col-based building blocks of conv2d and 2-d pooling.
//
// Note [conv2d as three closed functions]
// y = conv(x, w) is bilinear, so its gradients are bilinear functions of the same geometry:
//   gx = input_grad(gy, w)   (a transposed convolution: W^T @ gy per image, then col2im; it is
//                             F::conv_transpose2d, Note [Transposed convolution] in
//                             functional_conv_transpose.cpp)
//   gw = weight_grad(x, gy)  (sum over images of gy @ im2col(x)^T)
// and each of the three is the others' backward:
//   input_grad:  d/d gy = conv(gg, w),        d/d w = weight_grad(gg, gy)
//   weight_grad: d/d x  = input_grad(gy, gg), d/d gy = conv(x, gg)
// So backward is written on differentiable functions and double backward works, while every
// forward is one im2col/col2im pass per image plus GEMMs, a chunk of images at a time (Note
// [conv2d in image chunks] in conv_ops.cpp). Likewise unfold2d
// (im2col) and fold2d (col2im) are each other's backward; pooling is built on them.
#include "wick/core/backend.h"
#include "wick/core/tensor.h"

namespace wick::nn::detail {

/// Geometry of one 2-d window operation on [N, C, H, W] inputs (O: output channels of a conv).
struct ConvGeom {
  int64_t N = 0, C = 0, H = 0, W = 0, O = 0;
  int64_t G = 1;  ///< groups: input channel block g feeds only output channel block g
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  int64_t oh = 0, ow = 0;
  int64_t kk() const { return kh * kw; }
  int64_t L() const { return oh * ow; }
  int64_t Cg() const { return C / G; }  ///< input channels per group
  int64_t Og() const { return O / G; }  ///< output channels per group
  /// True when im2col is the identity (1x1 kernel, stride 1, no padding, and every image position
  /// an output position). The last condition holds for every conv2d; a transposed convolution's
  /// geometry may have an image larger than its windows cover (output_padding at or past the
  /// stride, Note [Transposed convolution] in functional_conv_transpose.cpp).
  bool pointwise() const {
    return kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0 && oh == H && ow == W;
  }
};

/// The backend's description of g's windows over `channels` planes of g.H x g.W (g.C for a
/// convolution's im2col, g.N * g.C for pooling).
Im2ColArgs window_args(const ConvGeom& g, DType dtype, int64_t channels);

/// conv(x, w) + b (b may be undefined); x [N, C, H, W], w [O, C / G, kh, kw] -> [N, O, oh, ow].
Tensor conv2d_op(const Tensor& x, const Tensor& w, const Tensor& b, const ConvGeom& g);
/// The gradient of conv's input: gy [N, O, oh, ow], w -> [N, C, H, W].
Tensor conv2d_input_grad(const Tensor& gy, const Tensor& w, const ConvGeom& g);
/// The gradient of conv's weight: x, gy -> [O, C / G, kh, kw]. `cols` (optional) is im2col(x) as
/// saved by the forward, used instead of recomputing it.
Tensor conv2d_weight_grad(const Tensor& x, const Tensor& gy, const ConvGeom& g, const Tensor& cols = {});

/// im2col of every image: x [N, C, H, W] -> [N, C*kh*kw, oh*ow]; positions outside the image
/// read `pad_value` (windows may extend past the padding, as ceil_mode pooling needs).
Tensor unfold2d(const Tensor& x, const ConvGeom& g, double pad_value);
/// col2im, summing overlaps: cols [N, C*kh*kw, oh*ow] -> [N, C, H, W]; padding positions drop.
Tensor fold2d(const Tensor& cols, const ConvGeom& g);

}  // namespace wick::nn::detail
