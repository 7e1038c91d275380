// Every Foundation op of the PyTorch oracle (tests/data/ops.safetensors, see
// tests/support/oracle.h), forward and backward, at relative error 1e-9 in float64.
//
// The test is data-driven: it iterates the manifest and dispatches on the op name and its
// kwargs. A case whose op is neither a Foundation op dispatched here nor one of the nn ops
// (checked by tests/nn) fails, so a new oracle case cannot be skipped silently.
#include "support/oracle.h"

#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>

#include "oracle_tensor_api.h"
#include "support/allclose.h"
#include "support/devices.h"

using namespace wick;
using wick::test::OracleCase;

namespace {

using OpFn = std::function<Tensor(const std::vector<Tensor>&, const OracleCase&)>;

std::vector<int64_t> dims_kw(const OracleCase& c) { return c.kw<std::vector<int64_t>>("dim", {}); }

std::map<std::string, OpFn> foundation_ops_only();

// Foundation ops and the tensor API's (oracle_tensor_api.cpp), by the name generate.py gives them.
const std::map<std::string, OpFn>& foundation_ops() {
  static const std::map<std::string, OpFn> ops = [] {
    std::map<std::string, OpFn> m = foundation_ops_only();
    for (const auto& [name, fn] : wick::test::tensor_api_ops()) m.emplace(name, fn);
    return m;
  }();
  return ops;
}

// The Foundation ops of the first oracle cases.
std::map<std::string, OpFn> foundation_ops_only() {
  return {
      {"add", [](const auto& x, const auto&) { return add(x[0], x[1]); }},
      {"sub", [](const auto& x, const auto&) { return sub(x[0], x[1]); }},
      {"mul", [](const auto& x, const auto&) { return mul(x[0], x[1]); }},
      {"div", [](const auto& x, const auto&) { return div(x[0], x[1]); }},
      {"pow",
       [](const auto& x, const OracleCase& c) { return pow(x[0], Scalar(c.kwargs.at("exponent").get<double>())); }},
      {"neg", [](const auto& x, const auto&) { return neg(x[0]); }},
      {"exp", [](const auto& x, const auto&) { return exp(x[0]); }},
      {"log", [](const auto& x, const auto&) { return log(x[0]); }},
      {"sqrt", [](const auto& x, const auto&) { return sqrt(x[0]); }},
      {"tanh", [](const auto& x, const auto&) { return tanh(x[0]); }},
      {"sigmoid", [](const auto& x, const auto&) { return sigmoid(x[0]); }},
      {"relu", [](const auto& x, const auto&) { return relu(x[0]); }},
      {"gelu", [](const auto& x, const auto&) { return gelu(x[0]); }},
      {"abs", [](const auto& x, const auto&) { return abs(x[0]); }},
      {"maximum", [](const auto& x, const auto&) { return maximum(x[0], x[1]); }},
      {"where",
       [](const auto& x, const OracleCase& c) {
         REQUIRE(c.kwargs.at("cond").get<std::string>() == "in0 > 0");
         return where(x[0].gt(0), x[1], x[2]);
       }},
      {"sum",
       [](const auto& x, const OracleCase& c) {
         return c.kwargs.contains("dim") ? sum(x[0], dims_kw(c), c.kw("keepdim", false)) : sum(x[0]);
       }},
      {"mean",
       [](const auto& x, const OracleCase& c) {
         return c.kwargs.contains("dim") ? mean(x[0], dims_kw(c), c.kw("keepdim", false)) : mean(x[0]);
       }},
      {"amax", [](const auto& x, const OracleCase& c) { return amax(x[0], dims_kw(c), c.kw("keepdim", false)); }},
      {"logsumexp",
       [](const auto& x, const OracleCase& c) { return logsumexp(x[0], dims_kw(c), c.kw("keepdim", false)); }},
      {"var",
       [](const auto& x, const OracleCase& c) {
         return var(x[0], dims_kw(c), c.kw("unbiased", true), c.kw("keepdim", false));
       }},
      {"reshape", [](const auto& x,
                     const OracleCase& c) { return reshape(x[0], c.kwargs.at("shape").get<std::vector<int64_t>>()); }},
      {"transpose",
       [](const auto& x, const OracleCase& c) {
         return transpose(x[0], c.kwargs.at("dim0").get<int64_t>(), c.kwargs.at("dim1").get<int64_t>());
       }},
      {"permute", [](const auto& x,
                     const OracleCase& c) { return permute(x[0], c.kwargs.at("dims").get<std::vector<int64_t>>()); }},
      {"narrow",
       [](const auto& x, const OracleCase& c) {
         return narrow(x[0], c.kwargs.at("dim").get<int64_t>(), c.kwargs.at("start").get<int64_t>(),
                       c.kwargs.at("length").get<int64_t>());
       }},
      {"expand", [](const auto& x,
                    const OracleCase& c) { return expand(x[0], c.kwargs.at("shape").get<std::vector<int64_t>>()); }},
      {"cat", [](const auto& x, const OracleCase& c) { return cat(x, c.kw<int64_t>("dim", 0)); }},
      {"stack", [](const auto& x, const OracleCase& c) { return stack(x, c.kw<int64_t>("dim", 0)); }},
      {"index_select",
       [](const auto& x, const OracleCase& c) { return index_select(x[0], c.kwargs.at("dim").get<int64_t>(), x[1]); }},
      {"gather",
       [](const auto& x, const OracleCase& c) { return gather(x[0], c.kwargs.at("dim").get<int64_t>(), x[1]); }},
      {"matmul", [](const auto& x, const auto&) { return matmul(x[0], x[1]); }},
      {"softmax", [](const auto& x, const OracleCase& c) { return softmax(x[0], c.kwargs.at("dim").get<int64_t>()); }},
      {"log_softmax",
       [](const auto& x, const OracleCase& c) { return log_softmax(x[0], c.kwargs.at("dim").get<int64_t>()); }},
      // generate.py's coverage_cases
      {"sin", [](const auto& x, const auto&) { return sin(x[0]); }},
      {"cos", [](const auto& x, const auto&) { return cos(x[0]); }},
      {"erf", [](const auto& x, const auto&) { return erf(x[0]); }},
      {"expm1", [](const auto& x, const auto&) { return expm1(x[0]); }},
      {"log1p", [](const auto& x, const auto&) { return log1p(x[0]); }},
      {"rsqrt", [](const auto& x, const auto&) { return rsqrt(x[0]); }},
      {"reciprocal", [](const auto& x, const auto&) { return reciprocal(x[0]); }},
      {"square", [](const auto& x, const auto&) { return square(x[0]); }},
      {"sign", [](const auto& x, const auto&) { return sign(x[0]); }},
      {"minimum", [](const auto& x, const auto&) { return minimum(x[0], x[1]); }},
      {"clamp",
       [](const auto& x, const OracleCase& c) {
         return clamp(x[0], Scalar(c.kwargs.at("min").get<double>()), Scalar(c.kwargs.at("max").get<double>()));
       }},
      {"logical_and",
       [](const auto& x, const OracleCase& c) {
         REQUIRE(c.kwargs.at("a").get<std::string>() == "in0 > 0");
         REQUIRE(c.kwargs.at("b").get<std::string>() == "in1 > 0");
         return logical_and(x[0].gt(0), x[1].gt(0));
       }},
      {"argmax",
       [](const auto& x, const OracleCase& c) {
         return argmax(x[0], c.kwargs.at("dim").get<int64_t>(), c.kw("keepdim", false));
       }},
      {"amin", [](const auto& x, const OracleCase& c) { return amin(x[0], dims_kw(c), c.kw("keepdim", false)); }},
  };
}

// Ops of the oracle that belong to nn/ and are checked by its tests (tests/nn/).
const std::set<std::string>& nn_ops() {
  static const std::set<std::string> ops = {
      "linear", "cross_entropy", "nll_loss", "mse_loss", "conv2d", "max_pool2d", "avg_pool2d", "layer_norm",
      "batch_norm_train", "embedding", "dropout_eval",
      // generate.py's nn_layers_31_cases, tests/nn/nn_layers_31_test.cpp
      "channel_shuffle", "alpha_dropout_eval", "feature_alpha_dropout_eval", "cross_map_lrn2d", "fractional_max_pool2d",
      "fractional_max_pool2d_indices", "fractional_max_pool3d", "fractional_max_pool3d_indices",
      // tests/nn/layers_oracle_test.cpp
      "sdpa", "multihead_attention", "transformer_encoder_layer", "lstm", "gru", "embedding_padding_idx", "gelu_tanh",
      "layer_norm_no_affine",
      // generate.py's coverage_cases, tests/nn/functional_oracle_test.cpp
      "batch_norm_eval", "l1_loss", "bce_with_logits", "nll_loss_weighted", "cross_entropy_smoothing",
      "cross_entropy_ignore", "avg_pool2d_padded", "adaptive_avg_pool2d", "max_pool2d_padded", "conv2d_groups", "pad",
      // generate.py's cell_cases, tests/nn/layers_oracle_test.cpp
      "rnn", "rnn_cell", "lstm_cell", "gru_cell",
      // generate.py's conv_pool_cases, tests/nn/functional_oracle_test.cpp
      "conv2d_same",
      // generate.py's decoder_cases, tests/nn/layers_oracle_test.cpp
      "transformer_decoder_layer", "transformer_decoder", "transformer",
      // generate.py's optim_cases, tests/nn/optim_rmsprop_adagrad_test.cpp
      "optim_rmsprop", "optim_adagrad",
      // generate.py's norm_more_cases, tests/nn/group_instance_norm_test.cpp
      "group_norm", "instance_norm", "group_norm_module", "instance_norm_module",
      // generate.py's one_d_cases, tests/nn/one_d_oracle_test.cpp
      "conv1d", "max_pool1d", "max_pool1d_indices", "avg_pool1d", "adaptive_avg_pool1d",
      // their layers
      "conv1d_module", "max_pool1d_module", "avg_pool1d_module", "adaptive_avg_pool1d_module",
      // generate.py's pad_mode_cases, tests/nn/pad_mode_test.cpp
      "pad_mode", "conv2d_padding_mode",
      // generate.py's conv_transpose_cases, tests/nn/conv_transpose_test.cpp
      "conv_transpose2d", "conv_transpose1d", "conv_transpose2d_module", "conv_transpose1d_module",
      // generate.py's adaptive_max_cases, tests/nn/adaptive_max_pool_test.cpp
      "adaptive_max_pool2d", "adaptive_max_pool2d_indices", "adaptive_max_pool1d", "adaptive_max_pool1d_indices",
      "adaptive_max_pool2d_module", "adaptive_max_pool1d_module",
      // generate.py's norm3d_cases, tests/nn/norm3d_test.cpp
      "batch_norm3d_module", "instance_norm3d_module", "max_pool1d_module_indices", "avg_pool2d_divisor",
      "avg_pool1d_divisor", "conv1d_padding_mode",
      // generate.py's activation_cases, tests/nn/activation_test.cpp
      "leaky_relu", "elu", "selu", "celu", "softplus", "hardtanh", "relu6", "hardsigmoid", "hardswish", "mish",
      "softsign", "tanhshrink", "threshold", "logsigmoid", "glu", "softmin", "prelu",
      // generate.py's loss_cases, tests/nn/loss_test.cpp
      "binary_cross_entropy", "smooth_l1_loss", "huber_loss", "kl_div", "soft_margin_loss", "margin_ranking_loss",
      "hinge_embedding_loss", "cosine_embedding_loss",
      // generate.py's embedding_cases, tests/nn/embedding_test.cpp
      "embedding_options", "embedding_bag",
      // generate.py's three_d_cases, tests/nn/three_d_test.cpp
      "conv3d", "conv3d_module", "max_pool3d", "max_pool3d_indices", "avg_pool3d", "adaptive_avg_pool3d",
      // generate.py's optim_more_cases, tests/nn/optim_more_test.cpp
      "optim_adamax", "optim_nadam", "optim_radam", "optim_rprop",
      // generate.py's resize_cases, tests/nn/resize_test.cpp
      "interpolate", "pixel_shuffle", "pixel_unshuffle", "pad_layer", "cosine_similarity", "pairwise_distance",
      // generate.py's tensor_ops_more_cases, tests/autograd/tensor_ops_more_test.cpp
      "kthvalue", "median", "median_all", "prod", "prod_all", "cumprod", "floor", "ceil", "round", "trunc", "frac",
      "remainder", "fmod", "atan2", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
      // generate.py's three_d_more_cases, tests/nn/three_d_more_test.cpp
      "conv_transpose3d", "conv_transpose3d_module", "adaptive_max_pool3d", "adaptive_max_pool3d_indices",
      "adaptive_max_pool3d_module",
      // generate.py's pad3d_cases, tests/nn/pad3d_test.cpp
      "reflection_pad3d", "replication_pad3d", "circular_pad3d",
      // generate.py's interp_modes_cases, tests/nn/interpolate_modes_test.cpp
      "interpolate_trilinear", "interpolate_bicubic", "interpolate_area",
      // generate.py's tensor_methods_cases, tests/autograd/tensor_methods_more_test.cpp
      "mode", "mode_indices", "inplace_unary", "inplace_binary", "inplace_cumprod",
      // generate.py's nearest3d_cases, tests/nn/interpolate_nearest3d_test.cpp
      "interpolate_nearest3d",
      // generate.py's grid_sample_cases, tests/nn/grid_sample_test.cpp
      "grid_sample", "affine_grid",
      // generate.py's einsum_cases, tests/autograd/einsum_cdist_test.cpp and tests/nn/bilinear_test.cpp
      "einsum", "cdist", "bilinear", "bilinear_module", "softmax2d",
      // generate.py's fold_pool_cases, tests/nn/fold_pool_test.cpp
      "unfold", "fold", "local_response_norm", "lp_pool1d", "lp_pool2d", "max_unpool1d", "max_unpool2d", "max_unpool3d",
      "max_unpool2d_dup",
      // generate.py's margin_likelihood_loss_cases, tests/nn/loss_more_test.cpp
      "triplet_margin_loss", "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
      "poisson_nll_loss", "gaussian_nll_loss",
      // generate.py's packed_sequence_cases, tests/nn/packed_sequence_test.cpp
      "pack_padded_sequence", "pad_packed_sequence", "pad_sequence", "pack_sequence", "lstm_packed", "gru_packed",
      "rnn_packed",
      // generate.py's linalg_cases, tests/autograd/linalg_test.cpp
      "linalg_inv", "linalg_det", "linalg_slogdet", "linalg_slogdet_sign", "linalg_solve", "linalg_cholesky",
      "linalg_qr", "linalg_eigh", "linalg_eigvalsh", "linalg_svd", "linalg_svdvals", "linalg_matrix_norm",
      "linalg_vector_norm",
      // generate.py's linalg_more_cases, tests/autograd/linalg_more_test.cpp
      "linalg_solve_triangular", "cholesky_solve", "cholesky_inverse", "linalg_lu_factor", "linalg_lu",
      "linalg_lu_solve", "linalg_lstsq", "linalg_lstsq_aux", "linalg_pinv", "linalg_matrix_rank", "linalg_matrix_power",
      "linalg_matrix_exp", "linalg_cross", "linalg_multi_dot", "linalg_vecdot", "linalg_cond",
      // generate.py's ctc_cases, tests/nn/ctc_shrink_test.cpp
      "ctc_loss", "hardshrink", "softshrink", "rrelu_eval", "triplet_margin_with_distance_loss",
      // generate.py's count_search_build_cases, tests/autograd/unique_search_test.cpp and build_ops_test.cpp
      "unique", "unique_consecutive", "bincount", "histc", "searchsorted", "bucketize", "meshgrid", "cartesian_prod",
      "diag_embed", "block_diag", "kron", "tril_indices", "triu_indices",
      // generate.py's scan_scatter_math_cases, tests/autograd/tensor_ops_extra_test.cpp
      "logcumsumexp", "cummax", "cummax_indices", "cummin", "cummin_indices", "renorm", "nan_to_num", "logit", "xlogy",
      "xlogy_scalar_x", "xlogy_scalar_y", "lerp", "lerp_tensor", "hypot", "trapezoid", "trapezoid_x", "trapz", "rot90",
      "repeat_interleave", "repeat_interleave_tensor", "tile", "masked_select", "take_along_dim", "scatter_reduce",
      "index_put", "index_put_mask", "tensordot",
      // generate.py's functional_cases, tests/autograd/functional_test.cpp
      "functional_vjp", "functional_jvp", "functional_jacobian", "functional_hessian", "functional_hvp",
      "functional_vhp",
      // generate.py's stats32_cases, tests/autograd/stats_test.cpp
      "nansum", "nanmean", "nanmedian_all", "nanmedian", "nanmedian_indices", "quantile", "nanquantile", "std_mean",
      "var_mean", "aminmax", "count_nonzero", "cov", "cov_weights", "cov_fweights", "cov_aweights", "corrcoef",
      "cumulative_trapezoid", "cumulative_trapezoid_x",
      // generate.py's special32_cases, tests/autograd/special_ops_test.cpp
      "digamma", "lgamma", "polygamma", "erfinv", "erfc", "i0", "special_i1", "mvlgamma", "sinc", "exp2", "logaddexp2",
      "copysign", "copysign_scalar", "heaviside", "signbit", "deg2rad", "rad2deg", "float_power", "float_power_scalar",
      "float_power_scalar_base", "true_divide", "floor_divide", "floor_divide_scalar", "frexp", "frexp_exponent",
      "ldexp", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "logical_xor", "gcd", "lcm", "mp_digamma",
      "mp_lgamma", "mp_polygamma", "mp_erfinv", "mp_i0", "mp_i1",
      // generate.py's index32_cases, tests/autograd/index_more_test.cpp and tests/nn/adaptive_log_softmax_test.cpp
      "index_copy", "index_fill", "index_fill_tensor", "index_reduce", "put", "argwhere", "isin", "isin_scalar",
      "diagflat", "combinations", "vander", "addcmul", "addcdiv", "addbmm", "addmv", "addr", "chain_matmul", "ger",
      "vdot", "logdet", "pdist", "adaptive_log_softmax", "adaptive_log_softmax_loss", "adaptive_log_softmax_log_prob",
      "adaptive_log_softmax_predict",
      // generate.py's normalize_cases, tests/nn/normalize_test.cpp
      "normalize",
      // generate.py's mha_forward_cases, tests/nn/multi_head_attention_forward_test.cpp
      "multi_head_attention_forward",
      // generate.py's mha_layer_cases, tests/nn/multihead_attention_options_test.cpp
      "multihead_attention_options",
      // generate.py's padding_module_cases, tests/nn/padding_modules_test.cpp
      "padding_module"};
  return ops;
}

// Float64 results must match PyTorch's to a relative error of 1e-9. The absolute term only
// covers results that are zero up to rounding (e.g. a gradient that cancels to ~1e-17).
constexpr double kRtol = 1e-9;
constexpr double kAtol = 1e-13;

void check_case(const OracleCase& c, Device device) {
  INFO(c.label() << " on " << device);
  const OpFn& fn = foundation_ops().at(c.op);
  std::vector<Tensor> leaves = c.leaves(device);
  Tensor out = fn(leaves, c);
  REQUIRE(out.defined());
  CHECK(out.device() == device);
  CHECK(out.dtype() == c.out.dtype());
  CHECK_ALLCLOSE(out, c.out, kRtol, kAtol);
  bool any_diff = false;
  for (bool d : c.differentiable) any_diff = any_diff || d;
  if (!any_diff) return;
  REQUIRE(out.requires_grad());
  std::vector<Tensor> grads = c.backward(out, leaves);
  for (size_t j = 0; j < grads.size(); ++j) {
    if (!c.differentiable[j]) continue;
    INFO("gradient of input " << j);
    REQUIRE(grads[j].defined());
    CHECK(grads[j].dtype() == kFloat64);
    CHECK(grads[j].device() == device);
    CHECK_ALLCLOSE(grads[j], c.gin[j], kRtol, kAtol);
  }
}

}  // namespace

