#pragma once
// wick::nn::functional (alias wick::nn::F): the stateless, differentiable layer functions,
// with torch.nn.functional's names, argument order and semantics.
//
// Every function here is differentiable in each floating-point tensor argument, and twice
// differentiable (their backward passes are written on differentiable ops). Most are
// compositions of the public ops in wick/autograd/functions.h; conv2d and the 2-d pooling
// functions use dedicated nodes built on the backend's im2col/col2im and GEMM
// (functional_conv.cpp, functional_pool.cpp).
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "wick/autograd/functions.h"
#include "wick/nn/arg.h"

namespace wick::nn {

/// A pair of ints for 2-d geometry (kernel, stride, padding, dilation); `3` means {3, 3}.
struct Int2 {
  int64_t h = 0, w = 0;
  Int2() = default;
  Int2(int64_t v) : h(v), w(v) {}  // NOLINT
  Int2(int64_t h_, int64_t w_) : h(h_), w(w_) {}
  friend bool operator==(Int2 a, Int2 b) { return a.h == b.h && a.w == b.w; }
};

/// A 2-d output size whose entries may be left out (std::nullopt: that dim keeps the input's
/// size), as LibTorch's ExpandingArrayWithOptionalElem<2> and PyTorch's `(None, 3)`: `3` means
/// {3, 3}, `{std::nullopt, 3}` keeps the height and pools the width to 3.
struct OptionalInt2 {
  std::optional<int64_t> h, w;
  OptionalInt2(int64_t v) : h(v), w(v) {}   // NOLINT
  OptionalInt2(Int2 v) : h(v.h), w(v.w) {}  // NOLINT
  OptionalInt2(std::optional<int64_t> h_, std::optional<int64_t> w_) : h(h_), w(w_) {}
  friend bool operator==(const OptionalInt2& a, const OptionalInt2& b) { return a.h == b.h && a.w == b.w; }
};

/// conv2d's named paddings, as torch::kSame / torch::kValid. Same pads so that the output has the
/// input's spatial size (stride 1 only); when the total padding d * (k - 1) is odd, the extra row
/// or column goes at the bottom or right, as in PyTorch. Valid is no padding.
enum class PaddingMode { Same, Valid };
inline constexpr PaddingMode kSame = PaddingMode::Same;
inline constexpr PaddingMode kValid = PaddingMode::Valid;

/// How F::pad fills the border, and Conv2d's padding_mode (LibTorch's torch::kConstant, kZeros,
/// kReflect, kReplicate, kCircular). Reflect mirrors the input about its edge without repeating
/// the edge ([1, 2, 3] padded by 2 on the left: 3, 2, 1, 2, 3); replicate repeats the edge
/// (1, 1, 1, 2, 3); circular wraps around (2, 3, 1, 2, 3). Constant is F::pad's fill value and
/// Zeros Conv2d's zero padding: F::pad refuses Zeros and Conv2d refuses Constant, as PyTorch's
/// strings "zeros" and "constant" are each refused by the other (one enum rather than LibTorch's
/// two variants of tag types, so that kReflect is one constant in wick's enum style).
enum class PadMode { Constant, Zeros, Reflect, Replicate, Circular };
inline constexpr PadMode kConstant = PadMode::Constant;
inline constexpr PadMode kZeros = PadMode::Zeros;
inline constexpr PadMode kReflect = PadMode::Reflect;
inline constexpr PadMode kReplicate = PadMode::Replicate;
inline constexpr PadMode kCircular = PadMode::Circular;
/// "constant", "zeros", "reflect", "replicate", "circular": PyTorch's spelling.
const char* pad_mode_name(PadMode mode);
/// Parses PyTorch's spelling (ValueError for any other string).
PadMode pad_mode_from_string(const std::string& s);

/// How a loss reduces its per-element values. BatchMean (the sum divided by the input's first
/// size) is kl_div's only; every other loss refuses it with a ValueError naming the loss, where
/// LibTorch's per-loss reduction variants refuse it at compile time. Mean comes first, so that
/// Reduction{} is every loss's default: `F::mse_loss(x, y, {})` picks the positional overload
/// (an enum from `{}` beats an options struct's constructor) and must mean what LibTorch's `{}`
/// options mean, kMean (docs/modules.md).
enum class Reduction { Mean, None, Sum, BatchMean };
/// LibTorch's spellings: `MSELossOptions().reduction(kSum)` as `torch::kSum`.
inline constexpr Reduction kNone = Reduction::None;
inline constexpr Reduction kMean = Reduction::Mean;
inline constexpr Reduction kSum = Reduction::Sum;
inline constexpr Reduction kBatchMean = Reduction::BatchMean;
/// Parses "none" / "mean" / "sum" / "batchmean" (ValueError otherwise).
Reduction reduction_from_string(const std::string& s);
const char* reduction_name(Reduction r);

namespace functional {

// ---- linear and convolution ----
/// input [*, in] @ weight[out, in]^T + bias[out] -> [*, out].
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {});
/// 2-d cross-correlation: input [N, C, H, W] (or [C, H, W]), weight [O, C / groups, kh, kw],
/// bias [O] or undefined -> [N, O, oh, ow]. With groups, input channel block j (C / groups
/// channels) feeds only output channel block j (O / groups), as torch::conv2d; groups = C is a
/// depthwise convolution. im2col + one GEMM per group.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, Int2 stride = 1, Int2 padding = 0,
              Int2 dilation = 1, int64_t groups = 1);
