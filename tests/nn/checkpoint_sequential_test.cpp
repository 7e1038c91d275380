// nn::checkpoint_sequential (wick/nn/checkpoint_sequential.h) on every test device, with both
// kinds of checkpoint. Truth: the same Sequential run as usual from the same seed (same ops,
// dropout included: output, input and parameter gradients equal bit for bit, and the
// generator's next draw too).
#include <wick/wick.h>

#include <catch2/catch.hpp>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/expect_error.h"

using namespace wick;

namespace {

Tensor input_data(IntArrayRef shape, uint64_t seed, Device d) {
  manual_seed(seed);
  return randn(shape, kFloat64).to(d);
}

// Output, input gradient, each parameter's gradient, then the generator's next draw.
// Without an input gradient (input_grad false) the input does not require grad, which only the
// non-reentrant checkpoint takes.
std::vector<Tensor> run(nn::Sequential& seq, int64_t segments, Device d, bool reentrant = true,
                        bool input_grad = true) {
  seq->zero_grad();
  const Tensor x = input_data({5, 3}, 12, d).requires_grad_(input_grad);
  const Tensor up = input_data({5, 2}, 14, d);
  manual_seed(13);  // dropout draws from here
  const Tensor y =
      segments == 0 ? seq->forward(x) : nn::checkpoint_sequential(seq, segments, x, {.use_reentrant = reentrant});
  autograd::backward({y}, {up});
  std::vector<Tensor> r = {y};
  if (input_grad) r.push_back(x.grad());
  for (const Tensor& p : seq->parameters()) r.push_back(p.grad());
  r.push_back(rand({3}, kFloat64));
  return r;
}

}  // namespace

TEST_CASE("checkpoint_sequential: equals the plain Sequential bit for bit, dropout included, and checks segments") {
  for (const Device& d : test::test_devices()) {
    INFO("device " << d);
    manual_seed(11);
    nn::Sequential seq(nn::Linear(3, 8), nn::Tanh(), nn::Linear(8, 8), nn::Dropout(0.3), nn::Tanh(), nn::Linear(8, 2));
    seq->to(d, kFloat64);
    for (bool input_grad : {true, false}) {
      const std::vector<Tensor> truth = run(seq, 0, d, true, input_grad);
      for (bool reentrant : {true, false}) {
        if (reentrant && !input_grad) continue;  // the reentrant kind refuses it (its own test)
        for (int64_t segments : {1, 2, 3, 4, 6}) {
          INFO(segments << " segment(s), use_reentrant " << reentrant << ", input requires grad " << input_grad);
          const std::vector<Tensor> got = run(seq, segments, d, reentrant, input_grad);
          REQUIRE(got.size() == truth.size());
          for (size_t k = 0; k < got.size(); ++k) {
            INFO("result " << k);
            REQUIRE(got[k].defined());
            CHECK_ALLCLOSE(got[k], truth[k], 0.0, 0.0);
          }
        }
      }
    }
    const Tensor x = input_data({5, 3}, 12, d).requires_grad_(true);
    for (int64_t bad : {0, -1, 7})
      test::expect_error<ValueError>([&] { nn::checkpoint_sequential(seq, bad, x); },
                                     {"checkpoint_sequential", "segments", "6", std::to_string(bad)});
  }
}
