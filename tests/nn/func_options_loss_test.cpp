// The functional-options overloads of the losses (wick/nn/functional_options_loss.h): with every
// option set to a distinct value that is not its default and that changes the loss (so a field
// dropped, or two swapped, changes the result), the options call equals the positional call
// (whose values loss_test.cpp and loss_more_test.cpp check against PyTorch 1.13) exactly, in
// value and in every input's gradient, on every test device; the options' defaults are LibTorch
// 1.13's (written out from its options/loss.h); a bad option is a typed error naming the loss.
#include <catch2/catch.hpp>
#include <cstddef>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "support/devices.h"
#include "support/expect_error.h"
#include "support/small_tensors.h"
#include "wick/autograd/grad.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using wick::test::doubles;
using wick::test::f64;
using wick::test::i64;

namespace {
using TL = std::vector<Tensor>;
using Loss = std::function<Tensor(const TL&)>;

// One overload: its arguments (the first n_grad are leaves whose gradients are compared), the
// call with the options and the positional call it must equal.
struct Row {
  std::string name;
  TL args;
  size_t n_grad;
  Loss with_options, positional;
};

// A float64 leaf of shape [4, 3] on dev.
Tensor leaf(const std::vector<double>& v, Device dev) { return f64(v, {4, 3}, dev).requires_grad_(true); }

std::vector<Row> rows(Device dev) {
  // x - t holds differences below and above beta = 0.3 and delta = 0.6; z lies nearer t than x,
  // so that swap changes the triplet loss; the margins keep every hinge partly active.
  const Tensor x = leaf({0.3, -1.2, 0.8, 1.5, 0.1, -0.4, -0.7, 0.9, 0.2, 0.05, -0.3, 1.1}, dev);
  const Tensor t = leaf({0.1, 0.4, -0.9, 1.0, -0.6, 0.3, -1.5, 0.2, 0.7, 0.6, -0.2, 0.25}, dev);
  const Tensor z = leaf({0.0, 0.5, -1.0, 0.9, -0.5, 0.2, -1.3, 0.1, 0.9, 0.4, 0.0, 0.3}, dev);
  const Tensor p = leaf({0.2, 0.7, 0.45, 0.9, 0.15, 0.6, 0.35, 0.8, 0.5, 0.25, 0.65, 0.3}, dev);
  const Tensor q = leaf({0.6, 0.1, 0.3, 0.4, 0.8, 0.95, 0.05, 0.5, 0.7, 0.2, 0.55, 0.9}, dev);
  const Tensor y = f64({1, -1, -1, 1}, dev), y01 = f64({1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0}, {4, 3}, dev);
  const Tensor y2 = f64({1, -1, 1, -1, -1, 1, -1, 1, 1, 1, -1, -1}, {4, 3}, dev);
  const Tensor counts = f64({0, 1, 2, 3, 4, 5, 2, 0, 1, 6, 3, 2}, {4, 3}, dev);
  const Tensor cls = i64({0, 2, 1, 2}, dev), labels = i64({2, 0, -1, 1, -1, 0, 0, 1, 2, -1, 2, 2}, {4, 3}, dev);
  const Tensor w = f64({0.5, 2.0, 1.5}, dev), pw = f64({3.0, 1.0, 0.25}, dev);
  return {
      {"nll_loss",
       {x, cls, w},
       1,
       [](const TL& a) {
         return F::nll_loss(a[0], a[1], F::NLLLossFuncOptions().weight(a[2]).ignore_index(1).reduction(kSum));
       },
       [](const TL& a) { return F::nll_loss(a[0], a[1], a[2], kSum, 1); }},
      {"cross_entropy",
       {x, cls, w},
       1,
       [](const TL& a) {
         return F::cross_entropy(
             a[0], a[1],
             F::CrossEntropyFuncOptions().weight(a[2]).ignore_index(2).reduction(kNone).label_smoothing(0.15));
       },
       [](const TL& a) { return F::cross_entropy(a[0], a[1], a[2], kNone, 2, 0.15); }},
      {"mse_loss",
       {x, t},
       2,
       [](const TL& a) { return F::mse_loss(a[0], a[1], F::MSELossFuncOptions(kSum)); },
       [](const TL& a) { return F::mse_loss(a[0], a[1], kSum); }},
      {"l1_loss",
       {x, t},
       2,
       [](const TL& a) { return F::l1_loss(a[0], a[1], F::L1LossFuncOptions().reduction(kNone)); },
       [](const TL& a) { return F::l1_loss(a[0], a[1], kNone); }},
      {"binary_cross_entropy_with_logits",
       {x, q, w, pw},
       2,
       [](const TL& a) {
         return F::binary_cross_entropy_with_logits(
             a[0], a[1], F::BinaryCrossEntropyWithLogitsFuncOptions().weight(a[2]).reduction(kSum).pos_weight(a[3]));
       },
       [](const TL& a) { return F::binary_cross_entropy_with_logits(a[0], a[1], a[2], kSum, a[3]); }},
      {"binary_cross_entropy",
       {p, q, w},
       2,
       [](const TL& a) {
         return F::binary_cross_entropy(a[0], a[1], F::BinaryCrossEntropyFuncOptions().weight(a[2]).reduction(kNone));
       },
       [](const TL& a) { return F::binary_cross_entropy(a[0], a[1], a[2], kNone); }},
      {"smooth_l1_loss",
       {x, t},
       2,
       [](const TL& a) { return F::smooth_l1_loss(a[0], a[1], F::SmoothL1LossFuncOptions(kNone).beta(0.3)); },
       [](const TL& a) { return F::smooth_l1_loss(a[0], a[1], kNone, 0.3); }},
      // LibTorch 1.13's trailing beta, with the options' beta left at its default or equal.
      {"smooth_l1_loss, trailing beta",
       {x, t},
       2,
       [](const TL& a) { return F::smooth_l1_loss(a[0], a[1], F::SmoothL1LossFuncOptions(kSum), 0.3); },
       [](const TL& a) { return F::smooth_l1_loss(a[0], a[1], kSum, 0.3); }},
      {"smooth_l1_loss, both betas",
       {x, t},
       2,
       [](const TL& a) { return F::smooth_l1_loss(a[0], a[1], F::SmoothL1LossFuncOptions(kSum).beta(0.3), 0.3); },
       [](const TL& a) { return F::smooth_l1_loss(a[0], a[1], kSum, 0.3); }},
      {"huber_loss",
       {x, t},
       2,
       [](const TL& a) { return F::huber_loss(a[0], a[1], F::HuberLossFuncOptions().reduction(kSum).delta(0.6)); },
       [](const TL& a) { return F::huber_loss(a[0], a[1], kSum, 0.6); }},
      {"kl_div",
       {x, t},
       2,
       [](const TL& a) { return F::kl_div(a[0], a[1], F::KLDivFuncOptions(kBatchMean).log_target(true)); },
       [](const TL& a) { return F::kl_div(a[0], a[1], kBatchMean, true); }},
      {"soft_margin_loss",
       {x, y2},
       1,
       [](const TL& a) { return F::soft_margin_loss(a[0], a[1], F::SoftMarginLossFuncOptions(kNone)); },
       [](const TL& a) { return F::soft_margin_loss(a[0], a[1], kNone); }},
      {"margin_ranking_loss",
       {x, t, y2},
       2,
       [](const TL& a) {
         return F::margin_ranking_loss(a[0], a[1], a[2],
                                       F::MarginRankingLossFuncOptions().margin(0.35).reduction(kSum));
       },
       [](const TL& a) { return F::margin_ranking_loss(a[0], a[1], a[2], 0.35, kSum); }},
      {"hinge_embedding_loss",
       {x, y2},
       1,
       [](const TL& a) {
         return F::hinge_embedding_loss(a[0], a[1], F::HingeEmbeddingLossFuncOptions().margin(2.5).reduction(kNone));
       },
       [](const TL& a) { return F::hinge_embedding_loss(a[0], a[1], 2.5, kNone); }},
      {"cosine_embedding_loss",
       {x, t, y},
       2,
       [](const TL& a) {
         return F::cosine_embedding_loss(a[0], a[1], a[2],
                                         F::CosineEmbeddingLossFuncOptions().margin(-0.4).reduction(kNone));
       },
       [](const TL& a) { return F::cosine_embedding_loss(a[0], a[1], a[2], -0.4, kNone); }},
      {"triplet_margin_loss",
       {x, t, z},
       3,
       [](const TL& a) {
         return F::triplet_margin_loss(
             a[0], a[1], a[2],
             F::TripletMarginLossFuncOptions().margin(3.0).p(1.5).eps(0.25).swap(true).reduction(kNone));
       },
       [](const TL& a) { return F::triplet_margin_loss(a[0], a[1], a[2], 3.0, 1.5, 0.25, true, kNone); }},
      {"multi_margin_loss",
       {x, cls, w},
       1,
       [](const TL& a) {
         return F::multi_margin_loss(a[0], a[1],
                                     F::MultiMarginLossFuncOptions().p(2).margin(0.6).weight(a[2]).reduction(kNone));
       },
       [](const TL& a) { return F::multi_margin_loss(a[0], a[1], 2, 0.6, a[2], kNone); }},
      {"multilabel_margin_loss",
       {x, labels},
       1,
       [](const TL& a) { return F::multilabel_margin_loss(a[0], a[1], F::MultilabelMarginLossFuncOptions(kSum)); },
       [](const TL& a) { return F::multilabel_margin_loss(a[0], a[1], kSum); }},
      {"multilabel_soft_margin_loss",
       {x, y01, w},
       1,
       [](const TL& a) {
         return F::multilabel_soft_margin_loss(a[0], a[1],
                                               F::MultilabelSoftMarginLossFuncOptions().weight(a[2]).reduction(kNone));
       },
       [](const TL& a) { return F::multilabel_soft_margin_loss(a[0], a[1], a[2], kNone); }},
      {"poisson_nll_loss",
       {p, counts},
       1,
       [](const TL& a) {
         return F::poisson_nll_loss(
             a[0], a[1], F::PoissonNLLLossFuncOptions().log_input(false).full(true).eps(0.5).reduction(kNone));
       },
       [](const TL& a) { return F::poisson_nll_loss(a[0], a[1], false, true, 0.5, kNone); }},
  };
}
}  // namespace

