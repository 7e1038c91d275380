// Hostile input for ctc_loss (target lengths whose sum or extended size wraps int64), the
// rounding order of triplet_margin_with_distance_loss (PyTorch's (margin + d_pos) - d_neg, by
// hand in double), and LBFGS.step with a closure that throws: the parameters and the state dict
// are those before the step (wick's rule: a failed call changes nothing).
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "support/devices.h"
#include "wick/autograd/functions.h"
#include "wick/core/error.h"
#include "wick/nn/nn.h"
#include "wick/nn/optim/lbfgs.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;

namespace {
const TensorOptions kI64(kInt64);

Tensor lengths(std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return wick::tensor(v, {n}, kI64);
}

// The state dict as host values: names, then each tensor's values as float64, copied now.
std::vector<std::pair<std::string, std::vector<double>>> snapshot(const optim::Optimizer& opt) {
  std::vector<std::pair<std::string, std::vector<double>>> out;
  for (const auto& [key, t] : opt.state_dict().state)
    out.emplace_back(key, t.to(kCPU).to(kFloat64).contiguous().to_vector<double>());
  return out;
}

std::vector<double> host(const Tensor& t) { return t.detach().to(kCPU).contiguous().to_vector<double>(); }
}  // namespace

TEST_CASE("ctc_loss refuses target lengths whose sum or extended size wraps int64", "[nn][ctc_shrink]") {
  const int64_t big = int64_t{1} << 62;
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const TensorOptions f64 = TensorOptions(kFloat64).device(dev);
    const Tensor lp4 = log_softmax(wick::zeros({1, 4, 2}, f64), 2);
    const Tensor il4 = lengths({1, 1, 1, 1});
    // One concatenated label; the lengths sum to 2^64 + 1, which wraps to 1.
    const Tensor one = wick::tensor(std::vector<int64_t>{1}, {1}, kI64);
    CHECK_THROWS_AS(F::ctc_loss(lp4, one, il4, lengths({big, big, big, big + 1})), ValueError);
    CHECK_THROWS_WITH(
        F::ctc_loss(lp4, one, il4, lengths({big, big, big, big + 1})),
        Contains("target_lengths[0] is 4611686018427387904") && Contains("longer than the concatenated targets [1]"));
    // 2^62 concatenated labels (an expanded view): each length fits, their sum does not.
    const Tensor many = wick::ones({1}, kI64).expand({big});
    CHECK_THROWS_WITH(F::ctc_loss(lp4, many, il4, lengths({big, big, big, big})),
                      Contains("ctc_loss: the sum of target_lengths overflows int64 at target_lengths[1]"));
    // Padded [1, 2^62] targets of length 2^61: 2^62 + 1 states, 4 steps of them overflow.
    const Tensor lp1 = log_softmax(wick::zeros({4, 1, 2}, f64), 2);
    const Tensor padded = wick::ones({1, 1}, kI64).expand({1, big});
    CHECK_THROWS_AS(F::ctc_loss(lp1, padded, lengths({4}), lengths({big / 2})), ValueError);
    CHECK_THROWS_WITH(F::ctc_loss(lp1, padded, lengths({4}), lengths({big / 2})), Contains("extended targets"));
  }
}

TEST_CASE("triplet_margin_with_distance_loss adds the margin to d_pos first as PyTorch", "[nn][ctc_shrink]") {
  // d(x, y) = x - y gives d_pos = a and d_neg = b exactly; (1 + a) - b and (a - b) + 1 round apart.
  const double a = 2.287622212704527e-16, b = 9.452706955539223e-16;
  REQUIRE((1.0 + a) - b != (a - b) + 1.0);
  auto diff = [](const Tensor& x, const Tensor& y) { return x - y; };
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const TensorOptions f64 = TensorOptions(kFloat64).device(dev);
    const Tensor zero = wick::zeros({1}, f64);
    const Tensor loss = F::triplet_margin_with_distance_loss(
        zero, wick::full({1}, -a, f64), wick::full({1}, -b, f64),
        F::TripletMarginWithDistanceLossFuncOptions().distance_function(diff).margin(1.0).reduction(kNone));
    CHECK(host(loss) == std::vector<double>{(1.0 + a) - b});
  }
}

TEST_CASE("LBFGS step with a closure that throws changes neither the parameters nor the state", "[optim]") {
  for (Device dev : wick::test::test_devices()) {
    for (const bool wolfe : {false, true}) {
      INFO(dev.str() << (wolfe ? " strong_wolfe" : " fixed step"));
      const TensorOptions f64 = TensorOptions(kFloat64).device(dev);
      optim::LBFGSOptions o;
      o.max_iter(6).history_size(3);
      if (wolfe) o.line_search_fn("strong_wolfe");
      // Two steps, the second after a failed one when `fail`: the final parameters.
      auto run = [&](bool fail) {
        Tensor x = wick::tensor(std::vector<double>{-1.5, 2.0}, {2}, f64).requires_grad_(true);
        Tensor y = wick::tensor(std::vector<double>{1.0, -0.5}, {2}, f64).requires_grad_(true);
        optim::LBFGS opt(std::vector<Tensor>{x, y}, o);
        int calls = 0, throw_at = 0;
        auto closure = [&] {
          ++calls;
          if (calls == throw_at) throw std::runtime_error("closure failed");
          opt.zero_grad();
          Tensor u = x.select(0, 0).mul(-1).add(1), v = x.select(0, 1) - x.select(0, 0) * x.select(0, 0);
          Tensor l = u * u + v * v * 10 + wick::sum(y * y);
          l.backward();
          return l;
        };
        opt.step(closure);  // the state now has a history and prev_flat_grad
        if (fail) {
          const auto state = snapshot(opt);
          const std::vector<double> x0 = host(x), y0 = host(y);
          REQUIRE(state.size() > 2);
          // The 3rd call: after the parameters moved (both modes), and with strong_wolfe inside
          // the line search's evaluation at x + t d.
          throw_at = calls + 3;
          CHECK_THROWS_WITH(opt.step(closure), Contains("closure failed"));
          CHECK(calls == throw_at);
          CHECK(host(x) == x0);
          CHECK(host(y) == y0);
          CHECK(snapshot(opt) == state);
          throw_at = 0;
        }
        opt.step(closure);
        std::vector<double> out = host(x);
        for (double v : host(y)) out.push_back(v);
        return out;
      };
      // The failed step left nothing behind: the next step continues bit for bit.
      CHECK(run(true) == run(false));
    }
  }
}
