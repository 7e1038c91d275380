// The rows of replicate_every_layer_test.cpp (support/replicate_layers.h): every layer of
// nn/include/wick/nn/modules, how to call it on a batch of 5 and along which dimension the batch
// runs; convolutions, norms, pooling, padding, dropout, the recurrent layers and cells, attention,
// transformers, Sequential and the containers.
#include <wick/nn/nn.h>

#include <catch2/catch.hpp>

#include "parallel/parallel_test_util.h"
#include "support/devices.h"
#include "support/mirror_backend.h"
#include "support/replicate_layers.h"
#include "wick/parallel/data_parallel.h"
#include "wick/parallel/parallel_apply.h"
#include "wick/parallel/replicate.h"

using namespace wick;
using namespace wick::parallel;
using namespace wick::test::replicate_layers;
using nn::Value;
using wick::test::cpu;
using wick::test::f64;

namespace {

Tensor rnd(std::vector<int64_t> shape) { return randn(shape, f64()); }

// The ModuleList and ModuleDict containers, which have no forward of their own.
class Containers : public nn::Cloneable<Containers> {
 public:
  Containers() {
    list_ = register_module("list", std::make_shared<nn::ModuleListImpl>(std::make_shared<nn::LinearImpl>(4, 4),
                                                                         std::make_shared<nn::TanhImpl>()));
    dict_ = register_module("dict", nn::ModuleDict({{"proj", std::make_shared<nn::LinearImpl>(4, 3)},
                                                    {"act", std::make_shared<nn::SigmoidImpl>()}})
                                        .ptr());
  }
  Tensor forward(const Tensor& x) {
    Tensor h = x;
    for (const auto& m : child(list_)) h = m->forward_tensor(h);
    return child(dict_)["act"]->forward_tensor(child(dict_)["proj"]->forward_tensor(h));
  }
  nn::ChildSlot<nn::ModuleListImpl> list_;
  nn::ChildSlot<nn::ModuleDictImpl> dict_;
};

// AdaptiveLogSoftmaxWithLoss's per-example output (its loss is a batch mean, which DataParallel's
// gather cannot rebuild from the replicas' means).
class AdaptiveOutput : public nn::Cloneable<AdaptiveOutput> {
 public:
  AdaptiveOutput() {
    asm_ = register_module("asm", std::make_shared<nn::AdaptiveLogSoftmaxWithLossImpl>(
                                      nn::AdaptiveLogSoftmaxWithLossOptions(8, 12, {3, 8}).div_value(2.0)));
  }
  Tensor forward(const Tensor& x, const Tensor& target) { return child(asm_).forward(x, target).output; }
  nn::ChildSlot<nn::AdaptiveLogSoftmaxWithLossImpl> asm_;
};

std::vector<Layer> layers() {
  using namespace nn;
  auto one = [](std::vector<int64_t> shape) { return [shape] { return Args{rnd(shape)}; }; };
  auto ptr = [](auto holder) { return std::static_pointer_cast<Module>(holder.ptr()); };
  const Value none;
  // A key padding mask for 5 samples of s keys: the last key of every other sample.
  const auto pad = [](int64_t s) {
    std::vector<double> m(static_cast<size_t>(5 * s), 0.0);
    for (int64_t i = 0; i < 5; i += 2) m[static_cast<size_t>(i * s + s - 1)] = 1.0;
    return tensor(m, {5, s}).gt(0.5);
  };
  const auto enc = TransformerEncoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0).batch_first(true);
  const auto dec = TransformerDecoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0).batch_first(true);
  return {
      {"Linear", [=] { return ptr(Linear(4, 3)); }, one({5, 4})},
      {"Linear without bias", [=] { return ptr(Linear(LinearOptions(4, 3).bias(false))); }, one({5, 4})},
      {"Bilinear", [=] { return ptr(Bilinear(3, 4, 2)); },
       [=] {
         return Args{rnd({5, 3}), rnd({5, 4})};
       }},
      {"Softmax2d", [=] { return ptr(Softmax2d()); }, one({5, 3, 2, 2})},
      {"Conv1d", [=] { return ptr(Conv1d(Conv1dOptions(2, 3, 3).stride(2).padding(1).padding_mode(kReflect))); },
       one({5, 2, 7})},
      {"Conv2d", [=] { return ptr(Conv2d(Conv2dOptions(2, 3, 3).padding(1))); }, one({5, 2, 4, 4})},
      {"ConvTranspose1d", [=] { return ptr(ConvTranspose1d(ConvTranspose1dOptions(2, 3, 3).stride(2))); },
       one({5, 2, 4})},
      {"ConvTranspose2d", [=] { return ptr(ConvTranspose2d(ConvTranspose2dOptions(4, 2, 3).stride(2).groups(2))); },
       one({5, 4, 3, 3})},
      {"Conv3d", [=] { return ptr(Conv3d(Conv3dOptions(2, 3, 2).padding(1))); }, one({5, 2, 3, 3, 2})},
      {"ConvTranspose3d", [=] { return ptr(ConvTranspose3d(ConvTranspose3dOptions(2, 2, 2).stride(2))); },
       one({5, 2, 2, 2, 2})},
      {"BatchNorm1d, eval", [=] { return ptr(BatchNorm1d(3)); }, one({5, 3}), 0, false},
      {"BatchNorm2d, eval", [=] { return ptr(BatchNorm2d(3)); }, one({5, 3, 2, 2}), 0, false},
      {"BatchNorm3d, eval", [=] { return ptr(BatchNorm3d(2)); }, one({5, 2, 2, 2, 2}), 0, false},
      {"InstanceNorm3d tracking, train",
       [=] { return ptr(InstanceNorm3d(InstanceNormOptions(2).affine(true).track_running_stats(true))); },
       one({5, 2, 2, 2, 3})},
      {"InstanceNorm1d tracking, train",
       [=] { return ptr(InstanceNorm1d(InstanceNormOptions(3).affine(true).track_running_stats(true))); },
       one({5, 3, 4})},
      {"InstanceNorm2d tracking, eval",
       [=] { return ptr(InstanceNorm2d(InstanceNormOptions(3).affine(true).track_running_stats(true))); },
       one({5, 3, 2, 3}), 0, false},
      {"LayerNorm", [=] { return ptr(LayerNorm(LayerNormOptions({4}))); }, one({5, 3, 4})},
      {"GroupNorm", [=] { return ptr(GroupNorm(2, 4)); }, one({5, 4, 3})},
      {"Embedding", [=] { return ptr(Embedding(EmbeddingOptions(6, 4).padding_idx(1))); },
       [] {
         return Args{tensor(std::vector<int64_t>{0, 1, 5, 2, 1, 3, 4, 0, 5, 2}, {5, 2}, TensorOptions(kInt64))};
       }},
      {"MaxPool1d", [=] { return ptr(MaxPool1d(2)); }, one({5, 2, 6})},
      {"AvgPool1d", [=] { return ptr(AvgPool1d(AvgPool1dOptions(3).stride(2).padding(1))); }, one({5, 2, 6})},
      {"AdaptiveAvgPool1d", [=] { return ptr(AdaptiveAvgPool1d(4)); }, one({5, 2, 7})},
      {"AdaptiveMaxPool1d", [=] { return ptr(AdaptiveMaxPool1d(3)); }, one({5, 2, 7})},
      {"MaxPool2d", [=] { return ptr(MaxPool2d(MaxPool2dOptions(2).stride(1))); }, one({5, 2, 4, 4})},
      {"AvgPool2d", [=] { return ptr(AvgPool2d(AvgPool2dOptions(2).divisor_override(3))); }, one({5, 2, 4, 4})},
      {"AdaptiveAvgPool2d", [=] { return ptr(AdaptiveAvgPool2d(3)); }, one({5, 2, 5, 4})},
      {"AdaptiveMaxPool2d",
       [=] {
         return ptr(AdaptiveMaxPool2d(AdaptiveMaxPool2dOptions({std::nullopt, 3})));
       },
       one({5, 2, 5, 4})},
      {"MaxPool3d", [=] { return ptr(MaxPool3d(MaxPool3dOptions(2).stride(1))); }, one({5, 2, 3, 3, 3})},
      {"AvgPool3d", [=] { return ptr(AvgPool3d(AvgPool3dOptions(2).padding(1))); }, one({5, 2, 3, 3, 2})},
      {"AdaptiveAvgPool3d",
       [=] {
         return ptr(AdaptiveAvgPool3d(AdaptiveAvgPool3dOptions({2, 1, 3})));
       },
       one({5, 2, 3, 3, 4})},
      {"AdaptiveMaxPool3d",
       [=] {
         return ptr(AdaptiveMaxPool3d(AdaptiveMaxPool3dOptions({2, 2, 3})));
       },
       one({5, 2, 3, 4, 4})},
      {"ReflectionPad3d",
       [=] {
         return ptr(ReflectionPad3d(std::vector<int64_t>{1, 2, 0, 1, 2, 1}));
       },
       one({5, 2, 3, 2, 3})},
      {"ReplicationPad3d", [=] { return ptr(ReplicationPad3d(2)); }, one({5, 2, 2, 3, 2})},
      {"Sequential of the 2-d padding layers and ConstantPad3d",
       [=] {
         using P = std::vector<int64_t>;
         return ptr(Sequential(ZeroPad2d(P{1, 0, 2, 1}), ConstantPad2d(1, 0.5), ReflectionPad2d(P{2, 1, 0, 3}),
                               ReplicationPad2d(P{1, 2, -1, 0}), ConstantPad3d(P{0, 1, 1, 0, 1, 0}, -1.0)));
       },
       one({5, 2, 3, 4})},
      {"Sequential of the 1-d padding layers",
       [=] {
         using P = std::vector<int64_t>;
         return ptr(Sequential(ConstantPad1d(P{2, -1}, 1.5), ReflectionPad1d(P{1, 2}), ReplicationPad1d(P{3, 0})));
       },
       one({5, 2, 4})},
      {"Fold",
       [=] {
         return ptr(Fold(FoldOptions({3, 4}, 2).padding(1)));
       },
       one({5, 8, 20})},
      {"Unfold", [=] { return ptr(Unfold(UnfoldOptions(2).stride(2).padding(1))); }, one({5, 2, 3, 4})},
      {"LocalResponseNorm", [=] { return ptr(LocalResponseNorm(LocalResponseNormOptions(3).alpha(0.5))); },
       one({5, 4, 3})},
      {"LPPool1d", [=] { return ptr(LPPool1d(2, 2)); }, one({5, 2, 6})},
      {"LPPool2d", [=] { return ptr(LPPool2d(LPPool2dOptions(2, 2).stride(1))); }, one({5, 2, 3, 3})},
      {"MaxUnpool1d", [=] { return ptr(MaxUnpool1d(2)); },
       [] {
         const auto [out, idx] = F::max_pool1d_with_indices(rnd({5, 2, 6}), 2);
         return Args{out, idx};
       }},
      {"MaxUnpool2d", [=] { return ptr(MaxUnpool2d(MaxUnpool2dOptions(2).stride(1))); },
       [] {
         const auto [out, idx] = F::max_pool2d_with_indices(rnd({5, 2, 4, 4}), 2, 1);
         return Args{out, idx};
       }},
      {"MaxUnpool3d", [=] { return ptr(MaxUnpool3d(2)); },
       [] {
         const auto [out, idx] = F::max_pool3d_with_indices(rnd({5, 2, 2, 4, 2}), 2);
         return Args{out, idx};
       }},
      {"Dropout, eval", [=] { return ptr(Dropout(0.5)); }, one({5, 4}), 0, false},
      {"Dropout1d, eval", [=] { return ptr(Dropout1d(0.5)); }, one({5, 2, 3}), 0, false},
      {"Dropout2d, eval", [=] { return ptr(Dropout2d(0.5)); }, one({5, 2, 3, 3}), 0, false},
      {"Dropout3d, eval", [=] { return ptr(Dropout3d(0.5)); }, one({5, 2, 2, 2, 2}), 0, false},
      {"AlphaDropout, eval", [=] { return ptr(AlphaDropout(0.5)); }, one({5, 4}), 0, false},
      {"FeatureAlphaDropout, eval", [=] { return ptr(FeatureAlphaDropout(0.5)); }, one({5, 2, 3}), 0, false},
      {"ChannelShuffle", [=] { return ptr(ChannelShuffle(2)); }, one({5, 4, 3})},
      // Windows that do not depend on the drawn samples: (4 - 2) / (3 - 1) = 1 puts them at 0, 1, 2.
      {"FractionalMaxPool2d", [=] { return ptr(FractionalMaxPool2d(FractionalMaxPool2dOptions(2).output_size(3))); },
       one({5, 2, 4, 4})},
      {"FractionalMaxPool3d", [=] { return ptr(FractionalMaxPool3d(FractionalMaxPool3dOptions(2).output_size(3))); },
       one({5, 2, 4, 4, 4})},
      {"CrossMapLRN2d", [=] { return ptr(CrossMapLRN2d(CrossMapLRN2dOptions(3).alpha(0.5))); }, one({5, 4, 2, 2})},
      {"Functional", [=] { return ptr(Functional(F::channel_shuffle, int64_t{2})); }, one({5, 4, 3})},
      // The recurrent layers are time-major: the batch is dimension 1 of the input, the output
      // and the final states.
      {"RNN", [=] { return ptr(RNN(RNNOptions(3, 4).num_layers(2).nonlinearity(kReLU))); },
       [=] {
         return Args{rnd({4, 5, 3}), none};
       },
       1},
      {"LSTM", [=] { return ptr(LSTM(LSTMOptions(3, 4).bidirectional(true))); },
       [=] {
         return Args{rnd({4, 5, 3}), none};
       },
       1},
      {"GRU", [=] { return ptr(GRU(GRUOptions(3, 4).num_layers(2))); },
       [=] {
         return Args{rnd({4, 5, 3}), Value(rnd({2, 5, 4}))};
       },
       1},
      {"RNNCell", [=] { return ptr(RNNCell(3, 4)); },
       [=] {
         return Args{rnd({5, 3}), none};
       }},
      {"LSTMCell", [=] { return ptr(LSTMCell(3, 4)); },
       [=] {
         return Args{rnd({5, 3}), Value::tuple({rnd({5, 4}), rnd({5, 4})})};
       }},
      {"GRUCell", [=] { return ptr(GRUCell(3, 4)); },
       [=] {
         return Args{rnd({5, 3}), Value(rnd({5, 4}))};
       }},
      {"MultiheadAttention", [=] { return ptr(MultiheadAttention(MultiheadAttentionOptions(4, 2).batch_first(true))); },
       [=] {
         return Args{rnd({5, 3, 4}), rnd({5, 2, 4}), rnd({5, 2, 4}), pad(2), true, none, false, false};
       }},
      {"MultiheadAttention kdim, vdim, add_bias_kv, add_zero_attn",
       [=] {
         return ptr(MultiheadAttention(
             MultiheadAttentionOptions(4, 2).kdim(3).vdim(5).add_bias_kv(true).add_zero_attn(true).batch_first(true)));
       },
       [=] {
         return Args{rnd({5, 3, 4}), rnd({5, 2, 3}), rnd({5, 2, 5}), pad(2), true, none, false, false};
       }},
      {"TransformerEncoderLayer", [=] { return ptr(TransformerEncoderLayer(enc)); },
       [=] {
         return Args{rnd({5, 3, 4}), none, pad(3), false};
       }},
      {"TransformerDecoderLayer",
       [=] { return ptr(TransformerDecoderLayer(TransformerDecoderLayerOptions(dec).norm_first(true))); },
       [=] {
         return Args{rnd({5, 3, 4}), rnd({5, 2, 4}), none, none, none, pad(2), false, false};
       }},
      {"TransformerEncoder",
       [=] {
         return ptr(TransformerEncoder(TransformerEncoderLayer(enc), 2,
                                       std::make_shared<LayerNormImpl>(LayerNormOptions({4}))));
       },
       [=] {
         return Args{rnd({5, 3, 4}), none, none, false};
       }},
      {"TransformerDecoder", [=] { return ptr(TransformerDecoder(TransformerDecoderLayer(dec), 2)); },
       [=] {
         return Args{rnd({5, 3, 4}), rnd({5, 2, 4}), none, none, none, none, false, false};
       }},
      {"Transformer",
       [=] {
         return ptr(Transformer(TransformerOptions(4, 2, 1, 1).dim_feedforward(6).dropout(0.0).batch_first(true)));
       },
       // (an attn_mask has no batch dimension, so DataParallel would split it: tgt_is_causal instead)
       [=] {
         return Args{rnd({5, 2, 4}), rnd({5, 3, 4}), none, none, none, pad(2), none, pad(2), false, true, false};
       }},
      {"Sequential of activations",
       [=] {
         return ptr(
             Sequential(Linear(4, 6), GELU(), SiLU(), Tanh(), Sigmoid(), ReLU(), Identity(), Linear(6, 3), Softmax(1)));
       },
       one({5, 4})},
      {"Sequential of shrink activations, eval",
       [=] { return ptr(Sequential(Linear(4, 6), Hardshrink(0.3), Softshrink(0.2), RReLU(), Linear(6, 3))); },
       one({5, 4}), 0, false},
      {"TripletMarginWithDistanceLoss, unreduced",
       [=] { return ptr(TripletMarginWithDistanceLoss(TripletMarginWithDistanceLossOptions().reduction(kNone))); },
       [=] {
         return Args{rnd({5, 3}), rnd({5, 3}), rnd({5, 3})};
       }},
      {"Sequential with Flatten", [=] { return ptr(Sequential(Conv2d(2, 2, 2), Flatten(), Linear(8, 3))); },
       one({5, 2, 3, 3})},
      {"AdaptiveLogSoftmaxWithLoss, output",
       [] { return std::static_pointer_cast<Module>(std::make_shared<AdaptiveOutput>()); },
       [=] {
         return Args{rnd({5, 8}), tensor(std::vector<int64_t>{0, 9, 4, 11, 2}, {5})};
       }},
      {"ModuleList and ModuleDict", [] { return std::static_pointer_cast<Module>(std::make_shared<Containers>()); },
       one({5, 4})},
  };
}

[[maybe_unused]] const bool registered = add_layer_table(layers);

}  // namespace
