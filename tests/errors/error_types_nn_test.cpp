// Typed errors (Note [Typed errors], typed_error_rows.h): the rows of nn modules, functional,
// optimizers and state dicts, each with the exact class it must raise and words its message must
// contain. The other tables: error_types_test.cpp.
#include <unistd.h>
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "hostile_support.h"
#include "support/temp_dir.h"
#include "typed_error_rows.h"

using namespace wick;
using namespace wick::test::typed_errors;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

using wick::test::hostile::class_of;  // the exact (most derived) class, by name
using wick::test::hostile::safetensors_image;
using TempDir = wick::test::TempDir;

// ---- the table, by layer (each lambda captures by value: rows outlive their builder) ----

std::vector<Row> nn_rows() {
  namespace F = nn::functional;
  auto lin = std::make_shared<nn::LinearImpl>(3, 2, f64());
  auto replica = parallel::replicate(lin, {cpu(0), cpu(1)})[1];
  return {
      row<ValueError>("linear with the wrong in_features",
                      [] {
                        F::linear(wick::zeros({2, 3}, f64()), wick::zeros({4, 5}, f64()));
                      },
                      {"linear", "[2, 3]", "in_features = 5", "[4, 5]"}),
      row<TypeError>("linear with mixed dtypes",
                     [] {
                       F::linear(wick::zeros({2, 3}, f64()), wick::zeros({4, 3}, f32()));
                     },
                     {"linear", "float64", "float32"}),
      row<NotImplementedError>(
          "conv2d padding=same with a stride",
          [] {
            F::conv2d(wick::zeros({1, 1, 5, 5}, f32()), wick::zeros({1, 1, 3, 3}, f32()), {}, 2, nn::PaddingMode::Same);
          },
          {"conv2d", "padding=same", "stride"}),
      row<NotImplementedError>("Conv2d padding=same with a stride",
                               [] { nn::Conv2d(nn::Conv2dOptions(1, 1, 3).stride(2).padding(nn::PaddingMode::Same)); },
                               {"Conv2d", "padding=same"}),
      row<IndexError>("a class index out of range",
                      [] {
                        F::cross_entropy(wick::zeros({2, 3}, f64()), wick::tensor(std::vector<int64_t>{0, 7}, {2}));
                      },
                      {"cross_entropy", "target value 7", "3 classes"}),
      row<TypeError>("float targets for nll_loss",
                     [] {
                       F::nll_loss(wick::zeros({2, 3}, f64()), wick::zeros({2}, f64()));
                     },
                     {"nll_loss", "int64", "float64"}),
      row<IndexError>("an embedding index out of range",
                      [] {
                        F::embedding(wick::tensor(std::vector<int64_t>{1, 9}, {2}), wick::zeros({4, 2}, f32()));
                      },
                      {"embedding", "index 9", "4 embeddings"}),
      row<ValueError>("dropout probability above 1", [] { F::dropout(wick::zeros({2}, f32()), 1.5); },
                      {"dropout", "1.5"}),
      row<ValueError>("attention with query and key of different last dims",
                      [] {
                        F::scaled_dot_product_attention(wick::zeros({2, 3, 4}, f32()), wick::zeros({2, 5, 3}, f32()),
                                                        wick::zeros({2, 5, 3}, f32()));
                      },
                      {"scaled_dot_product_attention", "[2, 3, 4]", "[2, 5, 3]", "same last dim"}),
      row<ValueError>("attention with a mask of the wrong shape",
                      [] {
                        F::scaled_dot_product_attention(wick::zeros({3, 4}, f32()), wick::zeros({5, 4}, f32()),
                                                        wick::zeros({5, 2}, f32()), wick::ones({3, 3}, f32()));
                      },
                      {"scaled_dot_product_attention", "attn_mask [3, 3]", "[3, 5]", "[L, S] = [3, 5]"}),
      row<ValueError>("MultiheadAttention with embed_dim not divisible by num_heads",
                      [] { nn::MultiheadAttention(6, 4); },
                      {"MultiheadAttention", "embed_dim (6)", "num_heads (4)", "divisible"}),
      row<ValueError>("MultiheadAttention with a key_padding_mask of the wrong shape",
                      [] {
                        nn::MultiheadAttention m(4, 2);
                        Tensor x = wick::zeros({3, 2, 4}, f32());
                        m(x, x, x, wick::zeros({2, 4}, f32()).to(kBool));
                      },
                      {"MultiheadAttention", "key_padding_mask [2, 4]", "[N, S] = [2, 3]"}),
      row<ValueError>("MultiheadAttention with inputs of the wrong embed_dim",
                      [] {
                        nn::MultiheadAttention m(4, 2);
                        Tensor x = wick::zeros({3, 2, 5}, f32());
                        m(x, x, x);
                      },
                      {"MultiheadAttention", "[3, 2, 5]", "embed_dim = 4"}),
      row<ValueError>("TransformerEncoderLayer with an unknown activation",
                      [] { nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(4, 2).activation("swish")); },
                      {"TransformerEncoderLayer", "activation", "swish"}),
      row<ValueError>("TransformerDecoderLayer memory of the wrong feature size",
                      [] {
                        nn::TransformerDecoderLayer m(nn::TransformerDecoderLayerOptions(4, 2).dim_feedforward(6));
                        m(wick::zeros({3, 2, 4}, f32()), wick::zeros({5, 2, 6}, f32()));
                      },
                      {"TransformerDecoderLayer", "memory", "[5, 2, 6]", "d_model = 4"}),
      row<ValueError>("Transformer src and tgt of different batch sizes",
                      [] {
                        nn::Transformer m(nn::TransformerOptions(4, 2, 1, 1).dim_feedforward(6));
                        m(wick::zeros({5, 2, 4}, f32()), wick::zeros({3, 3, 4}, f32()));
                      },
                      {"Transformer", "[5, 2, 4]", "[3, 3, 4]", "same batch size"}),
      row<ValueError>("LSTM input of the wrong feature size",
                      [] {
                        nn::LSTM(3, 4)(wick::zeros({5, 2, 6}, f32()));
                      },
                      {"LSTM", "[5, 2, 6]", "input_size = 3"}),
      row<ValueError>("LSTM state of the wrong shape",
                      [] {
                        nn::LSTM(nn::LSTMOptions(3, 4).num_layers(2))(
                            wick::zeros({5, 2, 3}, f32()),
                            std::tuple<Tensor, Tensor>{wick::zeros({1, 2, 4}, f32()), wick::zeros({2, 2, 4}, f32())});
                      },
                      {"LSTM", "h_0 [1, 2, 4]", "[num_layers, N, hidden_size] = [2, 2, 4]"}),
      row<ValueError>("GRU state of the wrong shape",
                      [] {
                        nn::GRU(3, 4)(wick::zeros({5, 2, 3}, f32()), wick::zeros({1, 3, 4}, f32()));
                      },
                      {"GRU", "h_0 [1, 3, 4]", "[1, 2, 4]"}),
      row<ValueError>("MultiheadAttention with a key_padding_mask on another device",
                      [] {
                        nn::MultiheadAttention m(4, 2);
                        Tensor x = wick::zeros({3, 2, 4}, f32());
                        m(x, x, x, wick::zeros({2, 3}, TensorOptions(kBool).device(Device("cpu:1"))));
                      },
                      {"MultiheadAttention", "key_padding_mask is on cpu:1", "query is on cpu:0", ".to(device)"}),
      row<ValueError>("MultiheadAttention with an attn_mask on another device",
                      [] {
                        nn::MultiheadAttention m(4, 2);
                        Tensor x = wick::zeros({3, 2, 4}, f32());
                        m(x, x, x, Tensor(), true, wick::zeros({3, 3}, f32(cpu(1))));
                      },
                      {"MultiheadAttention", "attn_mask is on cpu:1", "query is on cpu:0"}),
      row<ValueError>("MultiheadAttention with a key on another device",
                      [] {
                        nn::MultiheadAttention m(4, 2);
                        Tensor x = wick::zeros({3, 2, 4}, f32());
                        m(x, x.to(Device("cpu:1")), x);
                      },
                      {"MultiheadAttention", "key on cpu:1", "parameters on cpu:0"}),
      row<TypeError>("MultiheadAttention with a query of another dtype than its parameters",
                     [] {
                       nn::MultiheadAttention m(nn::MultiheadAttentionOptions(4, 2), TensorOptions(kFloat64));
                       Tensor x = wick::zeros({3, 2, 4}, f32());
                       m(x, x, x);
                     },
                     {"MultiheadAttention", "float32", "parameters are float64"}),
      row<ValueError>("LSTM state on another device",
                      [] {
                        nn::LSTM(3, 4)(wick::zeros({5, 2, 3}, f32()),
                                       std::tuple<Tensor, Tensor>{wick::zeros({1, 2, 4}, f32(cpu(1))),
                                                                  wick::zeros({1, 2, 4}, f32(cpu(1)))});
                      },
                      {"LSTM", "h_0 is on cpu:1", "input is on cpu:0"}),
      row<ValueError>("GRU state on another device",
                      [] {
                        nn::GRU(3, 4)(wick::zeros({5, 2, 3}, f32()), wick::zeros({1, 2, 4}, f32(cpu(1))));
                      },
                      {"GRU", "h_0 is on cpu:1", "input is on cpu:0"}),
      row<ValueError>("LSTM hx with h_0 and no c_0",
                      [] {
                        nn::LSTM(3, 4)(wick::zeros({5, 2, 3}, f32()),
                                       std::tuple<Tensor, Tensor>{wick::zeros({1, 2, 4}, f32()), Tensor()});
                      },
                      {"LSTM", "hx holds h_0 but not c_0", "std::nullopt"}),
      row<ValueError>("LSTM hx with c_0 and no h_0",
                      [] {
                        nn::LSTM(3, 4)(wick::zeros({5, 2, 3}, f32()),
                                       std::tuple<Tensor, Tensor>{Tensor(), wick::zeros({1, 2, 4}, f32())});
                      },
                      {"LSTM", "hx holds c_0 but not h_0"}),
      row<ValueError>("bidirectional GRU state with one direction's entries",
                      [] {
                        nn::GRU(nn::GRUOptions(3, 4).bidirectional(true))(wick::zeros({5, 2, 3}, f32()),
                                                                          wick::zeros({1, 2, 4}, f32()));
                      },
                      {"GRU", "h_0 [1, 2, 4]", "[2 * num_layers, N, hidden_size] = [2, 2, 4]"}),
      row<IndexError>("a parameter that is not there", [=] { lin->get_parameter("nope"); },
                      {"get_parameter", "Linear", "nope"}),
      row<IndexError>("a Sequential index out of range",
                      [=] {
                        nn::Sequential seq;
                        seq->push_back("l", lin);
                        seq[5];
                      },
                      {"Sequential", "index 5", "1 children"}),
      row<StateError>("an empty module holder used", [] { nn::Linear(nullptr)->weight(); },
                      {"Linear holder", "empty", "register_module"}),
      row<IndexError>("a ModuleDict key that is not there", [] { nn::ModuleDict().operator[]("nope"); },
                      {"ModuleDict", "nope"}),
      row<TypeError>("a module cast to an integer dtype", [=] { lin->to(kInt64); }, {"Linear", "int64"}),
      row<TypeError>("a Value of the wrong kind", [] { nn::Value(3.5).tensor(); }, {"Value", "Tensor", "Double 3.5"}),
      row<TypeError>("forward_value with an argument forward cannot take (rethrown with context)",
                     [=] { lin->forward_value({nn::Value(3.5)}); },
                     {"Linear.forward_value", "argument 0", "expected a Tensor", "Double 3.5"}),
      row<ValueError>("forward_value with too many arguments",
                      [=] {
                        lin->forward_value({nn::Value(wick::zeros({1, 3}, f64())), nn::Value(1.0)});
                      },
                      {"Linear.forward_value", "1 argument", "2 were given"}),
      row<TypeError>("a forward that returns an Int where a Tensor is needed",
                     [] { std::make_shared<ReturnsInt>()->forward_tensor(wick::zeros({1}, f32())); },
                     {"ReturnsInt", "Int 3", "Tensor"}),
      row<IndexError>("load_state_dict with a missing key",
                      [=] {
                        nn::StateDict sd;
                        sd.insert("weight", wick::zeros({2, 3}, f64()));
                        lin->load_state_dict(sd);
                      },
                      {"Linear", "Missing key(s)", "\"bias\""}),
      row<ValueError>("load_state_dict with a shape mismatch",
                      [=] {
                        nn::StateDict sd = lin->state_dict();
                        sd.at("bias") = wick::zeros({5}, f64());
                        lin->load_state_dict(sd);
                      },
                      {"Linear", "size mismatch for bias", "[5]", "[2]"}),
      row<TypeError>("load_state_dict with only a dtype mismatch",
                     [=] {
                       nn::StateDict sd = lin->state_dict();
                       sd.at("bias") = wick::zeros({2}, f32());
                       lin->load_state_dict(sd);
                     },
                     {"Linear", "dtype mismatch for bias", "float32", "float64"}),
      row<ValueError>("SGD with a negative learning rate",
                      [=] { optim::SGD(lin->parameters(), optim::SGDOptions(-1.0)); }, {"SGD", "learning rate -1"}),
      row<TypeError>("an integer parameter for an optimizer",
                     [] { optim::SGD(std::vector<Tensor>{wick::zeros({2}, i64())}, optim::SGDOptions(0.1)); },
                     {"optimizer", "parameter 0", "int64"}),
      row<StateError>("a scheduler whose optimizer gained a group",
                      [=] {
                        optim::SGD opt(lin->parameters(), optim::SGDOptions(0.1));
                        optim::StepLR sched(opt, 1);
                        opt.add_param_group(
                            optim::ParamGroup(std::vector<Tensor>{wick::zeros({2}, f64()).requires_grad_()}));
                        sched.step();
                      },
                      {"StepLR.step", "2 parameter groups", "made for 1"}),
      row<ValueError>("an optimizer state dict for another optimizer",
                      [=] {
                        optim::SGD opt(lin->parameters(), optim::SGDOptions(0.1));
                        optim::OptimizerStateDict sd = opt.state_dict();
                        sd.optimizer = "Adam";
                        opt.load_state_dict(sd);
                      },
                      {"SGD.load_state_dict", "Adam"}),
      row<IndexError>("an optimizer state dict with an unknown option (rethrown with context)",
                      [=] {
                        optim::SGD opt(lin->parameters(), optim::SGDOptions(0.1));
                        optim::OptimizerStateDict sd = opt.state_dict();
                        sd.param_groups[0].options.emplace_back("fancy", 1.0);
                        opt.load_state_dict(sd);
                      },
                      {"SGD.load_state_dict", "parameter group 0", "unknown fancy"}),
      row<FormatError>("optimizer groups that are not JSON",
                       [] { optim::OptimizerStateDict().set_groups_json("{not json"); },
                       {"optimizer state", "not valid JSON"}),
      row<StateError>("zero_grad on a replica", [=] { replica->zero_grad(); }, {"Linear.zero_grad", "replica"}),
  };
}

[[maybe_unused]] const bool registered = add_row_tables({{"nn", [](const TempDir&) { return nn_rows(); }}});

}  // namespace

TEST_CASE("typed errors: nn modules, functional, optimizers, state dicts") { check_rows(nn_rows()); }