TEST_CASE("oracle: the file loads and every case is dispatched here or listed as an nn op") {
  const auto& cases = wick::test::oracle_cases();
  const bool default_file = std::getenv("WICK_ORACLE_FILE") == nullptr;  // else: e.g. generate.py --set extended
  if (default_file) REQUIRE(cases.size() >= 108);
  int foundation = 0;
  for (const OracleCase& c : cases) {
    INFO(c.label());
    const bool known = foundation_ops().count(c.op) || nn_ops().count(c.op);
    if (!known) FAIL("op '" << c.op << "' of " << c.label() << " is neither a Foundation op nor an nn op");
    foundation += foundation_ops().count(c.op) ? 1 : 0;
    // Floating results are float64; predicates, indices and one_hot give bool or int64.
    CHECK((c.out.dtype() == kFloat64 || c.out.dtype() == kBool || c.out.dtype() == kInt64));
  }
  if (default_file) CHECK(foundation >= 95);
}

TEST_CASE("oracle: every Foundation op matches PyTorch forward and backward (float64, rtol 1e-9)") {
  int checked = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (!foundation_ops().count(c.op)) continue;
    check_case(c, kCPU);
    ++checked;
  }
  CHECK(checked > 0);
}

TEST_CASE("oracle: the same cases on every test device") {
  for (Device d : wick::test::test_devices()) {
    if (d == kCPU) continue;
    for (const OracleCase& c : wick::test::oracle_cases())
      if (foundation_ops().count(c.op)) check_case(c, d);
  }
}

TEST_CASE("oracle: float32 forward matches PyTorch's float64 values to float32 precision") {
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (!foundation_ops().count(c.op)) continue;
    INFO(c.label() << " in float32");
    std::vector<Tensor> xs;
    bool representable = true;  // edge cases may hold values float32 cannot (1e-200)
    for (const Tensor& t : c.inputs) {
      xs.push_back(t.dtype() == kFloat64 ? t.to(kFloat32) : t);
      if (t.dtype() == kFloat64)
        representable = representable && wick::test::allclose(xs.back().to(kFloat64), t, 1e-6, 0.0).ok;
    }
    if (!representable) continue;
    Tensor out = foundation_ops().at(c.op)(xs, c);
    CHECK(out.dtype() == (c.out.dtype() == kFloat64 ? kFloat32 : c.out.dtype()));
    CHECK_ALLCLOSE(out, c.out, 1e-5, 1e-5);
  }
}
