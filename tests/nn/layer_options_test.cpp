// Options structs with chained setters (LibTorch's names): every setter reaches the layer.
// Expected values are hand-computed (output sizes from the convolution/pooling formula,
// normalized values of small inputs).
#include <catch2/catch.hpp>
#include <cmath>

#include "support/allclose.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using wick::test::values;

namespace {
TensorOptions f64() { return TensorOptions(kFloat64); }
std::vector<std::string> param_names(const Module& m) { return m.named_parameters().keys(); }
}  // namespace

TEST_CASE("LinearOptions: bias(false) registers no bias, the dtype argument reaches the parameters") {
  LinearOptions o(3, 2);
  CHECK(o.in_features() == 3);
  CHECK(o.out_features() == 2);
  CHECK(o.bias());
  CHECK_FALSE(o.bias(false).bias());  // the setter returns the options
  Linear with(3, 2), without(LinearOptions(3, 2).bias(false), f64());
  CHECK(param_names(*with) == std::vector<std::string>{"weight", "bias"});
  CHECK(param_names(*without) == std::vector<std::string>{"weight"});
  CHECK_FALSE(without->bias().defined());
  CHECK(without->weight().dtype() == kFloat64);
  CHECK(with->weight().dtype() == kFloat32);
  // y = x W^T with no bias: zero input gives zero output.
  CHECK(values(without(zeros({1, 3}, f64()))) == std::vector<double>{0, 0});
}

TEST_CASE("Conv2dOptions: stride, padding, dilation, groups and bias give PyTorch's shapes") {
  // out = floor((in + 2 padding - dilation (kernel - 1) - 1) / stride) + 1
  Tensor x = randn({1, 4, 7, 9}, f64());
  CHECK(Conv2d(4, 6, 3, f64())(x).sizes() == std::vector<int64_t>{1, 6, 5, 7});
  CHECK(Conv2d(Conv2dOptions(4, 6, 3).stride(2).padding(1), f64())(x).sizes() == std::vector<int64_t>{1, 6, 4, 5});
  CHECK(Conv2d(Conv2dOptions(4, 6, 3).stride(2).padding(1).dilation(2), f64())(x).sizes() ==
        std::vector<int64_t>{1, 6, 3, 4});
  CHECK(Conv2d(Conv2dOptions(4, 6, {3, 1}).stride({1, 2}).padding({0, 1}), f64())(x).sizes() ==
        std::vector<int64_t>{1, 6, 5, 6});  // h: (7 - 2 - 1) / 1 + 1, w: (9 + 2 - 0 - 1) / 2 + 1
  CHECK(Conv2d(Conv2dOptions(4, 6, 3).padding(kSame), f64())(x).sizes() == std::vector<int64_t>{1, 6, 7, 9});
  CHECK(Conv2d(Conv2dOptions(4, 6, 3).padding(kValid), f64())(x).sizes() == std::vector<int64_t>{1, 6, 5, 7});
  Conv2d grouped(Conv2dOptions(4, 6, 3).groups(2).bias(false), f64());
  CHECK(grouped->weight().sizes() == std::vector<int64_t>{6, 2, 3, 3});
  CHECK(param_names(*grouped) == std::vector<std::string>{"weight"});
  CHECK(grouped->groups() == 2);
  CHECK(grouped->to_string() == "Conv2d(4, 6, kernel_size=(3, 3), stride=(1, 1), groups=2, bias=False)");
  // A 1x1 kernel of ones, no bias, stride 2: picks every other pixel.
  Conv2d pick(Conv2dOptions(1, 1, 1).stride(2).bias(false), f64());
  init::ones_(pick->weight());
  Tensor img = arange(0, 16, 1, f64()).reshape({1, 1, 4, 4});
  CHECK(values(pick(img)) == std::vector<double>{0, 2, 8, 10});
}

