// TransformerDecoderLayer, TransformerDecoder and Transformer beyond the PyTorch oracle
// (layers_oracle_test.cpp): PyTorch's state_dict keys and print(). Their behaviour:
// transformer_decoder_behaviour_test.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "nn_test_util.h"
#include "support/allclose.h"
#include "support/devices.h"
#include "support/gradcheck.h"
#include "support/small_transformers.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using namespace wick::test::small_transformers;
using Catch::Matchers::Contains;
using TL = std::vector<Tensor>;

namespace {

const TensorOptions kF64(kFloat64);

// PyTorch's _addindent: every line but the first indented by `n` spaces.
std::string indent(const std::string& s, int n) {
  std::string out;
  for (char ch : s) {
    out += ch;
    if (ch == '\n') out += std::string(static_cast<size_t>(n), ' ');
  }
  return out;
}

// print(torch.nn.TransformerDecoderLayer(4, 2, dim_feedforward=6)) in PyTorch 1.13, whose
// out_proj is a NonDynamicallyQuantizableLinear (a Linear subclass for its quantizer), wick's a
// Linear.
const std::string kDecoderLayerRepr =
    "TransformerDecoderLayer(\n"
    "  (self_attn): MultiheadAttention(\n"
    "    (out_proj): Linear(in_features=4, out_features=4, bias=True)\n"
    "  )\n"
    "  (multihead_attn): MultiheadAttention(\n"
    "    (out_proj): Linear(in_features=4, out_features=4, bias=True)\n"
    "  )\n"
    "  (linear1): Linear(in_features=4, out_features=6, bias=True)\n"
    "  (dropout): Dropout(p=0.1, inplace=False)\n"
    "  (linear2): Linear(in_features=6, out_features=4, bias=True)\n"
    "  (norm1): LayerNorm((4,), eps=1e-05, elementwise_affine=True)\n"
    "  (norm2): LayerNorm((4,), eps=1e-05, elementwise_affine=True)\n"
    "  (norm3): LayerNorm((4,), eps=1e-05, elementwise_affine=True)\n"
    "  (dropout1): Dropout(p=0.1, inplace=False)\n"
    "  (dropout2): Dropout(p=0.1, inplace=False)\n"
    "  (dropout3): Dropout(p=0.1, inplace=False)\n"
    ")";

// print(torch.nn.TransformerEncoderLayer(4, 2, dim_feedforward=6)) in PyTorch 1.13 (out_proj as
// above).
const std::string kEncoderLayerRepr =
    "TransformerEncoderLayer(\n"
    "  (self_attn): MultiheadAttention(\n"
    "    (out_proj): Linear(in_features=4, out_features=4, bias=True)\n"
    "  )\n"
    "  (linear1): Linear(in_features=4, out_features=6, bias=True)\n"
    "  (dropout): Dropout(p=0.1, inplace=False)\n"
    "  (linear2): Linear(in_features=6, out_features=4, bias=True)\n"
    "  (norm1): LayerNorm((4,), eps=1e-05, elementwise_affine=True)\n"
    "  (norm2): LayerNorm((4,), eps=1e-05, elementwise_affine=True)\n"
    "  (dropout1): Dropout(p=0.1, inplace=False)\n"
    "  (dropout2): Dropout(p=0.1, inplace=False)\n"
    ")";

// The parameter names of a decoder layer, as PyTorch 1.13 prints
// list(torch.nn.TransformerDecoderLayer(4, 2, dim_feedforward=6).state_dict().keys()).
const std::vector<std::string> kTorchLayerKeys = {"self_attn.in_proj_weight",
                                                  "self_attn.in_proj_bias",
                                                  "self_attn.out_proj.weight",
                                                  "self_attn.out_proj.bias",
                                                  "multihead_attn.in_proj_weight",
                                                  "multihead_attn.in_proj_bias",
                                                  "multihead_attn.out_proj.weight",
                                                  "multihead_attn.out_proj.bias",
                                                  "linear1.weight",
                                                  "linear1.bias",
                                                  "linear2.weight",
                                                  "linear2.bias",
                                                  "norm1.weight",
                                                  "norm1.bias",
                                                  "norm2.weight",
                                                  "norm2.bias",
                                                  "norm3.weight",
                                                  "norm3.bias"};

// The same for an encoder layer (TransformerEncoderLayer(4, 2, dim_feedforward=6)).
const std::vector<std::string> kTorchEncoderLayerKeys = {"self_attn.in_proj_weight",
                                                         "self_attn.in_proj_bias",
                                                         "self_attn.out_proj.weight",
                                                         "self_attn.out_proj.bias",
                                                         "linear1.weight",
                                                         "linear1.bias",
                                                         "linear2.weight",
                                                         "linear2.bias",
                                                         "norm1.weight",
                                                         "norm1.bias",
                                                         "norm2.weight",
                                                         "norm2.bias"};

std::vector<std::string> prefixed(const std::string& prefix, const std::vector<std::string>& keys) {
  std::vector<std::string> out;
  for (const auto& k : keys) out.push_back(prefix + k);
  return out;
}

}  // namespace