TEST_CASE("func options loss: each overload equals the positional call on every device", "[nn][loss]") {
  for (Device dev : wick::test::test_devices()) {
    for (const Row& r : rows(dev)) {
      INFO(dev.str() << " " << r.name);
      const Tensor a = r.with_options(r.args), b = r.positional(r.args);
      CHECK(a.device() == b.device());
      CHECK(a.sizes() == b.sizes());
      CHECK(doubles(a) == doubles(b));
      const TL leaves(r.args.begin(), r.args.begin() + static_cast<std::ptrdiff_t>(r.n_grad));
      const TL ga = autograd::grad({a.sum()}, leaves), gb = autograd::grad({b.sum()}, leaves);
      for (size_t i = 0; i < leaves.size(); ++i) {
        INFO("gradient of argument " << i);
        CHECK(doubles(ga[i]) == doubles(gb[i]));
      }
    }
  }
}

TEST_CASE("func options loss: the options and their defaults are LibTorch's", "[nn][loss]") {
  // The aliases, as LibTorch's options/loss.h spells them.
  STATIC_REQUIRE(std::is_same_v<F::BinaryCrossEntropyFuncOptions, BCELossOptions>);
  STATIC_REQUIRE(std::is_same_v<F::BinaryCrossEntropyWithLogitsFuncOptions, BCEWithLogitsLossOptions>);
  STATIC_REQUIRE(std::is_same_v<F::KLDivFuncOptions, KLDivLossOptions>);
  STATIC_REQUIRE(std::is_same_v<F::MultilabelMarginLossFuncOptions, MultiLabelMarginLossOptions>);
  STATIC_REQUIRE(std::is_same_v<F::MultilabelSoftMarginLossFuncOptions, MultiLabelSoftMarginLossOptions>);
  STATIC_REQUIRE(std::is_same_v<F::CrossEntropyFuncOptions, CrossEntropyLossOptions>);
  // LibTorch's defaults, field by field.
  CHECK(!F::BinaryCrossEntropyFuncOptions().weight().defined());
  CHECK(F::BinaryCrossEntropyFuncOptions().reduction() == kMean);
  const F::BinaryCrossEntropyWithLogitsFuncOptions bl;
  CHECK((!bl.weight().defined() && !bl.pos_weight().defined() && bl.reduction() == kMean));
  CHECK((F::CosineEmbeddingLossFuncOptions().margin() == 0.0 &&
         F::CosineEmbeddingLossFuncOptions().reduction() == kMean));
  const F::CrossEntropyFuncOptions ce;
  CHECK(
      (!ce.weight().defined() && ce.ignore_index() == -100 && ce.reduction() == kMean && ce.label_smoothing() == 0.0));
  CHECK(
      (F::HingeEmbeddingLossFuncOptions().margin() == 1.0 && F::HingeEmbeddingLossFuncOptions().reduction() == kMean));
  CHECK((F::HuberLossFuncOptions().delta() == 1.0 && F::HuberLossFuncOptions().reduction() == kMean));
  CHECK((!F::KLDivFuncOptions().log_target() && F::KLDivFuncOptions().reduction() == kMean));
  CHECK(F::L1LossFuncOptions().reduction() == kMean);
  CHECK(F::MSELossFuncOptions().reduction() == kMean);
  CHECK((F::MarginRankingLossFuncOptions().margin() == 0.0 && F::MarginRankingLossFuncOptions().reduction() == kMean));
  const F::MultiMarginLossFuncOptions mm;
  CHECK((mm.p() == 1 && mm.margin() == 1.0 && !mm.weight().defined() && mm.reduction() == kMean));
  CHECK(F::MultilabelMarginLossFuncOptions().reduction() == kMean);
  CHECK((!F::MultilabelSoftMarginLossFuncOptions().weight().defined() &&
         F::MultilabelSoftMarginLossFuncOptions().reduction() == kMean));
  const F::NLLLossFuncOptions nll;
  CHECK((!nll.weight().defined() && nll.ignore_index() == -100 && nll.reduction() == kMean));
  const F::PoissonNLLLossFuncOptions pn;
  CHECK((pn.log_input() && !pn.full() && pn.eps() == 1e-8 && pn.reduction() == kMean));
  CHECK((F::SmoothL1LossFuncOptions().beta() == 1.0 && F::SmoothL1LossFuncOptions().reduction() == kMean));
  CHECK(F::SoftMarginLossFuncOptions().reduction() == kMean);
  const F::TripletMarginLossFuncOptions tm;
  CHECK((tm.margin() == 1.0 && tm.p() == 2.0 && tm.eps() == 1e-6 && !tm.swap() && tm.reduction() == kMean));
  // LibTorch's constructors from a reduction (the others are built with setters only).
  CHECK(F::L1LossFuncOptions(kNone).reduction() == kNone);
  CHECK(F::MSELossFuncOptions(kSum).reduction() == kSum);
  CHECK(F::SoftMarginLossFuncOptions(kNone).reduction() == kNone);
  CHECK(F::MultilabelMarginLossFuncOptions(kSum).reduction() == kSum);
  CHECK(F::SmoothL1LossFuncOptions(kNone).reduction() == kNone);
  CHECK(F::HuberLossFuncOptions(kSum).reduction() == kSum);
  CHECK(F::KLDivFuncOptions(kBatchMean).reduction() == kBatchMean);
  // Default options give the positional call with its defaults (the same loss).
  const Tensor x = f64({0.3, -1.2, 0.8, 1.5, 0.1, -0.4}, {2, 3}), t = f64({0.1, 0.4, -0.9, 1.0, -0.6, 0.3}, {2, 3});
  const Tensor cls = i64({2, 0}), y = f64({1, -1}), y2 = f64({1, -1, 1, -1, -1, 1}, {2, 3});
  const Tensor pr = f64({0.2, 0.7, 0.45, 0.9, 0.15, 0.6}, {2, 3}), lab = i64({2, -1, 0, 1, 0, -1}, {2, 3});
  const std::vector<std::pair<Tensor, Tensor>> same{
      {F::nll_loss(x, cls, F::NLLLossFuncOptions()), F::nll_loss(x, cls)},
      {F::cross_entropy(x, cls, F::CrossEntropyFuncOptions()), F::cross_entropy(x, cls)},
      {F::mse_loss(x, t, F::MSELossFuncOptions()), F::mse_loss(x, t)},
      {F::l1_loss(x, t, F::L1LossFuncOptions()), F::l1_loss(x, t)},
      {F::binary_cross_entropy_with_logits(x, pr, F::BinaryCrossEntropyWithLogitsFuncOptions()),
       F::binary_cross_entropy_with_logits(x, pr)},
      {F::binary_cross_entropy(pr, pr.flip({0}), F::BinaryCrossEntropyFuncOptions()),
       F::binary_cross_entropy(pr, pr.flip({0}))},
      {F::smooth_l1_loss(x, t, F::SmoothL1LossFuncOptions()), F::smooth_l1_loss(x, t)},
      {F::huber_loss(x, t, F::HuberLossFuncOptions()), F::huber_loss(x, t)},
      {F::kl_div(x, pr, F::KLDivFuncOptions()), F::kl_div(x, pr)},
      {F::soft_margin_loss(x, y2, F::SoftMarginLossFuncOptions()), F::soft_margin_loss(x, y2)},
      {F::margin_ranking_loss(x, t, y2, F::MarginRankingLossFuncOptions()), F::margin_ranking_loss(x, t, y2)},
      {F::hinge_embedding_loss(x, y2, F::HingeEmbeddingLossFuncOptions()), F::hinge_embedding_loss(x, y2)},
      {F::cosine_embedding_loss(x, t, y, F::CosineEmbeddingLossFuncOptions()), F::cosine_embedding_loss(x, t, y)},
      {F::triplet_margin_loss(x, t, pr, F::TripletMarginLossFuncOptions()), F::triplet_margin_loss(x, t, pr)},
      {F::multi_margin_loss(x, cls, F::MultiMarginLossFuncOptions()), F::multi_margin_loss(x, cls)},
      {F::multilabel_margin_loss(x, lab, F::MultilabelMarginLossFuncOptions()), F::multilabel_margin_loss(x, lab)},
      {F::multilabel_soft_margin_loss(x, y2, F::MultilabelSoftMarginLossFuncOptions()),
       F::multilabel_soft_margin_loss(x, y2)},
      {F::poisson_nll_loss(x, t, F::PoissonNLLLossFuncOptions()), F::poisson_nll_loss(x, t)},
  };
  for (size_t i = 0; i < same.size(); ++i) {
    INFO("call " << i);
    CHECK(doubles(same[i].first) == doubles(same[i].second));
  }
  // `{}` in the reduction's place is LibTorch's default options, kMean (Reduction{} is Mean).
  STATIC_REQUIRE(Reduction{} == kMean);
  CHECK(doubles(F::mse_loss(x, t, {})) == doubles(F::mse_loss(x, t, F::MSELossFuncOptions())));
  CHECK(F::mse_loss(x, t, {}).dim() == 0);
  CHECK(doubles(F::l1_loss(x, t, {})) == doubles(F::l1_loss(x, t)));
}

