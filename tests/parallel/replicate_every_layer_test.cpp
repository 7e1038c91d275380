// Every layer of nn/include/wick/nn/modules replicates (docs/parallel.md, "replicate, step by
// step" and "Fresh copies on every call"), on cpu:0,cpu:1 and on the device groups of
// every_device_test.cpp (two mirrors, every CUDA device, cpu:0 with a mirror or a GPU), in float64:
//  - replicate: each replica, run on the whole batch on its device, gives the plain module's
//    output, and the original's gradients are the sum of the replicas' (n times the plain
//    module's); exact on CPU devices (same kernels, no split), to rounding elsewhere;
//  - DataParallel: output, parameter and input gradients equal the plain module's on the whole
//    batch to rounding (the batch is split: 5 rows over 2 devices, 3 + 2);
//  - each replica is a fresh copy: the original's print string, module names, types and training
//    flags, parameter and buffer names and values (replica 0 shares the original's storage,
//    the others own copies on their device), also at a second call after the original changed.
// The running statistics rule (what DataParallel leaves in the original) is in
// replicate_running_stats_test.cpp.
#include <wick/nn/nn.h>

#include <catch2/catch.hpp>

#include "parallel/parallel_test_util.h"
#include "support/devices.h"
#include "support/mirror_backend.h"
#include "wick/parallel/data_parallel.h"
#include "wick/parallel/parallel_apply.h"
#include "wick/parallel/replicate.h"

using namespace wick;
using namespace wick::parallel;
using nn::Value;
using wick::test::cpu;
using wick::test::f64;
using Args = std::vector<Value>;

namespace {

// The device lists under test: cpu:0,cpu:1, then every_device_test.cpp's groups.
std::vector<std::vector<Device>> device_groups() {
  std::vector<std::vector<Device>> groups{{cpu(0), cpu(1)}};
  std::vector<Device> mirrors;
  for (int i = 0; i < test::kMirrorDevices; ++i) mirrors.emplace_back(test::mirror_device_type(), i);
  groups.push_back(mirrors);
  std::vector<Device> cudas;
  for (const Device& d : test::test_devices())
    if (d.is_cuda()) cudas.push_back(d);
  if (!cudas.empty()) groups.push_back(cudas);
  groups.push_back({cpu(0), mirrors[0]});
  if (!cudas.empty()) groups.push_back({cpu(0), cudas[0]});
  return groups;
}

bool all_cpu(const std::vector<Device>& ds) {
  return std::all_of(ds.begin(), ds.end(), [](Device d) { return d.is_cpu(); });
}

// A layer, how to call it, and along which dimension its batch runs.
struct Layer {
  std::string name;
  std::function<std::shared_ptr<nn::Module>()> make;  // any dtype on cpu:0; the test casts to float64
  std::function<Args()> args;                         // float64 (int64 indices) on cpu:0, batch of 5
  int64_t dim = 0;
  bool train = true;
};

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
      {"Dropout, eval", [=] { return ptr(Dropout(0.5)); }, one({5, 4}), 0, false},
      {"Dropout1d, eval", [=] { return ptr(Dropout1d(0.5)); }, one({5, 2, 3}), 0, false},
      {"Dropout2d, eval", [=] { return ptr(Dropout2d(0.5)); }, one({5, 2, 3, 3}), 0, false},
      {"Dropout3d, eval", [=] { return ptr(Dropout3d(0.5)); }, one({5, 2, 2, 2, 2}), 0, false},
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
      {"Sequential with Flatten", [=] { return ptr(Sequential(Conv2d(2, 2, 2), Flatten(), Linear(8, 3))); },
       one({5, 2, 3, 3})},
      {"ModuleList and ModuleDict", [] { return std::static_pointer_cast<Module>(std::make_shared<Containers>()); },
       one({5, 4})},
  };
}