/// conv2d with a named padding (kSame or kValid), as torch::conv2d(..., "same").
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Int2 stride, PaddingMode padding,
              Int2 dilation = 1, int64_t groups = 1);
/// Constant padding, as torch.nn.functional.pad with mode "constant": `pad` holds (before,
/// after) pairs starting from the last dim ({left, right, top, bottom} for the last two);
/// negative amounts crop. Differentiable in input; an output that keeps nothing of the input (a
/// dim cropped to nothing, or an empty input) is still in the graph, with a zero gradient.
Tensor pad(const Tensor& input, const std::vector<int64_t>& pad, double value = 0.0);
/// torch.nn.functional.pad(input, pad, mode, value) of PyTorch 1.13. kConstant is the overload
/// above (value defaults to 0). kReflect and kReplicate pad the last 1, 2 or 3 dims of a 2-d or
/// 3-d, 3-d or 4-d, 4-d or 5-d input (the first dim a batch or the channels of an unbatched
/// input); kCircular the same of a batched 3-d, 4-d or 5-d input only. Another count of pads for
/// the rank is a NotImplementedError, as in PyTorch 1.13. Reflect needs each pad below the size
/// of its dim; reflect and replicate crop with a negative pad after padding, and need every
/// output size >= 0 and one >= 1; they refuse an empty dim other than the batch dim (reflect over
/// 1 or 2 dims also takes an unbatched input's empty first dim), as PyTorch 1.13's kernels.
/// Circular needs each pad <= the size: a negative pad crops first and a positive pad then wraps
/// around what is left, which must be at least as long (PyTorch 1.13 returns memory it never
/// wrote there, or fails in its copy). value must be unset or 0 for these modes; kZeros is
/// Conv2d's and refused here. Every bad argument is a ValueError naming the mode, the pads and
/// the input's shape. Zero pads give a copy, never the input. Composed of index_select, so
/// differentiable twice on every device and for every dtype (PyTorch 1.13's reflect and replicate
/// take floating inputs only). nn/src/functional_pad_modes.cpp.
Tensor pad(const Tensor& input, const std::vector<int64_t>& pad, PadMode mode,
           std::optional<double> value = std::nullopt);

// ---- pooling (input [N, C, H, W] or [C, H, W]) ----
/// Max over each window; padding is implicit -inf. stride 0 (the default) means stride = kernel:
/// wick's spelling of PyTorch's stride=None, where PyTorch refuses an explicit 0 ("stride should
/// not be zero"), as MaxPool2d and AvgPool2d do; a stride zero on one axis only is refused.
Tensor max_pool2d(const Tensor& input, Int2 kernel_size, Int2 stride = 0, Int2 padding = 0, Int2 dilation = 1,
                  bool ceil_mode = false);
/// max_pool2d and, for each output, the flat position h * W + w of its maximum in the input plane
/// (int64, the output's shape), as LibTorch's max_pool2d_with_indices. Ties keep the first
/// position in window order; NaN propagates. Not differentiable in the indices.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, Int2 kernel_size, Int2 stride = 0,
                                                   Int2 padding = 0, Int2 dilation = 1, bool ceil_mode = false);
