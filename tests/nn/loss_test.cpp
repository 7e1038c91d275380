// The losses of functional_loss.h against PyTorch 1.13 (generate.py's loss_cases, selected by op
// name): values and input gradients under every reduction, at rtol 1e-12 (values) and 1e-10
// (gradients) in float64, on every test device, edge cases included (binary_cross_entropy at 0
// and 1, smooth_l1_loss at |d| == beta and beta 0, huber_loss at |d| == delta, kl_div's
// batchmean and zero targets); a few values worked by hand; and the typed errors, each naming the
// loss. The modules and the gradchecks are in loss_modules_test.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "support/small_tensors.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::OracleCase;

namespace {
constexpr double kOutRtol = 1e-12, kGradRtol = 1e-10, kAtol = 1e-13;
const TensorOptions kF64(kFloat64);

using wick::test::f64;

// The case's loss on its inputs x (already on the device), read from the op name and kwargs.
Tensor run_loss(const OracleCase& c, const std::vector<Tensor>& x) {
  const Reduction red = reduction_from_string(c.kwargs.at("reduction").get<std::string>());
  if (c.op == "binary_cross_entropy") return F::binary_cross_entropy(x[0], x[1], x.size() > 2 ? x[2] : Tensor(), red);
  if (c.op == "smooth_l1_loss") return F::smooth_l1_loss(x[0], x[1], red, c.kw<double>("beta", 1.0));
  if (c.op == "huber_loss") return F::huber_loss(x[0], x[1], red, c.kw<double>("delta", 1.0));
  if (c.op == "kl_div") return F::kl_div(x[0], x[1], red, c.kw<bool>("log_target", false));
  if (c.op == "soft_margin_loss") return F::soft_margin_loss(x[0], x[1], red);
  if (c.op == "margin_ranking_loss") return F::margin_ranking_loss(x[0], x[1], x[2], c.kw<double>("margin", 0.0), red);
  if (c.op == "hinge_embedding_loss") return F::hinge_embedding_loss(x[0], x[1], c.kw<double>("margin", 1.0), red);
  if (c.op == "cosine_embedding_loss")
    return F::cosine_embedding_loss(x[0], x[1], x[2], c.kw<double>("margin", 0.0), red);
  return {};
}

template <class E>
void check_error(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
    FAIL("no error");
  } catch (const E& e) {
    for (const std::string& p : parts) CHECK_THAT(e.what(), Contains(p));
  }
}
}  // namespace

TEST_CASE("losses match PyTorch 1.13 forward and backward under every reduction on every device",
          "[nn][oracle][loss]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "binary_cross_entropy" && c.op != "smooth_l1_loss" && c.op != "huber_loss" && c.op != "kl_div" &&
        c.op != "soft_margin_loss" && c.op != "margin_ranking_loss" && c.op != "hinge_embedding_loss" &&
        c.op != "cosine_embedding_loss")
      continue;
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const std::vector<Tensor> x = c.leaves(dev);
      const Tensor out = run_loss(c, x);
      REQUIRE(out.sizes() == c.out.sizes());
      wick::test::check_oracle_case(c, out, x, dev, kOutRtol, kGradRtol, kAtol);
    }
    ++seen[c.op + " " + c.kwargs.at("reduction").get<std::string>()];
    if (c.op == "binary_cross_entropy" && !wick::test::values(c.inputs[0]).empty() &&
        wick::test::values(c.inputs[0])[0] == 0.0)
      ++seen["bce at 0 and 1"];
    if (c.op == "smooth_l1_loss" && c.kw<double>("beta", 1.0) == 0.0) ++seen["beta 0"];
  }
  for (const char* op : {"binary_cross_entropy", "smooth_l1_loss", "huber_loss", "kl_div", "soft_margin_loss",
                         "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss"})
    for (const char* red : {"none", "mean", "sum"}) {
      INFO(op << " " << red);
      CHECK(seen[std::string(op) + " " + red] >= 1);
    }
  CHECK(seen["kl_div batchmean"] >= 1);
  CHECK(seen["bce at 0 and 1"] == 3);
  CHECK(seen["cosine_embedding_loss sum"] == 4);
  CHECK(seen["beta 0"] == 3);
}