TEST_CASE("TransformerDecoderLayer, TransformerDecoder and Transformer have PyTorch's state_dict keys",
          "[nn][transformer]") {
  CHECK(small_layer()->state_dict().keys() == kTorchLayerKeys);
  // PyTorch 1.13: list(TransformerDecoder(TransformerDecoderLayer(4, 2, dim_feedforward=6), 2,
  // norm=LayerNorm(4)).state_dict().keys()): layers.0.self_attn.in_proj_weight, ...,
  // layers.0.norm3.bias, layers.1.self_attn.in_proj_weight, ..., layers.1.norm3.bias,
  // norm.weight, norm.bias (the 18 layer keys above under layers.0. and layers.1.).
  std::vector<std::string> decoder_keys = prefixed("layers.0.", kTorchLayerKeys);
  for (const auto& k : prefixed("layers.1.", kTorchLayerKeys)) decoder_keys.push_back(k);
  decoder_keys.push_back("norm.weight");
  decoder_keys.push_back("norm.bias");
  TransformerDecoder dec(
      TransformerDecoderOptions(small_layer(), 2).norm(LayerNorm(LayerNormOptions({4}), kF64).ptr()));
  CHECK(dec->state_dict().keys() == decoder_keys);
  CHECK(dec->named_children().keys() == std::vector<std::string>{"layers", "norm"});
  TransformerDecoder bare(small_layer(), 1);
  CHECK(bare->state_dict().keys() == prefixed("layers.0.", kTorchLayerKeys));
  CHECK(bare->named_children().keys() == std::vector<std::string>{"layers"});  // no None entry, as PyTorch
  // PyTorch 1.13: list(Transformer(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
  // dim_feedforward=6).state_dict().keys()):
  const std::vector<std::string> transformer_keys = {"encoder.layers.0.self_attn.in_proj_weight",
                                                     "encoder.layers.0.self_attn.in_proj_bias",
                                                     "encoder.layers.0.self_attn.out_proj.weight",
                                                     "encoder.layers.0.self_attn.out_proj.bias",
                                                     "encoder.layers.0.linear1.weight",
                                                     "encoder.layers.0.linear1.bias",
                                                     "encoder.layers.0.linear2.weight",
                                                     "encoder.layers.0.linear2.bias",
                                                     "encoder.layers.0.norm1.weight",
                                                     "encoder.layers.0.norm1.bias",
                                                     "encoder.layers.0.norm2.weight",
                                                     "encoder.layers.0.norm2.bias",
                                                     "encoder.norm.weight",
                                                     "encoder.norm.bias",
                                                     "decoder.layers.0.self_attn.in_proj_weight",
                                                     "decoder.layers.0.self_attn.in_proj_bias",
                                                     "decoder.layers.0.self_attn.out_proj.weight",
                                                     "decoder.layers.0.self_attn.out_proj.bias",
                                                     "decoder.layers.0.multihead_attn.in_proj_weight",
                                                     "decoder.layers.0.multihead_attn.in_proj_bias",
                                                     "decoder.layers.0.multihead_attn.out_proj.weight",
                                                     "decoder.layers.0.multihead_attn.out_proj.bias",
                                                     "decoder.layers.0.linear1.weight",
                                                     "decoder.layers.0.linear1.bias",
                                                     "decoder.layers.0.linear2.weight",
                                                     "decoder.layers.0.linear2.bias",
                                                     "decoder.layers.0.norm1.weight",
                                                     "decoder.layers.0.norm1.bias",
                                                     "decoder.layers.0.norm2.weight",
                                                     "decoder.layers.0.norm2.bias",
                                                     "decoder.layers.0.norm3.weight",
                                                     "decoder.layers.0.norm3.bias",
                                                     "decoder.norm.weight",
                                                     "decoder.norm.bias"};
  Transformer t = small_transformer(1, 1);
  CHECK(t->state_dict().keys() == transformer_keys);
  CHECK(t->named_children().keys() == std::vector<std::string>{"encoder", "decoder"});
  // Without biases, no bias keys (PyTorch 2.1's bias=False).
  for (const auto& k : TransformerDecoderLayer(TransformerDecoderLayerOptions(4, 2).dim_feedforward(6).bias(false))
                           ->state_dict()
                           .keys())
    CHECK(k.find("bias") == std::string::npos);
}

TEST_CASE("TransformerDecoderLayer, TransformerDecoder and Transformer print as PyTorch 1.13", "[nn][transformer]") {
  CHECK(TransformerDecoderLayer(TransformerDecoderLayerOptions(4, 2).dim_feedforward(6))->to_string() ==
        kDecoderLayerRepr);
  // print(TransformerDecoder(TransformerDecoderLayer(4, 2, dim_feedforward=6), 2, norm=LayerNorm(4))):
  // the layer's lines indented under "(layers): ModuleList(" as "(0): " and "(1): ".
  TransformerDecoderLayer proto(TransformerDecoderLayerOptions(4, 2).dim_feedforward(6));
  const std::string layer = indent(kDecoderLayerRepr, 4);
  CHECK(TransformerDecoder(TransformerDecoderOptions(proto, 2).norm(LayerNorm(LayerNormOptions({4})).ptr()))
            ->to_string() ==
        "TransformerDecoder(\n"
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
  // print(Transformer(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
  // dim_feedforward=6)):
  const std::string norm = "(norm): LayerNorm((4,), eps=1e-05, elementwise_affine=True)\n";
  const std::string want =
      "Transformer(\n"
      "  (encoder): TransformerEncoder(\n"
      "    (layers): ModuleList(\n"
      "      (0): " +
      indent(kEncoderLayerRepr, 6) +
      "\n"
      "    )\n"
      "    " +
      norm +
      "  )\n"
      "  (decoder): TransformerDecoder(\n"
      "    (layers): ModuleList(\n"
      "      (0): " +
      indent(kDecoderLayerRepr, 6) +
      "\n"
      "    )\n"
      "    " +
      norm +
      "  )\n"
      ")";
  CHECK(Transformer(TransformerOptions(4, 2, 1, 1).dim_feedforward(6))->to_string() == want);
}