/// Mean over each window; padding is zeros, counted in the divisor when count_include_pad. stride 0
/// (the default) means stride = kernel, as in max_pool2d. divisor_override, when given, is every
/// window's divisor instead (the window's sum / divisor_override, whatever its size and
/// count_include_pad, as PyTorch); 0 is a ValueError (PyTorch: "divisor must be not zero"), a
/// negative one divides as given, as PyTorch.
Tensor avg_pool2d(const Tensor& input, Int2 kernel_size, Int2 stride = 0, Int2 padding = 0, bool ceil_mode = false,
                  bool count_include_pad = true, std::optional<int64_t> divisor_override = std::nullopt);
/// Mean over PyTorch's adaptive windows [floor(i*H/oh), ceil((i+1)*H/oh)) -> [.., oh, ow].
Tensor adaptive_avg_pool2d(const Tensor& input, Int2 output_size);
/// Max over PyTorch's adaptive windows: output [.., oh, ow] of input [N, C, H, W] (or [C, H, W]),
/// window (i, j) rows [floor(i H / oh), ceil((i + 1) H / oh)) and columns likewise; windows
/// overlap where a size does not divide, and oh, ow may exceed H, W. An output_size entry left
/// out (std::nullopt) keeps that input size. Ties keep the first maximum in row-major order; a
/// NaN wins its window (the last NaN, as PyTorch). The gradient goes to each window's maximum
/// (summed where windows overlap); twice differentiable, on every device
/// (nn/src/functional_adaptive_max_pool.cpp). ValueError for another rank, an empty H or W, or
/// an output size below 1 (PyTorch 1.13 returns an empty tensor for 0); TypeError for a
/// non-float input.
Tensor adaptive_max_pool2d(const Tensor& input, OptionalInt2 output_size);
/// adaptive_max_pool2d and, for each output, the flat position h * W + w of its maximum in the
/// input plane (int64, the output's shape), as LibTorch's adaptive_max_pool2d_with_indices. Not
/// differentiable in the indices.
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input, OptionalInt2 output_size);

// ---- normalization ----
/// Batch normalization over dim 1 of input [N, C, *]. In training mode it normalizes with the
/// batch statistics and, when running_mean/running_var are defined, updates them in place:
/// running = (1 - momentum) * running + momentum * batch_stat (running_var with the unbiased
/// batch variance). In eval mode it normalizes with the running statistics. weight, bias and the
/// running statistics have shape [C] and the input's dtype (TypeError otherwise). Training needs
/// N * prod(spatial) != 1 values per channel (ValueError); an input with no elements gives an
/// empty output (in the graph) and leaves the running statistics alone, as PyTorch.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight = {},
                  const Tensor& bias = {}, bool training = false, double momentum = 0.1, double eps = 1e-5);
/// Normalizes over the trailing dims `normalized_shape` (biased variance), then * weight + bias;
/// weight and bias have shape normalized_shape and the input's dtype (TypeError otherwise).
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);
/// Group normalization (torch.nn.functional.group_norm): input [N, C, *] with C divisible by
/// num_groups > 0 (ValueError otherwise); each sample's channels are split into num_groups groups
/// of C / num_groups, each group normalized over its (C / num_groups, *) values with the biased
/// variance, then * weight + bias (per channel, [C], the input's dtype: TypeError otherwise).
/// As PyTorch 1.13, one sample whose every group holds one value (N * C / num_groups * prod(*) ==
/// 1) is a ValueError, and an input with no elements gives an empty output in the graph. The
/// normalization is layer_norm's (its fused node, Note [Fused layer_norm]).
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);
/// Instance normalization (torch.nn.functional.instance_norm): each (n, c) plane of input
/// [N, C, *] normalized over its spatial values, then * weight + bias (per channel). With
/// use_input_stats (PyTorch 1.13's default) it normalizes with each instance's own mean and
/// biased variance (more than one spatial value needed: ValueError), and updates the running
/// statistics given, in place: running = (1 - momentum) * running + momentum * stat, where stat
/// is the mean over the batch of the instances' means (running_mean) and of their unbiased
/// variances (running_var). Without use_input_stats it normalizes with running_mean and
/// running_var (both needed: ValueError) and changes nothing. Weight, bias and the running
/// statistics are [C] in the input's dtype (TypeError otherwise). An input with no elements gives
/// an empty output in the graph and leaves the running statistics alone (PyTorch 1.13 writes NaN
/// into them for an empty batch, and refuses a weight there; docs/modules.md).
Tensor instance_norm(const Tensor& input, const Tensor& running_mean = {}, const Tensor& running_var = {},
                     const Tensor& weight = {}, const Tensor& bias = {}, bool use_input_stats = true,
                     double momentum = 0.1, double eps = 1e-5);

