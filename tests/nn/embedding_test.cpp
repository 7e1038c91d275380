// F::embedding's options (max_norm, norm_type, scale_grad_by_freq, padding_idx), F::embedding_bag
// in every mode, and the Embedding and EmbeddingBag layers: the PyTorch oracle's cases
// (generate.py's embedding_cases: outputs, the weight after max_norm's renorm, the gradients of
// weight and per_sample_weights) on every test device; float64 gradchecks; small cases worked by
// hand; every bad argument as a typed error that leaves the weight untouched; prints as PyTorch's.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "support/small_tensors.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::OracleCase;
using TL = std::vector<Tensor>;

namespace {
const TensorOptions kF64(kFloat64);

Tensor ids(const std::vector<int64_t>& v, Device dev = kCPU) {
  return tensor(v, {static_cast<int64_t>(v.size())}, kInt64).to(dev);
}
using wick::test::f64;
double norm_type_kw(const OracleCase& c) {
  if (!c.kwargs.contains("norm_type")) return 2.0;
  if (c.kwargs["norm_type"].is_string()) return std::numeric_limits<double>::infinity();
  return c.kwargs["norm_type"].get<double>();
}
std::optional<int64_t> opt_int(const OracleCase& c, const char* key) {
  return c.kwargs.contains(key) ? std::optional<int64_t>(c.kwargs[key].get<int64_t>()) : std::nullopt;
}
std::optional<double> opt_double(const OracleCase& c, const char* key) {
  return c.kwargs.contains(key) ? std::optional<double>(c.kwargs[key].get<double>()) : std::nullopt;
}
// The case's output layout: the lookup, flattened, then the weight after the call, flattened.
Tensor with_weight_after(const Tensor& out, const Tensor& weight) {
  return cat({reshape(out, {-1}), reshape(weight.detach().clone(), {-1})});
}
}  // namespace

TEST_CASE("embedding with max_norm, norm_type, scale_grad_by_freq and padding_idx matches PyTorch 1.13",
          "[nn][oracle][embedding]") {
  int seen = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "embedding_options") continue;
    const auto options = F::EmbeddingFuncOptions()
                             .padding_idx(opt_int(c, "padding_idx"))
                             .max_norm(opt_double(c, "max_norm"))
                             .norm_type(norm_type_kw(c))
                             .scale_grad_by_freq(c.kw<bool>("scale_grad_by_freq", false));
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const auto x = c.leaves(dev);
      const Tensor out = with_weight_after(F::embedding(x[0], x[1], options), x[1]);
      wick::test::check_oracle_case(c, out, x, dev, 1e-12, 1e-12, 1e-13);
    }
    ++seen;
  }
  CHECK(seen >= 7);
}

TEST_CASE("embedding_bag in every mode matches PyTorch 1.13", "[nn][oracle][embedding]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "embedding_bag") continue;
    const auto names = c.kwargs.at("inputs").get<std::vector<std::string>>();
    REQUIRE(names.size() == c.inputs.size());
    const std::string mode = c.kwargs.at("mode").get<std::string>();
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const auto x = c.leaves(dev);
      auto options = F::EmbeddingBagFuncOptions()
                         .mode(embedding_bag_mode_from_string(mode))
                         .include_last_offset(c.kw<bool>("include_last_offset", false))
                         .padding_idx(opt_int(c, "padding_idx"))
                         .max_norm(opt_double(c, "max_norm"))
                         .norm_type(norm_type_kw(c))
                         .scale_grad_by_freq(c.kw<bool>("scale_grad_by_freq", false));
      for (size_t j = 2; j < names.size(); ++j) {
        if (names[j] == "offsets") options.offsets(x[j]);
        if (names[j] == "per_sample_weights") options.per_sample_weights(x[j]);
      }
      const Tensor out = with_weight_after(F::embedding_bag(x[0], x[1], options), x[1]);
      wick::test::check_oracle_case(c, out, x, dev, 1e-12, 1e-12, 1e-13);
    }
    ++seen[mode];
    for (const char* k : {"include_last_offset", "padding_idx", "max_norm", "scale_grad_by_freq"})
      if (c.kwargs.contains(k)) ++seen[k];
    if (names.size() == 4 || (names.size() == 3 && names[2] == "per_sample_weights")) ++seen["per_sample_weights"];
    if (c.inputs[0].dim() == 2) ++seen["2-d"];
  }
  for (const char* k : {"sum", "mean", "max", "include_last_offset", "padding_idx", "max_norm", "scale_grad_by_freq",
                        "per_sample_weights", "2-d"}) {
    INFO(k);
    CHECK(seen[k] >= 1);
  }
}