// Each floating-point tensor of `args` copied to d as a fresh leaf that requires grad.
Args leaves_on(const Args& args, Device d) {
  Args out;
  for (const Value& v : args)
    out.push_back(v.map_tensors([d](const Tensor& t) {
      Tensor c = t.to(d).detach();
      if (c.is_floating_point()) c.requires_grad_(true);
      return c;
    }));
  return out;
}

std::vector<Tensor> tensors_of(const Value& v) {
  std::vector<Tensor> out;
  v.for_each_tensor([&](const Tensor& t) { out.push_back(t); });
  return out;
}

std::vector<Tensor> input_grads(const Args& args) {
  std::vector<Tensor> out;
  for (const Value& v : args)
    v.for_each_tensor([&](const Tensor& t) {
      if (t.requires_grad()) out.push_back(t.grad());
    });
  return out;
}

std::vector<Tensor> param_grads(const nn::Module& m) {
  std::vector<Tensor> out;
  for (const Tensor& p : m.named_parameters().values()) out.push_back(p.grad());
  return out;
}

void clear_grads(nn::Module& m) {
  for (Tensor p : m.parameters()) p.set_grad(Tensor());
}

// sum_k (output_k * weights_k).sum(), on device d.
Tensor loss_of(const Value& out, const std::vector<Tensor>& weights, Device d) {
  const std::vector<Tensor> outs = tensors_of(out);
  REQUIRE(outs.size() == weights.size());
  Tensor loss = zeros({}, f64(d));
  for (size_t k = 0; k < outs.size(); ++k) loss = loss + (outs[k] * weights[k].to(outs[k].device())).sum().to(d);
  return loss;
}

// got[k] == want[k] * scale: exactly, or to float64 rounding.
void check_all(const std::vector<Tensor>& got, const std::vector<Tensor>& want, bool exact, const char* what,
               double scale = 1.0) {
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    INFO(what << " " << k);
    REQUIRE(got[k].defined() == want[k].defined());
    if (!got[k].defined()) continue;
    if (exact) {
      CHECK_ALLCLOSE(got[k], want[k] * scale, 0.0, 0.0);
    } else {
      CHECK_ALLCLOSE(got[k], want[k] * scale, 1e-12, 1e-13);
    }
  }
}

// Names and values of replica tensors against the original's: on device d, the same dtype and
// values; replica 0's are the original's own storage, the others' are not.
void check_tensors(const nn::OrderedDict<Tensor>& got, const nn::OrderedDict<Tensor>& want, Device d, bool shared) {
  REQUIRE(got.keys() == want.keys());
  for (size_t k = 0; k < got.size(); ++k) {
    INFO(want[k].first);
    const Tensor& g = got[k].second;
    const Tensor& w = want[k].second;
    CHECK(g.device() == d);
    CHECK(g.dtype() == w.dtype());
    CHECK(test::same_values(g, w));
    CHECK((g.data_ptr() == w.data_ptr()) == shared);
  }
}

// Each replica is a fresh copy of the original as it is now.
void check_fresh_copies(const nn::Module& original, const std::vector<std::shared_ptr<nn::Module>>& replicas,
                        const std::vector<Device>& ds) {
  REQUIRE(replicas.size() == ds.size());
  const auto modules = original.named_modules();
  for (size_t j = 0; j < replicas.size(); ++j) {
    INFO("replica " << j);
    const nn::Module& r = *replicas[j];
    CHECK(r.to_string() == original.to_string());
    const auto copies = r.named_modules();
    REQUIRE(copies.keys() == modules.keys());
    for (size_t k = 0; k < copies.size(); ++k) {
      INFO("module '" << modules[k].first << "'");
      CHECK(copies[k].second->name() == modules[k].second->name());
      CHECK(copies[k].second->is_training() == modules[k].second->is_training());
      CHECK(copies[k].second->is_replica());
      CHECK(copies[k].second.get() != modules[k].second.get());
    }
    check_tensors(r.named_parameters(), original.named_parameters(), ds[j], j == 0);
    check_tensors(r.named_buffers(), original.named_buffers(), ds[j], j == 0);
  }
}