// ---- dropout, activations (embedding: wick/nn/functional_embedding.h) ----
/// Zeroes each element with probability p and scales the rest by 1 / (1 - p) when training;
/// the identity otherwise. Seeded by wick::manual_seed.
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true);
/// The options of the dropout functions, as LibTorch's F::DropoutFuncOptions:
/// `F::dropout2d(x, F::Dropout2dFuncOptions().p(0.2).training(false))`. With inplace the input
/// itself is multiplied by the mask and returned (Tensor::mul_: recorded in the graph, refused
/// on a leaf that requires grad, as PyTorch).
struct DropoutFuncOptions {
  /// The probability of zeroing an element (dropout) or a channel (dropoutNd), in [0, 1].
  WICK_ARG(double, p) = 0.5;
  /// Dropout applies only when training; otherwise the input is returned as it is.
  WICK_ARG(bool, training) = true;
  WICK_ARG(bool, inplace) = false;
};
using Dropout1dFuncOptions = DropoutFuncOptions;
using Dropout2dFuncOptions = DropoutFuncOptions;
using Dropout3dFuncOptions = DropoutFuncOptions;
/// dropout(input, p, training) with LibTorch's options, and inplace.
Tensor dropout(const Tensor& input, const DropoutFuncOptions& options);
/// Channel dropout (Note [Channel dropout], nn/src/functional_dropout.cpp): zeroes each channel
/// (all of input[n, c]) with probability p and scales the other channels by 1 / (1 - p) when
/// training; the identity otherwise. Input [N, C, L] or unbatched [C, L], as PyTorch 1.13
/// (ValueError for another rank). Differentiable: the gradient is the same mask times
/// 1 / (1 - p). Seeded by wick::manual_seed, the same mask on every device.
Tensor dropout1d(const Tensor& input, const Dropout1dFuncOptions& options = {});
/// Channel dropout of input [N, C, H, W] only. A 3-d input is a ValueError: PyTorch 1.13 reads
/// it as [N, C, L] (with a warning that this will change) and LibTorch as an unbatched
/// [C, H, W]; call dropout1d for the first, or unsqueeze(0) the second. Other ranks, which
/// PyTorch 1.13 takes with a deprecation warning, are ValueErrors too.
Tensor dropout2d(const Tensor& input, const Dropout2dFuncOptions& options = {});
/// Channel dropout of input [N, C, D, H, W] or unbatched [C, D, H, W] (ValueError for another
/// rank, which PyTorch 1.13 takes with a deprecation warning).
Tensor dropout3d(const Tensor& input, const Dropout3dFuncOptions& options = {});
// relu and silu (with their inplace options): wick/nn/functional_activation.h.
/// approximate: "none" (erf, default) or "tanh".
Tensor gelu(const Tensor& input, const std::string& approximate = "none");
Tensor tanh(const Tensor& input);
Tensor sigmoid(const Tensor& input);
Tensor softmax(const Tensor& input, int64_t dim);
Tensor log_softmax(const Tensor& input, int64_t dim);

