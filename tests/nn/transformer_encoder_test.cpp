// TransformerEncoder: the output of PyTorch 1.13 for one set of weights given by its
// state_dict keys; the layers applied in order, then the norm; deep-copied layers; PyTorch's
// state_dict keys and print(); replication; gradients reaching every layer; the errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "nn_test_util.h"
#include "support/allclose.h"
#include "support/gradcheck.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using TL = std::vector<Tensor>;

namespace {

const TensorOptions kF64(kFloat64);

// A post-norm relu layer, d_model 4, 2 heads, feed-forward 6, no dropout, float64.
TransformerEncoderLayer small_layer() {
  return TransformerEncoderLayer(TransformerEncoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0), kF64);
}

// Two such layers and a LayerNorm(4).
TransformerEncoder small_encoder() {
  return TransformerEncoder(TransformerEncoderOptions(small_layer(), 2).norm(LayerNorm(LayerNormOptions({4}), kF64)));
}

// The state_dict keys of PyTorch 1.13's
//   TransformerEncoder(TransformerEncoderLayer(4, 2, dim_feedforward=6), 2, norm=LayerNorm(4)),
// as printed by list(enc.state_dict().keys()).
const std::vector<std::string> kTorchKeys = {"layers.0.self_attn.in_proj_weight",
                                             "layers.0.self_attn.in_proj_bias",
                                             "layers.0.self_attn.out_proj.weight",
                                             "layers.0.self_attn.out_proj.bias",
                                             "layers.0.linear1.weight",
                                             "layers.0.linear1.bias",
                                             "layers.0.linear2.weight",
                                             "layers.0.linear2.bias",
                                             "layers.0.norm1.weight",
                                             "layers.0.norm1.bias",
                                             "layers.0.norm2.weight",
                                             "layers.0.norm2.bias",
                                             "layers.1.self_attn.in_proj_weight",
                                             "layers.1.self_attn.in_proj_bias",
                                             "layers.1.self_attn.out_proj.weight",
                                             "layers.1.self_attn.out_proj.bias",
                                             "layers.1.linear1.weight",
                                             "layers.1.linear1.bias",
                                             "layers.1.linear2.weight",
                                             "layers.1.linear2.bias",
                                             "layers.1.norm1.weight",
                                             "layers.1.norm1.bias",
                                             "layers.1.norm2.weight",
                                             "layers.1.norm2.bias",
                                             "norm.weight",
                                             "norm.bias"};

// [L, L] bool, true above the diagonal: key j > query i is not allowed (MultiheadAttention's
// convention).
Tensor causal_mask(int64_t L) {
  std::vector<double> v(static_cast<size_t>(L * L), 0.0);
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = i + 1; j < L; ++j) v[static_cast<size_t>(i * L + j)] = 1;
  return wick::tensor(v, {L, L}, kF64).to(kBool);
}

// A tensor's values, row-major.
std::vector<double> flat_values(const Tensor& t) { return wick::test::values(t); }

}  // namespace

