// F::dropout on NaN and inf, as PyTorch 1.13's `input * mask / (1 - p)`: a dropped element is
// the element times 0, so NaN and inf become NaN rather than 0, and a kept inf stays inf. Values
// from `torch.nn.functional.dropout(torch.tensor([nan, inf, 1.]), 1.0, True)` ([nan, nan, 0]) and
// the rule above; run on every test device.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "support/devices.h"
#include "wick/autograd/functions.h"
#include "wick/nn/functional.h"

using namespace wick;
namespace F = wick::nn::functional;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> host_values(const Tensor& t) { return t.to(kCPU).to(kFloat64).to_vector<double>(); }

}  // namespace

TEST_CASE("dropout: p = 1 multiplies by zero, so NaN and inf give NaN, as PyTorch", "[nn][dropout]") {
  for (Device d : test::test_devices()) {
    for (DType dt : {kFloat64, kFloat32}) {
      INFO(d << " " << dt);
      const std::vector<double> in = {kNaN, kInf, 1.0, -kInf};
      Tensor x = from_blob(in.data(), {4}, kFloat64).to(d, dt);
      const auto out = host_values(F::dropout(x, 1.0, true));
      CHECK(std::isnan(out[0]));
      CHECK(std::isnan(out[1]));
      CHECK(out[2] == 0.0);
      CHECK(std::isnan(out[3]));
    }
  }
}

TEST_CASE("dropout: a dropped NaN or inf gives NaN and a kept inf stays inf", "[nn][dropout]") {
  for (Device d : test::test_devices()) {
    INFO(d);
    std::vector<double> in(400, kNaN);
    for (size_t i = 200; i < in.size(); ++i) in[i] = kInf;
    Tensor x = from_blob(in.data(), {400}, kFloat64).to(d);
    const auto out = host_values(F::dropout(x, 0.5, true));
    int nan_from_inf = 0, inf_kept = 0, wrong = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      if (i < 200) {
        wrong += !std::isnan(out[i]);  // NaN times 0 or 2 is NaN
      } else if (std::isnan(out[i])) {
        ++nan_from_inf;  // dropped: inf * 0
      } else {
        wrong += out[i] != kInf;  // kept: inf * 2
        ++inf_kept;
      }
    }
    CHECK(wrong == 0);
    // Both outcomes occur: 200 draws at p = 0.5 (each count is below 60 with probability < 1e-8).
    CHECK(nan_from_inf > 60);
    CHECK(inf_kept > 60);
  }
}