// ---- attention ----
/// PyTorch 2's torch.nn.functional.scaled_dot_product_attention: query [..., L, E], key
/// [..., S, E], value [..., S, Ev] (batch dims broadcast) -> [..., L, Ev] =
/// dropout(softmax(query @ key^T * scale + mask), dropout_p) @ value, scale = 1 / sqrt(E) unless
/// given. attn_mask (broadcast to [..., L, S]) is bool (true = take part; false = -inf) or of
/// query's floating dtype (added). is_causal masks key j > query i (the top-left triangle, as
/// PyTorch's) and excludes attn_mask. dropout_p applies whenever it is > 0 (pass 0 in eval, as
/// PyTorch's callers do). A row whose keys are all masked gives NaN, as PyTorch 2.0-2.4's math kernel.
/// A composite of matmul (batched GEMM straight on the strided views, Note [Batched GEMM
/// without copies]), masked_fill / add, softmax and dropout: differentiable on every device.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = {}, double dropout_p = 0.0, bool is_causal = false,
                                    std::optional<double> scale = std::nullopt);

// ---- losses (reduction defaults to mean) ----
/// Negative log likelihood: input [N, C] or [N, C, d1, ...] (or [C]) of log-probabilities,
/// target int64 [N] / [N, d1, ...] (or 0-dim) in [0, C) or equal to ignore_index. Mean divides
/// by the summed weights of the non-ignored targets (by their count without weights).
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                Reduction reduction = Reduction::Mean, int64_t ignore_index = -100);
/// log_softmax over dim 1 then nll_loss, with PyTorch's label smoothing:
/// (1 - s) * nll + s / C * smooth, where smooth is -sum_c w_c * logp_c per element, reduced as
/// nll is (mean: divided by the same weight sum).
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                     Reduction reduction = Reduction::Mean, int64_t ignore_index = -100, double label_smoothing = 0.0);
/// (input - target)^2, reduced; input and target have one shape (ValueError otherwise: PyTorch
/// broadcasts them with a warning, nearly always a bug).
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
/// |input - target|, reduced.
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
/// The numerically stable sigmoid + binary cross entropy; weight multiplies each element,
/// pos_weight (broadcast over the last dim, one per class) weighs the positive term.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                                        Reduction reduction = Reduction::Mean, const Tensor& pos_weight = {});

}  // namespace functional

namespace F = functional;

}  // namespace wick::nn
#include "wick/nn/functional_1d.h"                 // conv1d and the 1-d pooling functions
#include "wick/nn/functional_3d.h"                 // Int3, conv3d and the 3-d pooling functions
#include "wick/nn/functional_activation.h"         // leaky_relu, elu, softplus, hardtanh, glu, prelu, ...
#include "wick/nn/functional_bilinear.h"           // bilinear
#include "wick/nn/functional_conv_transpose.h"     // conv_transpose1d, conv_transpose2d and conv_transpose3d
#include "wick/nn/functional_ctc.h"                // ctc_loss
#include "wick/nn/functional_distance.h"           // cosine_similarity, pairwise_distance
#include "wick/nn/functional_embedding.h"          // embedding and embedding_bag
#include "wick/nn/functional_fold.h"               // fold, unfold
#include "wick/nn/functional_fractional.h"         // fractional_max_pool2d, fractional_max_pool3d
#include "wick/nn/functional_grid.h"               // affine_grid, grid_sample
#include "wick/nn/functional_loss.h"               // binary_cross_entropy, smooth_l1_loss, kl_div, ...
#include "wick/nn/functional_loss_more.h"          // triplet_margin_loss, multi_margin_loss, gaussian_nll_loss, ...
#include "wick/nn/functional_lp_unpool.h"          // local_response_norm, lp_pool1d/2d, max_unpool1d/2d/3d
#include "wick/nn/functional_mha.h"                // multi_head_attention_forward
#include "wick/nn/functional_normalize.h"          // normalize
#include "wick/nn/functional_options_conv_norm.h"  // LibTorch's options of conv*, *_norm, softmax, gelu
#include "wick/nn/functional_options_loss.h"       // the losses' options and the F:: overloads taking them
#include "wick/nn/functional_options_pool.h"  // F::MaxPool2dFuncOptions, F::PadFuncOptions, ... and their overloads
#include "wick/nn/functional_random.h"        // alpha_dropout, feature_alpha_dropout, gumbel_softmax
#include "wick/nn/functional_resize.h"        // interpolate, pixel_shuffle, pixel_unshuffle
#include "wick/nn/functional_shrink.h"        // hardshrink, softshrink, rrelu
#include "wick/nn/functional_shuffle.h"       // channel_shuffle, one_hot
#include "wick/nn/functional_triplet.h"       // triplet_margin_with_distance_loss