TEST_CASE("embedding: max_norm by hand renormalizes each named row once, in place", "[nn][embedding]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    Tensor w = f64({3, 4, 0.3, 0.4, 6, 8}, {3, 2}, dev).requires_grad_(true);
    const uint32_t version = w.version();
    Tensor y = F::embedding(ids({0, 0, 1}, dev), w, F::EmbeddingFuncOptions().max_norm(1.0));
    const double s = 1.0 / (5.0 + 1e-7);  // row 0 once, rows 1 (within the bound) and 2 (not named) kept
    CHECK_ALLCLOSE(w.detach(), f64({3 * s, 4 * s, 0.3, 0.4, 6, 8}, {3, 2}), 1e-15, 0);
    CHECK_ALLCLOSE(y, f64({3 * s, 4 * s, 3 * s, 4 * s, 0.3, 0.4}, {3, 2}), 1e-15, 0);
    CHECK(w.version() > version);
    // scale_grad_by_freq: row 0 occurs twice, so each occurrence's gradient is halved.
    Tensor v = f64({1, 2, 3, 4, 5, 6}, {3, 2}, dev).requires_grad_(true);
    sum(F::embedding(ids({0, 2, 0}, dev), v, F::EmbeddingFuncOptions().scale_grad_by_freq(true))).backward();
    CHECK_ALLCLOSE(v.grad(), f64({1, 1, 0, 0, 1, 1}, {3, 2}), 0, 0);
    // padding_idx: the row keeps its value in the output but gets no gradient.
    Tensor u = f64({1, 2, 3, 4}, {2, 2}, dev).requires_grad_(true);
    Tensor z = F::embedding(ids({1, 0, 1}, dev), u, F::EmbeddingFuncOptions().padding_idx(1));
    CHECK_ALLCLOSE(z, f64({3, 4, 1, 2, 3, 4}, {3, 2}), 0, 0);
    sum(z).backward();
    CHECK_ALLCLOSE(u.grad(), f64({1, 1, 0, 0}, {2, 2}), 0, 0);
  }
}