TEST_CASE("BatchNormOptions: eps, momentum, affine and track_running_stats reach the layer") {
  // Input [2, 1]: values 1 and 3, mean 2, biased variance 1, unbiased 2.
  Tensor x = tensor({1.0, 3.0}, {2, 1}, f64());
  BatchNorm1d bn(BatchNorm1dOptions(1).eps(3.0).momentum(0.25), f64());
  CHECK(values(bn(x)) == std::vector<double>{-0.5, 0.5});         // (x - 2) / sqrt(1 + 3)
  CHECK(values(bn->running_mean()) == std::vector<double>{0.5});  // 0.75 * 0 + 0.25 * 2
  CHECK(values(bn->running_var()) == std::vector<double>{1.25});  // 0.75 * 1 + 0.25 * 2
  BatchNorm1d cumulative(BatchNorm1dOptions(1).momentum(std::nullopt), f64());
  cumulative(x);
  CHECK(values(cumulative->running_mean()) == std::vector<double>{2.0});  // average over 1 batch
  BatchNorm2d plain(BatchNorm2dOptions(3).affine(false).track_running_stats(false));
  CHECK(plain->named_parameters().size() == 0);
  CHECK(plain->named_buffers().size() == 0);
  CHECK(BatchNorm2d(3)->named_buffers().keys() ==
        std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"});
  CHECK(bn->options().eps() == 3.0);
}

TEST_CASE("LayerNormOptions, EmbeddingOptions, DropoutOptions reach the layer") {
  Tensor x = tensor({1.0, 3.0}, {1, 2}, f64());
  LayerNorm ln(LayerNormOptions({2}).eps(3.0).elementwise_affine(false), f64());
  CHECK(ln->named_parameters().size() == 0);
  CHECK(values(ln(x)) == std::vector<double>{-0.5, 0.5});
  CHECK(param_names(*LayerNorm(LayerNormOptions({2}).bias(false))) == std::vector<std::string>{"weight"});
  CHECK(param_names(*LayerNorm(LayerNormOptions({2}))) == std::vector<std::string>{"weight", "bias"});

  Embedding emb(EmbeddingOptions(5, 3).padding_idx(-1), f64());
  CHECK(emb->options().padding_idx() == 4);  // negative counts from the end, as PyTorch
  CHECK(values(emb->weight()[4]) == std::vector<double>{0, 0, 0});
  CHECK(Embedding(7, 2)->weight().sizes() == std::vector<int64_t>{7, 2});

  Tensor ones8 = ones({8}, f64());
  CHECK(values(Dropout(DropoutOptions().p(1.0))(ones8)) == std::vector<double>(8, 0.0));
  CHECK(values(Dropout(1.0)(ones8)) == std::vector<double>(8, 0.0));
  CHECK(values(Dropout(DropoutOptions().p(0.0))(ones8)) == std::vector<double>(8, 1.0));
  CHECK(Dropout()->p() == 0.5);
}

TEST_CASE("pooling options: stride, padding, dilation, ceil_mode, count_include_pad reach the layer") {
  Tensor x = randn({1, 1, 7, 7}, f64());
  CHECK(MaxPool2d(2)(x).sizes() == std::vector<int64_t>{1, 1, 3, 3});  // stride = kernel_size
  CHECK(MaxPool2d(MaxPool2dOptions(2).ceil_mode(true))(x).sizes() == std::vector<int64_t>{1, 1, 4, 4});
  CHECK(MaxPool2d(MaxPool2dOptions(3).stride(2).padding(1))(x).sizes() == std::vector<int64_t>{1, 1, 4, 4});
  CHECK(MaxPool2d(MaxPool2dOptions(3).stride(1).dilation(2))(x).sizes() == std::vector<int64_t>{1, 1, 3, 3});
  // 2x2 ones, kernel 2, stride 1, padding 1: each corner window holds one element of four.
  Tensor o = ones({1, 1, 2, 2}, f64());
  CHECK(values(AvgPool2d(AvgPool2dOptions(2).stride(1).padding(1))(o)) ==
        std::vector<double>{0.25, 0.5, 0.25, 0.5, 1, 0.5, 0.25, 0.5, 0.25});
  CHECK(values(AvgPool2d(AvgPool2dOptions(2).stride(1).padding(1).count_include_pad(false))(o)) ==
        std::vector<double>(9, 1.0));
  CHECK(AdaptiveAvgPool2d(AdaptiveAvgPool2dOptions({2, 3}))(x).sizes() == std::vector<int64_t>{1, 1, 2, 3});
}

TEST_CASE("activation options: GELU approximate, Softmax dim, Flatten dims") {
  CHECK(GELU(GELUOptions().approximate("tanh"))->to_string() == "GELU(approximate='tanh')");
  CHECK_THROWS_AS(GELU(GELUOptions().approximate("fast")), ValueError);
  Tensor z = zeros({2, 4}, f64());
  CHECK(values(Softmax(1)(z)) == std::vector<double>(8, 0.25));
  CHECK(values(Softmax(SoftmaxOptions(0))(z)) == std::vector<double>(8, 0.5));
  Tensor x = zeros({2, 3, 4}, f64());
  CHECK(Flatten()(x).sizes() == std::vector<int64_t>{2, 12});
  CHECK(Flatten(FlattenOptions().start_dim(0))(x).sizes() == std::vector<int64_t>{24});
  CHECK(Flatten(FlattenOptions().start_dim(0).end_dim(1))(x).sizes() == std::vector<int64_t>{6, 4});
  CHECK(Flatten(FlattenOptions().end_dim(1))(x).sizes() == std::vector<int64_t>{2, 3, 4});
}