TEST_CASE("losses by hand: the clamped log of binary_cross_entropy and the kinks of smooth_l1 and huber",
          "[nn][loss]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    // log(0) is clamped at -100: a confident wrong answer costs exactly 100.
    Tensor x = f64({0.0, 1.0, 0.5}, {3}, dev).requires_grad_(true);
    Tensor t = f64({1.0, 0.0, 1.0}, {3}, dev);
    Tensor l = F::binary_cross_entropy(x, t, {}, kNone);
    CHECK_ALLCLOSE(l, f64({100.0, 100.0, std::log(2.0)}, {3}), 1e-15, 0.0);
    l.sum().backward();
    // PyTorch's (x - t) / max(x (1 - x), eps), eps the float 1e-12: about -1e12 at 0 and 1e12 at
    // 1; (0.5 - 1) / 0.25 = -2.
    const double eps = static_cast<double>(1e-12f);
    CHECK_ALLCLOSE(x.grad(), f64({-1.0 / eps, 1.0 / eps, -2.0}, {3}), 1e-15, 0.0);
    // With a weight broadcast over rows and the mean.
    Tensor x2 = f64({0.25, 0.5, 0.75, 0.5}, {2, 2}, dev), t2 = f64({0.0, 1.0, 1.0, 0.0}, {2, 2}, dev);
    Tensor w = f64({2.0, 1.0}, {2}, dev);
    const double expect = (2 * -std::log(0.75) + -std::log(0.5) + 2 * -std::log(0.75) + -std::log(0.5)) / 4;
    CHECK_ALLCLOSE(F::binary_cross_entropy(x2, t2, w), f64({expect}, {}), 1e-14, 0.0);

    // smooth_l1 at |d| == beta is 0.5 * beta from either branch; huber at |d| == delta is 0.5 * delta^2.
    Tensor d = f64({0.5, -0.5, 2.0, 0.0}, {4}, dev), z = f64({0.0, 0.0, 0.0, 0.0}, {4}, dev);
    CHECK_ALLCLOSE(F::smooth_l1_loss(d, z, kNone, 0.5), f64({0.25, 0.25, 1.75, 0.0}, {4}), 1e-15, 0.0);
    CHECK_ALLCLOSE(F::smooth_l1_loss(d, z, kSum, 0.0), f64({3.0}, {}), 1e-15, 0.0);
    // beta 0 is l1_loss, gradient included: 0 at d == 0, where PyTorch 1.13's kernel gives -1 to
    // both input and target (docs/modules.md).
    Tensor dg = f64({0.5, -0.5, 0.0}, {3}, dev).requires_grad_(true), zg = f64({0.0, 0.0, 0.0}, {3}, dev);
    zg.requires_grad_(true);
    F::smooth_l1_loss(dg, zg, kSum, 0.0).backward();
    CHECK_ALLCLOSE(dg.grad(), f64({1.0, -1.0, 0.0}, {3}), 0.0, 0.0);
    CHECK_ALLCLOSE(zg.grad(), f64({-1.0, 1.0, 0.0}, {3}), 0.0, 0.0);
    CHECK_ALLCLOSE(F::huber_loss(d, z, kNone, 0.5), f64({0.125, 0.125, 0.875, 0.0}, {4}), 1e-15, 0.0);
    // kl_div: batchmean is the sum over the batch size; a zero target adds nothing.
    Tensor logp = f64({-1.0, -2.0, -0.5, -3.0}, {2, 2}, dev), q = f64({0.0, 1.0, 0.5, 0.5}, {2, 2}, dev);
    const double s = (0.0) + (0.0 + 2.0) + 0.5 * (std::log(0.5) + 0.5) + 0.5 * (std::log(0.5) + 3.0);
    CHECK_ALLCLOSE(F::kl_div(logp, q, kBatchMean), f64({s / 2}, {}), 1e-14, 0.0);
    CHECK_ALLCLOSE(F::kl_div(logp, q, kMean), f64({s / 4}, {}), 1e-14, 0.0);
  }
}