TEST_CASE("embedding_bag by hand: sum, mean, max, empty bags, include_last_offset, 2-d input", "[nn][embedding]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor w = f64({1, 10, 2, 20, 3, 30, 4, 40}, {4, 2}, dev);
    const Tensor in = ids({0, 2, 1, 3, 2}, dev), offs = ids({0, 2, 2}, dev);  // bags {0, 2}, {}, {1, 3, 2}
    auto o = F::EmbeddingBagFuncOptions().offsets(offs);
    CHECK_ALLCLOSE(F::embedding_bag(in, w, o.mode(EmbeddingBagMode::Sum)), f64({4, 40, 0, 0, 9, 90}, {3, 2}), 0, 0);
    CHECK_ALLCLOSE(F::embedding_bag(in, w, o.mode(EmbeddingBagMode::Mean)), f64({2, 20, 0, 0, 3, 30}, {3, 2}), 1e-15,
                   0);
    CHECK_ALLCLOSE(F::embedding_bag(in, w, o.mode(EmbeddingBagMode::Max)), f64({3, 30, 0, 0, 4, 40}, {3, 2}), 0, 0);
    // include_last_offset: offsets {0, 2, 4} are two bags; index 4 (past the end) is in none.
    auto last = F::EmbeddingBagFuncOptions().offsets(ids({0, 2, 4}, dev)).include_last_offset(true);
    CHECK_ALLCLOSE(F::embedding_bag(in, w, last.mode(EmbeddingBagMode::Sum)), f64({4, 40, 6, 60}, {2, 2}), 0, 0);
    // 2-d input: each row a bag; with include_last_offset, B - 1 bags as PyTorch's arange offsets.
    const Tensor rows = ids({0, 1, 2, 3, 1, 1}, dev).reshape({3, 2});
    CHECK_ALLCLOSE(F::embedding_bag(rows, w, F::EmbeddingBagFuncOptions().mode(EmbeddingBagMode::Sum)),
                   f64({3, 30, 7, 70, 4, 40}, {3, 2}), 0, 0);
    CHECK_ALLCLOSE(F::embedding_bag(rows, w, F::EmbeddingBagFuncOptions().include_last_offset(true)),
                   f64({1.5, 15, 3.5, 35}, {2, 2}), 1e-15, 0);
    // padding_idx 2: left out of sums, means and maxima; a bag of padding only gives zeros.
    auto pad = F::EmbeddingBagFuncOptions().offsets(ids({0, 2, 3}, dev)).padding_idx(2);
    const Tensor pin = ids({0, 2, 2, 3, 2, 1}, dev);
    CHECK_ALLCLOSE(F::embedding_bag(pin, w, pad.mode(EmbeddingBagMode::Mean)), f64({1, 10, 0, 0, 3, 30}, {3, 2}), 1e-15,
                   0);
    CHECK_ALLCLOSE(F::embedding_bag(pin, w, pad.mode(EmbeddingBagMode::Max)), f64({1, 10, 0, 0, 4, 40}, {3, 2}), 0, 0);
    // per_sample_weights scale each row of a sum, and get the row . output-gradient.
    Tensor psw = f64({0.5, 2, 1, -1, 3}, {5}, dev).requires_grad_(true);
    Tensor wg = w.detach().requires_grad_(true);
    Tensor y = F::embedding_bag(in, wg, o.mode(EmbeddingBagMode::Sum).per_sample_weights(psw));
    CHECK_ALLCLOSE(y, f64({6.5, 65, 0, 0, 7, 70}, {3, 2}), 1e-15, 0);
    sum(y).backward();
    CHECK_ALLCLOSE(psw.grad(), f64({11, 33, 22, 44, 33}, {5}), 0, 0);
    CHECK_ALLCLOSE(wg.grad(), f64({0.5, 0.5, 1, 1, 5, 5, -1, -1}, {4, 2}), 1e-15, 0);
    // scale_grad_by_freq: k occurrences of a row, each with gradient 1 / k (PyTorch 1.13's CPU
    // kernel divides by the count of another index here: 0.5 for row 1 and 3 for row 2).
    Tensor wf = w.detach().requires_grad_(true);
    const auto freq = F::EmbeddingBagFuncOptions().offsets(ids({0, 3}, dev)).scale_grad_by_freq(true);
    sum(F::embedding_bag(ids({2, 0, 2, 2, 1, 0}, dev), wf,
                         F::EmbeddingBagFuncOptions(freq).mode(EmbeddingBagMode::Sum)))
        .backward();
    CHECK_ALLCLOSE(wf.grad(), f64({1, 1, 1, 1, 1, 1, 0, 0}, {4, 2}), 1e-15, 0);
  }
}

TEST_CASE("gradcheck: embedding_bag in weight and per_sample_weights, and the scaled embedding's double backward",
          "[nn][gradcheck][embedding]") {
  wick::manual_seed(3);
  const Tensor in = ids({0, 2, 1, 3, 2, 4, 0}), offs = ids({0, 2, 2, 5});
  auto rnd = [](IntArrayRef s) { return wick::randn(s, TensorOptions(kFloat64).requires_grad()); };
  for (EmbeddingBagMode mode : {EmbeddingBagMode::Sum, EmbeddingBagMode::Mean, EmbeddingBagMode::Max}) {
    INFO(embedding_bag_mode_name(mode));
    auto f = [&](const TL& x) {
      return TL{F::embedding_bag(in, x[0], F::EmbeddingBagFuncOptions().offsets(offs).mode(mode).padding_idx(2))};
    };
    CHECK_GRADCHECK(f, TL{rnd({5, 3})});
  }
  auto with_psw = [&](const TL& x) {
    return TL{F::embedding_bag(
        in, x[0], F::EmbeddingBagFuncOptions().offsets(offs).mode(EmbeddingBagMode::Sum).per_sample_weights(x[1]))};
  };
  CHECK_GRADCHECK(with_psw, TL{rnd({5, 3}), rnd({7})});
  wick::test::check_double_backward(with_psw, TL{rnd({5, 3}), rnd({7})});
  // The node that scales and masks the weight's gradient, with distinct indices and padding_idx
  // not among them, so that its gradient is the true one: its own backward (double backward).
  const Tensor idx = ids({0, 2, 4, 1});
  auto scaled = [&](const TL& x) {
    return TL{F::embedding(idx, x[0], F::EmbeddingFuncOptions().scale_grad_by_freq(true).padding_idx(3)) * x[0].sum()};
  };
  wick::test::check_double_backward(scaled, TL{rnd({5, 3})});
}

