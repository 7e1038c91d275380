// The loss modules (wick/nn/modules/loss.h): each equals its functional with the same options on
// every test device, prints as PyTorch 1.13's repr, holds its class weights as buffers as
// PyTorch registers them (in state_dict and named_buffers, moved by to()), takes the generic call,
// and refuses bad options when built. Then float64 gradchecks and double-backward checks of the
// losses of functional_loss.h (the PyTorch values are in loss_test.cpp).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/gradcheck.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using TL = std::vector<Tensor>;
using wick::test::check_double_backward;

namespace {
const TensorOptions kF64(kFloat64);

Tensor rnd(IntArrayRef shape) { return wick::randn(shape, kF64.requires_grad()); }
// Probabilities kept away from 0 and 1, so that central differences stay inside (0, 1).
Tensor prob(IntArrayRef shape) { return (wick::rand(shape, kF64) * 0.8 + 0.1).requires_grad_(true); }
Tensor labels(std::vector<double> v) { return wick::tensor(v, {static_cast<int64_t>(v.size())}, kF64); }

// Exactly equal: the module runs the functional's code.
void check_same(const Tensor& a, const Tensor& b) { CHECK_ALLCLOSE(a, b, 0.0, 0.0); }
}  // namespace

TEST_CASE("loss modules equal their functionals on every device", "[nn][loss]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const TensorOptions o = kF64.device(dev);
    const Tensor x = wick::randn({4, 3}, o), t = wick::randn({4, 3}, o);
    const Tensor p = wick::rand({4, 3}, o) * 0.8 + 0.1, q = wick::rand({4, 3}, o);
    const Tensor cls = wick::tensor(std::vector<int64_t>{0, 2, 1, 2}, {4}, kInt64).to(dev);
    const Tensor w = wick::tensor({0.5, 2.0, 1.5}, kF64), pw = wick::tensor({3.0, 1.0, 0.5}, kF64);
    const Tensor y = wick::tensor({1.0, -1.0, -1.0, 1.0}, kF64).to(dev);
    const Tensor y2 = y.reshape({4, 1}).expand({4, 3}).contiguous();
    for (Reduction r : {kNone, kMean, kSum}) {
      INFO(reduction_name(r));
      check_same(MSELoss(r)(x, t), F::mse_loss(x, t, r));
      check_same(L1Loss(L1LossOptions().reduction(r))(x, t), F::l1_loss(x, t, r));
      NLLLoss nll(NLLLossOptions().weight(w.clone()).ignore_index(1).reduction(r));
      nll->to(dev);
      check_same(nll(x, cls), F::nll_loss(x, cls, w.to(dev), r, 1));
      CrossEntropyLoss ce(CrossEntropyLossOptions().weight(w.clone()).label_smoothing(0.2).reduction(r));
      ce->to(dev);
      check_same(ce(x, cls), F::cross_entropy(x, cls, w.to(dev), r, -100, 0.2));
      check_same(CrossEntropyLoss(CrossEntropyLossOptions().reduction(r))(x, cls), F::cross_entropy(x, cls, {}, r));
      BCEWithLogitsLoss bl(BCEWithLogitsLossOptions().weight(w.clone()).pos_weight(pw.clone()).reduction(r));
      bl->to(dev);
      check_same(bl(x, q), F::binary_cross_entropy_with_logits(x, q, w.to(dev), r, pw.to(dev)));
      BCELoss bce(BCELossOptions().weight(w.clone()).reduction(r));
      bce->to(dev);
      check_same(bce(p, q), F::binary_cross_entropy(p, q, w.to(dev), r));
      check_same(SmoothL1Loss(SmoothL1LossOptions(r).beta(0.3))(x, t), F::smooth_l1_loss(x, t, r, 0.3));
      check_same(HuberLoss(HuberLossOptions(r).delta(0.7))(x, t), F::huber_loss(x, t, r, 0.7));
      check_same(KLDivLoss(KLDivLossOptions(r).log_target(true))(x, t), F::kl_div(x, t, r, true));
      check_same(SoftMarginLoss(r)(x, y2), F::soft_margin_loss(x, y2, r));
      check_same(MarginRankingLoss(MarginRankingLossOptions().margin(0.5).reduction(r))(x, t, y2),
                 F::margin_ranking_loss(x, t, y2, 0.5, r));
      check_same(HingeEmbeddingLoss(HingeEmbeddingLossOptions().margin(0.5).reduction(r))(x, y2),
                 F::hinge_embedding_loss(x, y2, 0.5, r));
      check_same(CosineEmbeddingLoss(CosineEmbeddingLossOptions().margin(0.1).reduction(r))(x, t, y),
                 F::cosine_embedding_loss(x, t, y, 0.1, r));
    }
    check_same(KLDivLoss(kBatchMean)(x, q), F::kl_div(x, q, kBatchMean));
    // The defaults are PyTorch's: mean, beta 1, delta 1, margin 1 for the hinge, 0 for the others.
    check_same(SmoothL1Loss()(x, t), F::smooth_l1_loss(x, t, kMean, 1.0));
    check_same(HuberLoss()(x, t), F::huber_loss(x, t, kMean, 1.0));
    check_same(HingeEmbeddingLoss()(x, y2), F::hinge_embedding_loss(x, y2, 1.0, kMean));
    check_same(MarginRankingLoss()(x, t, y2), F::margin_ranking_loss(x, t, y2, 0.0, kMean));
    // The generic call (forward_value) takes the two or three tensors.
    check_same(MSELoss()->forward_value({Value(x), Value(t)}).tensor(), F::mse_loss(x, t));
    check_same(CosineEmbeddingLoss()->forward_value({Value(x), Value(t), Value(y)}).tensor(),
               F::cosine_embedding_loss(x, t, y));
  }
}