void check_layer(const Layer& layer, const std::vector<Device>& ds) {
  const size_t n = ds.size();
  manual_seed(1);
  std::shared_ptr<nn::Module> model = layer.make();
  model->to(kFloat64);
  if (!model->named_buffers().empty()) {  // non-trivial running statistics
    NoGradGuard no_grad;
    manual_seed(2);
    Args warm = layer.args();
    for (Value& v : warm) v = v.map_tensors([](const Tensor& t) { return t.is_floating_point() ? t * 2.0 + 1.0 : t; });
    model->forward_value(warm);
  }
  model->train(layer.train);

  // The plain module on the whole batch, on cpu:0.
  manual_seed(3);
  const Args args = layer.args();
  const Args ref_in = leaves_on(args, cpu(0));
  const Value ref = model->forward_value(ref_in);
  std::vector<Tensor> weights;
  for (const Tensor& t : tensors_of(ref)) weights.push_back(randn(t.sizes(), f64()));
  loss_of(ref, weights, cpu(0)).backward();
  const std::vector<Tensor> ref_out = tensors_of(ref), ref_grads = param_grads(*model),
                            ref_in_grads = input_grads(ref_in);
  clear_grads(*model);
  model->to(ds[0]);
  const bool exact = all_cpu(ds);

  {  // replicate: every replica on the whole batch
    auto replicas = replicate(model, ds);
    check_fresh_copies(*model, replicas, ds);
    std::vector<Args> inputs;
    for (Device d : ds) inputs.push_back(leaves_on(args, d));
    const std::vector<Value> outs = parallel_apply(replicas, inputs, ds);
    Tensor loss = zeros({}, f64(ds[0]));
    for (size_t i = 0; i < n; ++i) {
      INFO("replica " << i);
      for (const Tensor& t : tensors_of(outs[i])) CHECK(t.device() == ds[i]);
      check_all(tensors_of(outs[i]), ref_out, exact, "output");
      loss = loss + loss_of(outs[i], weights, ds[0]);
    }
    loss.backward();
    check_all(param_grads(*model), ref_grads, exact, "parameter gradient (summed over replicas)", double(n));
    for (size_t i = 0; i < n; ++i) check_all(input_grads(inputs[i]), ref_in_grads, exact, "input gradient");
    clear_grads(*model);
  }

  {  // DataParallel: the batch split over the devices
    DataParallel dp(model, ds, std::nullopt, layer.dim);
    const Args in = leaves_on(args, ds[0]);
    const Value out = dp.forward_value(in);
    for (const Tensor& t : tensors_of(out)) CHECK(t.device() == ds[0]);
    check_all(tensors_of(out), ref_out, false, "output");
    loss_of(out, weights, ds[0]).backward();
    check_all(param_grads(*model), ref_grads, false, "parameter gradient");
    check_all(input_grads(in), ref_in_grads, false, "input gradient");
    clear_grads(*model);
  }

  {  // replicas are fresh copies of the original at each call
    check_fresh_copies(*model, replicate(model, ds), ds);
    {
      NoGradGuard no_grad;  // change every tensor of the original in place, and its mode
      for (Tensor p : model->parameters()) p.add_(0.5);
      for (Tensor b : model->buffers()) b.add_(1);
    }
    model->train(!layer.train);
    check_fresh_copies(*model, replicate(model, ds), ds);
  }
}

}  // namespace

TEST_CASE("every layer replicates through replicate and DataParallel as fresh copies on every device group",
          "[parallel][replicate_every_layer]") {
  for (const Layer& layer : layers()) {
    for (const std::vector<Device>& ds : device_groups()) {
      INFO(layer.name << " on " << fmt::format("{}", fmt::join(ds, ", ")));
      check_layer(layer, ds);
    }
  }
}