TEST_CASE("embedding and embedding_bag refuse bad arguments with typed errors before touching the weight",
          "[nn][errors][embedding]") {
  const Tensor w0 = f64({3, 4, 6, 8, 1, 1}, {3, 2});
  Tensor w = w0.clone();
  auto bag = [&](const Tensor& in, F::EmbeddingBagFuncOptions o) { return F::embedding_bag(in, w, o.max_norm(0.5)); };
  const Tensor in = ids({0, 1, 2});
  CHECK_THROWS_AS(bag(in, F::EmbeddingBagFuncOptions().offsets(ids({1, 2}))), ValueError);
  CHECK_THROWS_WITH(bag(in, F::EmbeddingBagFuncOptions().offsets(ids({0, 2, 1}))), Contains("must not decrease"));
  CHECK_THROWS_WITH(bag(in, F::EmbeddingBagFuncOptions().offsets(ids({0, 4}))), Contains("greater than"));
  CHECK_THROWS_AS(bag(in, F::EmbeddingBagFuncOptions()), ValueError);  // no offsets
  CHECK_THROWS_AS(bag(in.reshape({1, 3}), F::EmbeddingBagFuncOptions().offsets(ids({0}))),
                  ValueError);  // 2-d + offsets
  CHECK_THROWS_AS(bag(ids({0, 1}).reshape({1, 1, 2}), F::EmbeddingBagFuncOptions()), ValueError);
  CHECK_THROWS_AS(bag(ids({0, 3}), F::EmbeddingBagFuncOptions().offsets(ids({0}))), IndexError);
  CHECK_THROWS_AS(bag(ids({0, -1}), F::EmbeddingBagFuncOptions().offsets(ids({0}))), IndexError);
  CHECK_THROWS_AS(bag(f64({0, 1}, {2}), F::EmbeddingBagFuncOptions().offsets(ids({0}))), TypeError);
  CHECK_THROWS_AS(bag(in, F::EmbeddingBagFuncOptions().offsets(f64({0}, {1}))), TypeError);
  CHECK_THROWS_AS(bag(in, F::EmbeddingBagFuncOptions().offsets(ids({}))), ValueError);
  CHECK_THROWS_AS(bag(in, F::EmbeddingBagFuncOptions().offsets(ids({})).include_last_offset(true)), ValueError);
  CHECK_THROWS_WITH(bag(in, F::EmbeddingBagFuncOptions().offsets(ids({0})).per_sample_weights(f64({1, 1, 1}, {3}))),
                    Contains("only supported for mode sum"));
  const auto sum = F::EmbeddingBagFuncOptions().offsets(ids({0})).mode(EmbeddingBagMode::Sum);
  CHECK_THROWS_AS(bag(in, F::EmbeddingBagFuncOptions(sum).per_sample_weights(f64({1, 1}, {2}))), ValueError);
  CHECK_THROWS_AS(bag(in, F::EmbeddingBagFuncOptions(sum).per_sample_weights(ones({3}))), TypeError);
  CHECK_THROWS_AS(bag(in, F::EmbeddingBagFuncOptions(sum).sparse(true)), NotImplementedError);
  CHECK_THROWS_AS(bag(in, F::EmbeddingBagFuncOptions(sum).padding_idx(3)), IndexError);
  CHECK_THROWS_AS(bag(in, F::EmbeddingBagFuncOptions(sum).mode(EmbeddingBagMode::Max).scale_grad_by_freq(true)),
                  ValueError);
  CHECK_THROWS_AS(F::embedding_bag(in, w, F::EmbeddingBagFuncOptions(sum).max_norm(-1.0)), ValueError);
  CHECK_THROWS_AS(F::embedding(ids({0, 5}), w, F::EmbeddingFuncOptions().max_norm(0.5)), IndexError);
  CHECK_THROWS_AS(F::embedding(ids({0}), w, F::EmbeddingFuncOptions().max_norm(0.5).sparse(true)), NotImplementedError);
  CHECK_THROWS_AS(F::embedding(ids({0}), w, F::EmbeddingFuncOptions().max_norm(0.5).padding_idx(-4)), IndexError);
  CHECK_THROWS_AS(F::embedding(ids({0}), w.reshape({6}), F::EmbeddingFuncOptions().max_norm(0.5)), ValueError);
  CHECK_THROWS_AS(F::embedding(ids({0}), ids({1, 2}).reshape({1, 2}), F::EmbeddingFuncOptions().max_norm(1)),
                  TypeError);
  CHECK(wick::equal(w, w0));  // nothing above renormalized a row
  CHECK_NOTHROW(bag(in, F::EmbeddingBagFuncOptions().offsets(ids({0}))));
  CHECK_FALSE(wick::equal(w, w0));
}