TEST_CASE("losses refuse bad input with typed errors that name the loss", "[nn][errors][loss]") {
  Tensor a = wick::rand({2, 3}, kF64), b = wick::rand({3, 2}, kF64), y = f64({1.0, -1.0}, {2});
  // Shapes that differ: ValueError with both shapes.
  check_error<ValueError>([&] { F::binary_cross_entropy(a, b); }, {"binary_cross_entropy", "[2, 3]", "[3, 2]"});
  check_error<ValueError>([&] { F::smooth_l1_loss(a, b); }, {"smooth_l1_loss", "[2, 3]", "[3, 2]"});
  check_error<ValueError>([&] { F::huber_loss(a, b); }, {"huber_loss", "differ in shape"});
  check_error<ValueError>([&] { F::kl_div(a, b); }, {"kl_div", "[2, 3]"});
  check_error<ValueError>([&] { F::soft_margin_loss(a, b); }, {"soft_margin_loss", "[3, 2]"});
  check_error<ValueError>([&] { F::margin_ranking_loss(a, a, b); }, {"margin_ranking_loss", "target [3, 2]"});
  check_error<ValueError>([&] { F::hinge_embedding_loss(a, b); }, {"hinge_embedding_loss", "[3, 2]"});
  check_error<ValueError>(
      [&] {
        F::cosine_embedding_loss(a, a, f64({1.0, 1.0, 1.0}, {3}));
      },
      {"cosine_embedding_loss", "[N, D] with target [N]", "[2, 3]", "[3]"});
  check_error<ValueError>(
      [&] {
        F::cosine_embedding_loss(a, a, f64({1.0, 1.0}, {2, 1}));
      },
      {"cosine_embedding_loss", "[2, 1]"});
  check_error<ValueError>([&] { F::mse_loss(a, b); }, {"mse_loss", "[2, 3]", "[3, 2]"});
  // Reductions: batchmean is kl_div's only; an unknown name is refused when parsed.
  check_error<ValueError>([&] { F::mse_loss(a, a, kBatchMean); }, {"mse_loss", "batchmean", "kl_div"});
  check_error<ValueError>([&] { F::binary_cross_entropy(a, a, {}, kBatchMean); }, {"binary_cross_entropy"});
  check_error<ValueError>([&] { F::cross_entropy(a, y.to(kInt64).abs(), {}, kBatchMean); }, {"cross_entropy"});
  check_error<ValueError>([&] { F::huber_loss(a, a, static_cast<Reduction>(7)); }, {"huber_loss", "7"});
  check_error<ValueError>([] { reduction_from_string("average"); }, {"average", "batchmean"});
  CHECK(reduction_from_string("batchmean") == kBatchMean);
  CHECK(std::string(reduction_name(kBatchMean)) == "batchmean");
  // Options out of range.
  check_error<ValueError>([&] { F::smooth_l1_loss(a, a, kMean, -0.1); }, {"smooth_l1_loss", "beta", "-0.1"});
  check_error<ValueError>([&] { F::huber_loss(a, a, kMean, 0.0); }, {"huber_loss", "delta"});
  // binary_cross_entropy wants probabilities.
  check_error<ValueError>([&] { F::binary_cross_entropy(a * 2.0 - 0.5, a); },
                          {"binary_cross_entropy", "[0, 1]", "binary_cross_entropy_with_logits"});
  check_error<ValueError>(
      [&] {
        F::binary_cross_entropy(a, a, f64({1.0, 2.0}, {2}));
      },
      {"binary_cross_entropy", "weight [2]", "broadcast"});
  // Dtypes: an integer input, a target of another dtype, a label target that is neither.
  Tensor ints = wick::zeros({2, 3}, kInt64);
  check_error<TypeError>([&] { F::smooth_l1_loss(ints, ints); }, {"smooth_l1_loss", "int64"});
  check_error<TypeError>([&] { F::kl_div(a, a.to(kFloat32)); }, {"kl_div", "float32", "float64"});
  check_error<TypeError>([&] { F::binary_cross_entropy(a, a, a.to(kFloat32)); }, {"binary_cross_entropy", "weight"});
  check_error<TypeError>([&] { F::hinge_embedding_loss(a, a.to(kBool)); }, {"hinge_embedding_loss", "bool"});
  check_error<TypeError>([&] { F::margin_ranking_loss(a, a.to(kFloat32), a); }, {"margin_ranking_loss", "input2"});
  // Devices.
  check_error<ValueError>([&] { F::huber_loss(a, a.to(Device("cpu:1"))); }, {"huber_loss", "cpu:1"});
  // nll_loss: a target out of range names it.
  check_error<IndexError>(
      [&] {
        F::nll_loss(a, wick::tensor(std::vector<int64_t>{0, 3}, {2}, kInt64));
      },
      {"nll_loss", "target value 3"});
  // Integer labels are taken.
  CHECK_ALLCLOSE(F::hinge_embedding_loss(a, y.to(kInt64).reshape({2, 1}).expand({2, 3}).contiguous()),
                 F::hinge_embedding_loss(a, y.reshape({2, 1}).expand({2, 3}).contiguous()), 0.0, 0.0);
}