TEST_CASE("TransformerEncoder matches PyTorch 1.13 for a state dict given by PyTorch's keys", "[nn][transformer]") {
  // The values, in PyTorch: for the j-th key of kTorchKeys and the i-th element (row-major),
  // 0.5 * sin(0.7 * i + 1.3 * j + 0.1); src [4, 2, 4] element i is cos(0.3 * i); mask =
  // triu(ones(4, 4, dtype=bool), 1); src_key_padding_mask = [[F, F, F, F], [F, F, F, T]]; enc in
  // training mode (dropout 0, so the 1.13 inference fast path is off), float64, and the output
  // printed with repr(float(x)). Swapping the two layers changes the output by 0.99, dropping
  // the padding mask by 0.04, dropping the mask by 0.22.
  TransformerEncoder enc = small_encoder();
  const auto params = enc->named_parameters();
  StateDict dict;
  for (size_t j = 0; j < kTorchKeys.size(); ++j) {
    const Tensor& like = params[kTorchKeys[j]];
    std::vector<double> v(static_cast<size_t>(like.numel()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = 0.5 * std::sin(0.7 * static_cast<double>(i) + 1.3 * j + 0.1);
    dict.insert(kTorchKeys[j], wick::tensor(v, like.sizes(), kF64));
  }
  enc->load_state_dict(dict);  // strict: every key is wick's too, and no other
  for (const auto& [key, value] : dict) CHECK(flat_values(enc->named_parameters()[key]) == flat_values(value));
  std::vector<double> s(32);
  for (size_t i = 0; i < s.size(); ++i) s[i] = std::cos(0.3 * static_cast<double>(i));
  const Tensor src = wick::tensor(s, {4, 2, 4}, kF64);
  const Tensor padding = wick::tensor({0, 0, 0, 0, 0, 0, 0, 1}, {2, 4}).to(kBool);
  const Tensor want = wick::tensor(
      {0.54010145671092,    0.3680837251803047,  0.41677265611284375, 0.5721890626317171,  0.49490678879737465,
       0.10577746450545066, 0.6070865566703575,  0.46828303168206664, 0.5373804756668084,  0.33764067857765945,
       0.4517694532316628,  0.5677906242745514,  0.5012193146060202,  0.12825326844887758, 0.6003617268313123,
       0.48735627622965616, 0.5068346441408058,  0.1507361054634798,  0.5903581798024289,  0.5040281740691482,
       0.5020741826313274,  0.13003582916688863, 0.6116967521878631,  0.4803417859115511,  0.518421901606412,
       0.20584534316370812, 0.5581122601965437,  0.5350344363735554,  0.5433284767427524,  0.4125886082385611,
       0.365305281650343,   0.5729661410794002},
      {4, 2, 4}, kF64);
  CHECK_ALLCLOSE(enc(src, causal_mask(4), padding), want, 1e-10, 1e-12);
}

TEST_CASE("TransformerEncoder applies its layers in order, each with the masks, then the norm", "[nn][transformer]") {
  manual_seed(51);
  TransformerEncoder enc(
      TransformerEncoderOptions(small_layer(), 3).norm(LayerNorm(LayerNormOptions({4}), kF64).ptr()));
  // Give every layer and the norm weights of its own, so that the order matters.
  {
    NoGradGuard no_grad;
    for (Tensor p : enc->parameters()) p.copy_(wick::randn(p.sizes(), kF64) * 0.5);
  }
  const Tensor src = wick::randn({5, 2, 4}, kF64);
  const Tensor mask = causal_mask(5);
  const Tensor padding = wick::tensor({0, 0, 0, 1, 1, 0, 0, 0, 0, 0}, {2, 5}).to(kBool);
  Tensor x = src;
  for (int64_t i = 0; i < 3; ++i) x = enc->layer(i).forward(x, mask, padding);
  const Tensor want = enc->norm()->forward_tensor(x);
  CHECK_ALLCLOSE(enc(src, mask, padding), want, 0, 0);
  // The other order gives another result (so the check above can tell).
  Tensor r = src;
  for (int64_t i = 2; i >= 0; --i) r = enc->layer(i).forward(r, mask, padding);
  CHECK_FALSE(test::allclose(enc->norm()->forward_tensor(r), want, 1e-6, 1e-6).ok);
  // is_causal reaches every layer.
  Tensor c = src;
  for (int64_t i = 0; i < 3; ++i) c = enc->layer(i).forward(c, Tensor(), Tensor(), true);
  CHECK_ALLCLOSE(enc(src, Tensor(), Tensor(), true), enc->norm()->forward_tensor(c), 0, 0);
  // Without a norm the output is the last layer's; an unbatched [L, E] input keeps its shape.
  TransformerEncoder bare(small_layer(), 2);
  CHECK(bare->norm() == nullptr);
  const Tensor one = wick::randn({5, 4}, kF64);
  CHECK_ALLCLOSE(bare(one), bare->layer(1).forward(bare->layer(0).forward(one)), 0, 0);
}

TEST_CASE("TransformerEncoder's layers are deep copies: equal at the start, sharing nothing", "[nn][transformer]") {
  TransformerEncoderLayer proto = small_layer();
  TransformerEncoder enc(proto, 3);
  const StateDict start = proto->state_dict();
  for (int64_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    TransformerEncoderLayerImpl& layer = enc->layer(i);
    CHECK(&layer != proto.get());
    CHECK(layer.options().dim_feedforward() == 6);
    for (const auto& [key, value] : layer.state_dict()) {
      CAPTURE(key);
      CHECK_ALLCLOSE(value, start[key], 0, 0);
      CHECK(value.data_ptr() != start[key].data_ptr());  // own storage
    }
    for (const Tensor& p : layer.parameters()) CHECK(p.requires_grad());
  }
  CHECK(&enc->layer(0) != &enc->layer(1));
  // Writing layer 0's weight leaves layer 1 and the prototype alone.
  {
    NoGradGuard no_grad;
    Tensor w = enc->layer(0).linear1().weight();
    w.fill_(3.0);
  }
  CHECK(enc->layer(0).linear1().weight().max().item<double>() == 3.0);
  CHECK_ALLCLOSE(enc->layer(1).linear1().weight(), start["linear1.weight"], 0, 0);
  CHECK_ALLCLOSE(proto->linear1().weight(), start["linear1.weight"], 0, 0);
  CHECK(enc->parameters().size() == 3 * proto->parameters().size());
}

TEST_CASE("TransformerEncoder's state_dict keys are PyTorch's, with and without a norm", "[nn][transformer]") {
  CHECK(small_encoder()->state_dict().keys() == kTorchKeys);
  TransformerEncoder bare(small_layer(), 1);
  const std::vector<std::string> layer0(kTorchKeys.begin(), kTorchKeys.begin() + 12);
  CHECK(bare->state_dict().keys() == layer0);
  std::vector<std::string> children;
  for (const auto& c : bare->child_table()) children.push_back(c.name);
  CHECK(children == std::vector<std::string>{"layers"});  // no None entry for the absent norm, as PyTorch
  CHECK(small_encoder()->named_children().keys() == std::vector<std::string>{"layers", "norm"});
}

TEST_CASE("TransformerEncoder prints as PyTorch 1.13, out_proj as a Linear", "[nn][transformer]") {
  // print(torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(4, 2, dim_feedforward=6),
  // 2, norm=torch.nn.LayerNorm(4))) in PyTorch 1.13, whose out_proj is a
  // NonDynamicallyQuantizableLinear (a Linear subclass for its quantizer), wick's a Linear.
  const std::string layer =
      "TransformerEncoderLayer(\n"
      "      (self_attn): MultiheadAttention(\n"
      "        (out_proj): Linear(in_features=4, out_features=4, bias=True)\n"
      "      )\n"
      "      (linear1): Linear(in_features=4, out_features=6, bias=True)\n"
      "      (dropout): Dropout(p=0.1, inplace=False)\n"
      "      (linear2): Linear(in_features=6, out_features=4, bias=True)\n"
      "      (norm1): LayerNorm((4,), eps=1e-05, elementwise_affine=True)\n"
      "      (norm2): LayerNorm((4,), eps=1e-05, elementwise_affine=True)\n"
      "      (dropout1): Dropout(p=0.1, inplace=False)\n"
      "      (dropout2): Dropout(p=0.1, inplace=False)\n"
      "    )";
  TransformerEncoderLayer proto(TransformerEncoderLayerOptions(4, 2).dim_feedforward(6));
  CHECK(TransformerEncoder(TransformerEncoderOptions(proto, 2).norm(LayerNorm(LayerNormOptions({4})).ptr()))
            ->to_string() ==
        "TransformerEncoder(\n"
        "  (layers): ModuleList(\n"
        "    (0): " +
            layer +
            "\n"
            "    (1): " +
            layer +
            "\n"
            "  )\n"
            "  (norm): LayerNorm((4,), eps=1e-05, elementwise_affine=True)\n"
            ")");
  // Without a norm, PyTorch prints no norm line.
  CHECK(TransformerEncoder(proto, 1)->to_string() ==
        "TransformerEncoder(\n"
        "  (layers): ModuleList(\n"
        "    (0): " +
            layer +
            "\n"
            "  )\n"
            ")");
}

TEST_CASE("TransformerEncoder replicates: a rewired copy computes with its own tensors", "[nn][transformer]") {
  manual_seed(52);
  auto enc = small_encoder().ptr();
  const Tensor src = wick::randn({3, 2, 4}, kF64);
  const Tensor want = enc->forward(src);
  const Device other("cpu:1");
  auto copy = test_util::rewire_copy(enc, [&](const Tensor& t) { return test_util::moved(t, other); });
  auto& moved = dynamic_cast<TransformerEncoderImpl&>(*copy);
  for (const Tensor& p : moved.parameters()) CHECK(p.device() == other);
  CHECK_ALLCLOSE(moved.forward(src.to(other)), want, 0, 0);
  CHECK_ALLCLOSE(enc->forward(src), want, 0, 0);
}

TEST_CASE("gradcheck: TransformerEncoder in its input and a parameter of every layer and the norm",
          "[nn][gradcheck][transformer]") {
  manual_seed(53);
  auto enc = small_encoder().ptr();
  const Tensor padding = wick::tensor({0, 0, 1, 0, 0, 0}, {2, 3}).to(kBool);
  auto run = [enc, padding](const TL& x) {
    enc->layer(0).linear1().set_parameter_entry(0, x[1]);  // weight
    enc->layer(1).linear2().set_parameter_entry(0, x[2]);  // weight
    enc->norm()->set_parameter_entry(0, x[3]);             // LayerNorm weight
    return TL{enc->forward(x[0], causal_mask(3), padding)};
  };
  auto leaf = [](const Tensor& t) { return t.detach().clone().requires_grad_(true); };
  TL in = {wick::randn({3, 2, 4}, TensorOptions(kFloat64).requires_grad()), leaf(enc->layer(0).linear1().weight()),
           leaf(enc->layer(1).linear2().weight()), leaf(enc->norm()->named_parameters()["weight"])};
  CHECK_GRADCHECK(run, in);
  // One backward reaches every parameter of every layer and of the norm.
  auto fresh = small_encoder();
  const Tensor out = fresh(wick::randn({3, 2, 4}, kF64), causal_mask(3), padding);
  (out * wick::randn(out.sizes(), kF64)).sum().backward();
  for (const auto& [name, p] : fresh->named_parameters()) {
    CAPTURE(name);
    REQUIRE(p.grad().defined());
    CHECK(p.grad().abs().sum().item<double>() > 0);
  }
}

TEST_CASE("TransformerEncoder refuses num_layers < 1 and an empty layer holder", "[nn][transformer][errors]") {
  for (int64_t n : {0, -1}) {
    CAPTURE(n);
    CHECK_THROWS_AS(TransformerEncoder(small_layer(), n), ValueError);
    CHECK_THROWS_WITH(TransformerEncoder(small_layer(), n), Contains("TransformerEncoder") &&
                                                                Contains("num_layers must be at least 1") &&
                                                                Contains(std::to_string(n)));
  }
  CHECK_THROWS_AS(TransformerEncoder(TransformerEncoderLayer(nullptr), 2), ValueError);
  CHECK_THROWS_WITH(TransformerEncoder(TransformerEncoderLayer(nullptr), 2), Contains("encoder_layer"));
}