TEST_CASE("Embedding and EmbeddingBag: options, from_pretrained, prints as PyTorch's", "[nn][embedding]") {
  Embedding e(EmbeddingOptions(10, 3).padding_idx(-2).max_norm(1.0).norm_type(3.0).scale_grad_by_freq(true));
  CHECK(e->to_string() == "Embedding(10, 3, padding_idx=8, max_norm=1.0, norm_type=3.0, scale_grad_by_freq=True)");
  CHECK(wick::equal(select(e->weight().detach(), 0, 8), zeros({3})));
  CHECK_THROWS_AS(Embedding(EmbeddingOptions(4, 2).sparse(true)), NotImplementedError);
  CHECK_THROWS_AS(Embedding(EmbeddingOptions(4, 2).max_norm(-1.0)), ValueError);
  CHECK_THROWS_AS(Embedding(EmbeddingOptions(4, 2)._weight(zeros({4, 3}))), ValueError);
  CHECK(EmbeddingBag(10, 3)->to_string() == "EmbeddingBag(10, 3, mode=mean)");
  EmbeddingBag b(EmbeddingBagOptions(10, 3).max_norm(2.0).mode(EmbeddingBagMode::Max).padding_idx(-2));
  CHECK(b->to_string() == "EmbeddingBag(10, 3, max_norm=2.0, mode=max, padding_idx=8)");
  CHECK_THROWS_AS(EmbeddingBag(EmbeddingBagOptions(4, 2).mode(EmbeddingBagMode::Max).scale_grad_by_freq(true)),
                  ValueError);
  CHECK(embedding_bag_mode_from_string("sum") == EmbeddingBagMode::Sum);
  CHECK_THROWS_AS(embedding_bag_mode_from_string("median"), ValueError);

  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor given = f64({1, 2, 3, 4, 5, 6}, {3, 2}, dev);
    Embedding p = Embedding::from_pretrained(given, EmbeddingFromPretrainedOptions().padding_idx(0));
    CHECK_FALSE(p->weight().requires_grad());
    CHECK(p->weight().data_ptr() == given.data_ptr());                      // shared, not copied
    CHECK(wick::equal(p->weight(), f64({1, 2, 3, 4, 5, 6}, {3, 2}, dev)));  // padding row as given
    CHECK(p->to_string() == "Embedding(3, 2, padding_idx=0)");
    CHECK_ALLCLOSE(p(ids({2, 0}, dev)), f64({5, 6, 1, 2}, {2, 2}), 0, 0);
    Embedding t = Embedding::from_pretrained(given, EmbeddingFromPretrainedOptions().freeze(false).max_norm(1.0));
    CHECK(t->weight().requires_grad());
    CHECK_FALSE(given.requires_grad());
    t(ids({1}, dev));  // renormalizes row 1 of the shared memory
    CHECK(given.at<double>({1, 0}) == Approx(3 / (5 + 1e-7)));
    EmbeddingBag pb =
        EmbeddingBag::from_pretrained(given, EmbeddingBagFromPretrainedOptions().mode(EmbeddingBagMode::Sum));
    CHECK(pb->to_string() == "EmbeddingBag(3, 2, mode=sum)");
    CHECK_ALLCLOSE(pb(ids({0, 2, 2}, dev).reshape({1, 3})), f64({11, 14}, {1, 2}), 1e-15, 0);
    CHECK_ALLCLOSE(pb->forward_value({Value(ids({0, 2}, dev)), Value(ids({0, 1}, dev))}).tensor(),
                   f64({1, 2, 5, 6}, {2, 2}), 0, 0);
  }
  CHECK_THROWS_AS(Embedding::from_pretrained(zeros({3})), ValueError);
  CHECK_THROWS_AS(EmbeddingBag::from_pretrained(zeros({3, 2, 1})), ValueError);
}