TEST_CASE("func options loss: bad options are typed errors naming the loss", "[nn][loss]") {
  using wick::test::expect_error;
  const Tensor x = f64({0.3, -1.2, 0.8, 1.5, 0.1, -0.4}, {2, 3}), t = f64({0.1, 0.4, -0.9, 1.0, -0.6, 0.3}, {2, 3});
  const Tensor cls = i64({2, 0}), y = f64({1, -1}), pr = f64({0.2, 0.7, 0.45, 0.9, 0.15, 0.6}, {2, 3});
  // kBatchMean is kl_div's only: LibTorch's reduction variants refuse it when compiling.
  const std::vector<std::pair<std::string, std::function<void()>>> batchmean{
      {"nll_loss", [&] { F::nll_loss(x, cls, F::NLLLossFuncOptions().reduction(kBatchMean)); }},
      {"cross_entropy", [&] { F::cross_entropy(x, cls, F::CrossEntropyFuncOptions().reduction(kBatchMean)); }},
      {"mse_loss", [&] { F::mse_loss(x, t, F::MSELossFuncOptions(kBatchMean)); }},
      {"l1_loss", [&] { F::l1_loss(x, t, F::L1LossFuncOptions(kBatchMean)); }},
      {"binary_cross_entropy_with_logits",
       [&] {
         F::binary_cross_entropy_with_logits(x, pr, F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(kBatchMean));
       }},
      {"binary_cross_entropy",
       [&] { F::binary_cross_entropy(pr, pr, F::BinaryCrossEntropyFuncOptions().reduction(kBatchMean)); }},
      {"smooth_l1_loss", [&] { F::smooth_l1_loss(x, t, F::SmoothL1LossFuncOptions(kBatchMean)); }},
      {"huber_loss", [&] { F::huber_loss(x, t, F::HuberLossFuncOptions(kBatchMean)); }},
      {"soft_margin_loss", [&] { F::soft_margin_loss(x, t.sign(), F::SoftMarginLossFuncOptions(kBatchMean)); }},
      {"margin_ranking_loss",
       [&] { F::margin_ranking_loss(x, t, t.sign(), F::MarginRankingLossFuncOptions().reduction(kBatchMean)); }},
      {"hinge_embedding_loss",
       [&] { F::hinge_embedding_loss(x, t.sign(), F::HingeEmbeddingLossFuncOptions().reduction(kBatchMean)); }},
      {"cosine_embedding_loss",
       [&] { F::cosine_embedding_loss(x, t, y, F::CosineEmbeddingLossFuncOptions().reduction(kBatchMean)); }},
      {"triplet_margin_loss",
       [&] { F::triplet_margin_loss(x, t, pr, F::TripletMarginLossFuncOptions().reduction(kBatchMean)); }},
      {"multi_margin_loss",
       [&] { F::multi_margin_loss(x, cls, F::MultiMarginLossFuncOptions().reduction(kBatchMean)); }},
      {"multilabel_margin_loss",
       [&] {
         F::multilabel_margin_loss(x, i64({0, -1, 0, 1, 2, -1}, {2, 3}),
                                   F::MultilabelMarginLossFuncOptions(kBatchMean));
       }},
      {"multilabel_soft_margin_loss",
       [&] { F::multilabel_soft_margin_loss(x, pr, F::MultilabelSoftMarginLossFuncOptions().reduction(kBatchMean)); }},
      {"poisson_nll_loss", [&] { F::poisson_nll_loss(x, t, F::PoissonNLLLossFuncOptions().reduction(kBatchMean)); }},
  };
  for (const auto& [op, call] : batchmean) {
    INFO(op);
    expect_error<ValueError>(call, {op + ":", "batchmean"});
  }
  // An option out of range, refused by the positional function.
  expect_error<ValueError>([&] { F::cross_entropy(x, cls, F::CrossEntropyFuncOptions().label_smoothing(1.5)); },
                           {"cross_entropy", "label_smoothing"});
  expect_error<ValueError>([&] { F::huber_loss(x, t, F::HuberLossFuncOptions().delta(0.0)); }, {"huber_loss", "delta"});
  expect_error<ValueError>([&] { F::multi_margin_loss(x, cls, F::MultiMarginLossFuncOptions().p(3)); },
                           {"multi_margin_loss", "p"});
  // LibTorch 1.13's trailing beta next to a different options.beta(): which one is meant is unclear.
  expect_error<ValueError>([&] { F::smooth_l1_loss(x, t, F::SmoothL1LossFuncOptions().beta(0.3), 0.5); },
                           {"smooth_l1_loss", "two different betas", "0.3", "0.5"});
}