TEST_CASE("loss modules print as PyTorch and hold their weights as buffers", "[nn][loss]") {
  CHECK(MSELoss()->to_string() == "MSELoss()");
  CHECK(L1Loss()->to_string() == "L1Loss()");
  CHECK(NLLLoss()->to_string() == "NLLLoss()");
  CHECK(CrossEntropyLoss(CrossEntropyLossOptions().label_smoothing(0.1))->to_string() == "CrossEntropyLoss()");
  CHECK(BCEWithLogitsLoss()->to_string() == "BCEWithLogitsLoss()");
  CHECK(BCELoss()->to_string() == "BCELoss()");
  CHECK(SmoothL1Loss()->to_string() == "SmoothL1Loss()");
  CHECK(HuberLoss()->to_string() == "HuberLoss()");
  CHECK(KLDivLoss()->to_string() == "KLDivLoss()");
  CHECK(SoftMarginLoss()->to_string() == "SoftMarginLoss()");
  CHECK(MarginRankingLoss()->to_string() == "MarginRankingLoss()");
  CHECK(HingeEmbeddingLoss()->to_string() == "HingeEmbeddingLoss()");
  CHECK(CosineEmbeddingLoss()->to_string() == "CosineEmbeddingLoss()");

  // PyTorch 1.13: no weight, no buffers and an empty state_dict; a weight is the buffer "weight".
  CHECK(CrossEntropyLoss()->state_dict().empty());
  CHECK(CrossEntropyLoss()->named_buffers().empty());
  CHECK(MSELoss()->state_dict().empty());
  const Tensor w = wick::tensor({1.0, 2.0, 3.0}, kF64), pw = wick::tensor({2.0, 2.0, 2.0}, kF64);
  CrossEntropyLoss ce(CrossEntropyLossOptions().weight(w));
  CHECK(ce->state_dict().keys() == std::vector<std::string>{"weight"});
  CHECK(ce->parameters().empty());
  CHECK_ALLCLOSE(ce->state_dict()["weight"], w, 0.0, 0.0);
  BCEWithLogitsLoss bl(BCEWithLogitsLossOptions().weight(w).pos_weight(pw));
  CHECK(bl->state_dict().keys() == std::vector<std::string>{"weight", "pos_weight"});
  BCEWithLogitsLoss only_pos(BCEWithLogitsLossOptions().pos_weight(pw));
  CHECK(only_pos->named_buffers().keys() == std::vector<std::string>{"pos_weight"});
  CHECK(NLLLoss(NLLLossOptions().weight(w))->named_buffers().keys() == std::vector<std::string>{"weight"});
  CHECK(BCELoss(BCELossOptions().weight(w))->named_buffers().keys() == std::vector<std::string>{"weight"});

  // Inside a model the buffer is "loss.weight", and load_state_dict writes it.
  Sequential model;
  model->push_back("loss", NLLLoss(NLLLossOptions().weight(w.clone())));
  CHECK(model->state_dict().keys() == std::vector<std::string>{"loss.weight"});
  StateDict sd;
  sd.insert("loss.weight", wick::tensor({5.0, 6.0, 7.0}, kF64));
  model->load_state_dict(sd);
  CHECK(wick::test::values(model->named_buffers()["loss.weight"]) == std::vector<double>{5.0, 6.0, 7.0});

  // to() moves the buffer, and forward follows it (a weight on another device would be refused).
  CrossEntropyLoss moved(CrossEntropyLossOptions().weight(w.clone()));
  moved->to(Device("cpu:1"));
  CHECK(moved->weight().device() == Device("cpu:1"));
  const Tensor x = wick::randn({2, 3}, kF64.device(Device("cpu:1")));
  const Tensor t = wick::tensor(std::vector<int64_t>{2, 0}, {2}, kInt64).to(Device("cpu:1"));
  CHECK(moved(x, t).device() == Device("cpu:1"));
}

TEST_CASE("loss modules refuse bad options when built", "[nn][errors][loss]") {
  CHECK_THROWS_AS(MSELoss(kBatchMean), ValueError);
  CHECK_THROWS_WITH(CrossEntropyLoss(CrossEntropyLossOptions().reduction(kBatchMean)),
                    Contains("CrossEntropyLoss") && Contains("batchmean"));
  CHECK_THROWS_WITH(CrossEntropyLoss(CrossEntropyLossOptions().label_smoothing(1.5)),
                    Contains("CrossEntropyLoss") && Contains("label_smoothing"));
  CHECK_THROWS_WITH(SmoothL1Loss(SmoothL1LossOptions().beta(-1.0)), Contains("SmoothL1Loss") && Contains("beta"));
  CHECK_THROWS_WITH(HuberLoss(HuberLossOptions().delta(0.0)), Contains("HuberLoss") && Contains("delta"));
  CHECK_THROWS_AS(NLLLoss(NLLLossOptions().weight(wick::ones({3}, kInt64))), TypeError);
  CHECK_NOTHROW(KLDivLoss(kBatchMean));
}

TEST_CASE("gradcheck and double backward of the losses in float64", "[nn][gradcheck][loss]") {
  const Tensor y = labels({1.0, -1.0, -1.0, 1.0, 1.0});
  const Tensor hinge_y = labels({1.0, -1.0, 0.0, 1.0, -1.0});
  for (Reduction r : {kNone, kMean, kSum}) {
    INFO(reduction_name(r));
    // binary_cross_entropy in input and target (the weight multiplies the node's output).
    auto bce = [r](const TL& x) { return TL{F::binary_cross_entropy(x[0], x[1], x[2], r)}; };
    CHECK_GRADCHECK(bce, TL{prob({3, 4}), prob({3, 4}), wick::rand({4}, kF64).requires_grad_(true)});
    check_double_backward(bce, TL{prob({3, 4}), prob({3, 4}), wick::rand({4}, kF64) + 0.5});
    // smooth_l1 and huber away from their kinks (|d| == beta, delta, 0) is smooth.
    auto smooth = [r](const TL& x) { return TL{F::smooth_l1_loss(x[0], x[1], r, 0.8)}; };
    CHECK_GRADCHECK(smooth, TL{rnd({3, 4}), rnd({3, 4})});
    check_double_backward(smooth, TL{rnd({3, 4}), rnd({3, 4})});
    auto huber = [r](const TL& x) { return TL{F::huber_loss(x[0], x[1], r, 0.6)}; };
    CHECK_GRADCHECK(huber, TL{rnd({3, 4}), rnd({3, 4})});
    check_double_backward(huber, TL{rnd({3, 4}), rnd({3, 4})});
    for (bool log_target : {false, true}) {
      auto kl = [r, log_target](const TL& x) { return TL{F::kl_div(x[0], x[1], r, log_target)}; };
      const Tensor target = log_target ? rnd({3, 4}) : prob({3, 4});
      CHECK_GRADCHECK(kl, TL{rnd({3, 4}), target});
      check_double_backward(kl, TL{rnd({3, 4}), target});
    }
    auto soft = [r, y](const TL& x) { return TL{F::soft_margin_loss(x[0], y, r)}; };
    CHECK_GRADCHECK(soft, TL{rnd({5})});
    check_double_backward(soft, TL{rnd({5})});
    auto rank = [r, y](const TL& x) { return TL{F::margin_ranking_loss(x[0], x[1], y, 0.3, r)}; };
    CHECK_GRADCHECK(rank, TL{rnd({5}), rnd({5})});
    auto hinge = [r, hinge_y](const TL& x) { return TL{F::hinge_embedding_loss(x[0], hinge_y, 0.5, r)}; };
    CHECK_GRADCHECK(hinge, TL{rnd({5})});
    auto cosine = [r](const TL& x) {
      return TL{F::cosine_embedding_loss(x[0], x[1], labels({1.0, -1.0, 1.0, -1.0}), -0.5, r)};
    };
    CHECK_GRADCHECK(cosine, TL{rnd({4, 3}), rnd({4, 3})});
    check_double_backward(cosine, TL{rnd({4, 3}), rnd({4, 3})});
  }
  auto batchmean = [](const TL& x) { return TL{F::kl_div(x[0], x[1], kBatchMean)}; };
  CHECK_GRADCHECK(batchmean, TL{rnd({3, 4}), prob({3, 4})});
}
