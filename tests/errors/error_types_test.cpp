// Every error wick raises has the class that says what kind of mistake it is (Note [Typed errors]
// in wick/core/error.h, docs/errors.md): a table of bad inputs across core, autograd, nn and
// parallel, each row with the exact class it must raise, the classes that must not catch it, and
// words its message must contain (the op and the operands). Errors that are caught and rethrown
// with more context keep their class.
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

using namespace wick;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

using wick::test::hostile::class_of;  // the exact (most derived) class, by name
using wick::test::hostile::safetensors_image;

// ---- the classes ----

template <class E>
struct Name;
#define WICK_TEST_NAME(E)                    \
  template <>                                \
  struct Name<E> {                           \
    static constexpr const char* value = #E; \
  }
WICK_TEST_NAME(ValueError);
WICK_TEST_NAME(TypeError);
WICK_TEST_NAME(IndexError);
WICK_TEST_NAME(NotImplementedError);
WICK_TEST_NAME(StateError);
WICK_TEST_NAME(FormatError);
WICK_TEST_NAME(IOError);
WICK_TEST_NAME(DeviceUnavailable);
WICK_TEST_NAME(BackendError);
WICK_TEST_NAME(OutOfMemoryError);
#undef WICK_TEST_NAME

// True when what `fn` throws is caught by `catch (const S&)`.
template <class S>
bool caught_as(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const S&) {
    return true;
  } catch (...) {
    return false;
  }
  return false;
}

// No class of the taxonomy other than E and its bases catches what `fn` throws.
template <class E, class... S>
void check_no_sibling_catches(const std::function<void()>& fn) {
  (
      [=] {
        if constexpr (!std::is_base_of_v<S, E>) {
          INFO("a catch (const " << Name<S>::value << "&) must not catch it");
          CHECK_FALSE(caught_as<S>(fn));
        }
      }(),
      ...);
}

// One bad input: what it is, the call, and the check of its error.
struct Row {
  std::string what;
  std::function<void()> call;
  std::function<void(const Row&)> check;
};

/// A row whose call must raise exactly E, with a message containing every one of `words`.
template <class E>
Row row(std::string what, std::function<void()> call, std::vector<std::string> words) {
  return {std::move(what), std::move(call), [words = std::move(words)](const Row& r) {
            INFO("row: " << r.what << " (expects " << Name<E>::value << ")");
            REQUIRE_THROWS_AS(r.call(), E);
            check_no_sibling_catches<E, ValueError, TypeError, IndexError, NotImplementedError, StateError, FormatError,
                                     IOError, DeviceUnavailable, BackendError, OutOfMemoryError>(r.call);
            try {
              r.call();
            } catch (const Error& e) {
              INFO("message: " << e.what());
              CHECK(class_of(e) == Name<E>::value);
              for (const auto& w : words) CHECK_THAT(e.what(), Contains(w));
            }
          }};
}

void check_rows(const std::vector<Row>& rows) {
  for (const Row& r : rows) r.check(r);
}

// ---- helpers ----

Device cpu(int i) { return Device(DeviceType::CPU, i); }
TensorOptions f32(Device d = Device("cpu:0")) { return TensorOptions(kFloat32).device(d); }
TensorOptions f64(Device d = Device("cpu:0")) { return TensorOptions(kFloat64).device(d); }
TensorOptions i64() { return TensorOptions(kInt64); }

using TempDir = wick::test::TempDir;

// A module whose forward returns a Value of another kind than a Tensor.
struct ReturnsInt : nn::Cloneable<ReturnsInt> {
  int64_t forward(const Tensor&) { return 3; }
};

// ---- the table, by layer (each lambda captures by value: rows outlive their builder) ----

std::vector<Row> core_rows() {
  const Tensor v3 = wick::zeros({3}, f32());
  const Tensor m23 = wick::zeros({2, 3}, f32());
  return {
      row<IndexError>("select past the end", [=] { wick::select(v3, 0, 5); }, {"select", "index 5", "size 3", "[3]"}),
      row<IndexError>("a dim that is not there", [=] { wick::sum(m23, {2}); }, {"sum", "dim 2", "2 dims"}),
      row<IndexError>("Tensor::at out of bounds",
                      [=] {
                        (void)m23.at<float>({1, 3});
                      },
                      {"Tensor::at", "index 3", "size 3", "[2, 3]"}),
      row<IndexError>("index_select with an index value out of range",
                      [=] { wick::index_select(v3, 0, wick::tensor(std::vector<int64_t>{5}, {1})); },
                      {"index_select", "[5, 5]", "size 3"}),
      row<IndexError>("narrow of a 0-dim tensor", [=] { wick::narrow(wick::zeros({}, f32()), 0, 0, 1); },
                      {"narrow", "0-dim"}),
      row<TypeError>("index_select with a float index", [=] { wick::index_select(v3, 0, wick::zeros({1}, f32())); },
                     {"index_select", "int64", "float32"}),
      row<ValueError>("shapes that do not broadcast", [=] { wick::add(m23, wick::zeros({4}, f32())); },
                      {"add", "[2, 3]", "[4]"}),
      row<ValueError>("operands on different devices",
                      [=] { wick::add(wick::zeros({2}, f32(cpu(0))), wick::zeros({2}, f32(cpu(1)))); },
                      {"add", "cpu:0", "cpu:1"}),
      row<ValueError>("reshape to a different number of elements", [=] { wick::reshape(m23, {4}); },
                      {"reshape", "[4]", "[2, 3]"}),
      row<ValueError>("a device string that does not parse", [] { Device("gpu:0"); }, {"Device", "gpu:0"}),
      row<ValueError>("arange with step 0", [] { wick::arange(0, 5, 0); }, {"arange", "step"}),
      row<ValueError>("matmul of shapes that do not fit",
                      [=] {
                        wick::matmul(m23, wick::zeros({4, 5}, f32()));
                      },
                      {"matmul", "[2, 3]", "[4, 5]"}),
      row<TypeError>("mean of an integer tensor", [] { wick::mean(wick::zeros({2}, i64())); }, {"mean", "int64"}),
      row<TypeError>("where with a float condition", [=] { wick::where(v3, v3, v3); }, {"where", "bool", "float32"}),
      row<TypeError>("data_ptr of the wrong type", [=] { (void)v3.data_ptr<double>(); },
                     {"data_ptr", "float32", "float64"}),
      row<TypeError>("rand with an integer dtype", [] { wick::rand({2}, i64()); }, {"rand", "int64"}),
      row<TypeError>("matmul of integer tensors",
                     [] {
                       wick::matmul(wick::zeros({2, 2}, i64()), wick::zeros({2, 2}, i64()));
                     },
                     {"matmul", "int64"}),
      row<NotImplementedError>("a comparison written in place",
                               [=] { native::binary_(BinaryOp::Gt, wick::zeros({3}, f32()), v3); },
                               {"gt_", "in place"}),
      row<NotImplementedError>("a safetensors dtype wick cannot hold", [] { dtype_from_safetensors_name("BF16"); },
                               {"BF16", "not supported"}),
      row<FormatError>("a name that is no safetensors dtype", [] { dtype_from_safetensors_name("X99"); },
                       {"X99", "not a safetensors dtype"}),
      row<DeviceUnavailable>("a CUDA device that is not there (or no CUDA at all)",
                             [] { wick::zeros({2}, f32(Device("cuda:99"))); }, {"cuda"}),
  };
}

std::vector<Row> autograd_rows() {
  return {
      row<StateError>("backward twice without retain_graph",
                      [] {
                        Tensor x = wick::ones({3}, f64()).requires_grad_();
                        Tensor y = (x * x).sum();
                        y.backward();
                        y.backward();
                      },
                      {"Backward", "second time", "retain_graph"}),
      row<StateError>("a saved tensor modified in place",
                      [] {
                        Tensor x = wick::ones({3}, f64()).requires_grad_();
                        Tensor a = x * 2.0;
                        Tensor b = a * a;
                        a.add_(1.0);
                        b.sum().backward();
                      },
                      {"Backward", "modified by an in-place operation", "[3]", "version"}),
      row<StateError>("in place on a leaf that requires grad",
                      [] { wick::ones({3}, f64()).requires_grad_().add_(1.0); }, {"add_", "leaf", "requires grad"}),
      row<StateError>("backward of a tensor that does not require grad",
                      [] { wick::ones({3}, f64()).sum().backward(); }, {"backward", "does not require grad"}),
      row<TypeError>("an integer tensor that requires grad", [] { wick::zeros({2}, i64()).requires_grad_(); },
                     {"requires_grad_", "int64"}),
      row<TypeError>("gradcheck of float32 inputs",
                     [] {
                       autograd::gradcheck(
                           [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2.0}; },
                           {wick::ones({2}, f32()).requires_grad_()});
                     },
                     {"gradcheck", "float32", "float64"}),
      row<ValueError>("an implicit gradient for a non-scalar output",
                      [] {
                        Tensor x = wick::ones({3}, f64()).requires_grad_();
                        autograd::grad({x * 2.0}, {x});
                      },
                      {"grad", "one-element", "[3]"}),
      row<ValueError>("stack of tensors of different shapes",
                      [] {
                        wick::stack({wick::zeros({2}, f32()), wick::zeros({3}, f32())});
                      },
                      {"stack", "tensor 1"}),
  };
}

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

std::vector<Row> file_rows(const TempDir& dir) {
  auto lin = std::make_shared<nn::LinearImpl>(3, 2, f64());
  const std::string truncated =
      dir.write("truncated.safetensors", safetensors_image(std::string(40, ' '), "").substr(0, 20));
  const std::string f16 = dir.write(
      "f16.safetensors", safetensors_image(R"({"t":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", "abcd"));
  const std::string missing = dir.file("missing.safetensors");
  const std::string reserved = dir.file("reserved.safetensors");
  const std::string missing_idx = dir.file("nope-idx1-ubyte");
  const std::string model_file = dir.file("model.safetensors");
  nn::save(*lin, model_file);
  const std::string other_model = dir.file("other.safetensors");
  nn::save(nn::Linear(nn::LinearOptions(3, 2).bias(false), f64()), other_model);
  const std::string bad_magic = dir.write("bad-magic-idx1-ubyte", std::string("\x01\x02\x08\x01", 4));
  const std::string short_idx =
      dir.write("short-idx1-ubyte", std::string("\x00\x00\x08\x01\x00\x00\x00\x05\x01\x02", 10));
  auto opt = std::make_shared<optim::SGD>(lin->parameters(), optim::SGDOptions(0.1));
  return {
      row<FormatError>("a truncated safetensors file", [=] { serialize::load_safetensors(truncated); },
                       {"safetensors", truncated, "header length"}),
      row<IOError>("a safetensors file that is not there", [=] { serialize::load_safetensors(missing); },
                   {"safetensors", missing, "cannot open"}),
      row<NotImplementedError>("a safetensors file of F16 tensors (rethrown with context)",
                               [=] { serialize::load_safetensors(f16); }, {"safetensors", f16, "\"t\"", "F16"}),
      row<IndexError>("a tensor name that is not in the file",
                      [=] { serialize::load_safetensors(model_file).at("nope"); },
                      {"safetensors", "no tensor named \"nope\"", "weight"}),
      row<ValueError>("saving a tensor under a reserved name",
                      [=] {
                        serialize::save_safetensors(reserved, {{"__metadata__", wick::zeros({1})}});
                      },
                      {"save_safetensors", "__metadata__"}),
      row<FormatError>("nn::load of a truncated file (rethrown with context)", [=] { nn::load(*lin, truncated); },
                       {"load", "cannot read the checkpoint", truncated, "header length"}),
      row<IOError>("nn::load of a file that is not there (rethrown with context)", [=] { nn::load(*lin, missing); },
                   {"load", missing, "cannot open"}),
      row<IndexError>("nn::load of a file with a missing key (rethrown with context)",
                      [=] { nn::load(*lin, other_model); }, {"load", other_model, "Missing key(s)", "\"bias\""}),
      row<FormatError>("load_checkpoint of a plain model file", [=] { nn::load_checkpoint(model_file, *lin, *opt); },
                       {"load_checkpoint", model_file, "not a training checkpoint"}),
      row<FormatError>("an IDX file with a bad magic number", [=] { data::read_idx(bad_magic); },
                       {"read_idx", bad_magic, "not an IDX file"}),
      row<FormatError>("a truncated IDX file", [=] { data::read_idx(short_idx); },
                       {"read_idx", short_idx, "truncated", "[5]"}),
      row<IOError>("an IDX file that is not there", [=] { data::read_idx(missing_idx); },
                   {"read_idx", "nope-idx1-ubyte"}),
  };
}

// The tensor API of issue 14: each bad input names the op and the operands.
std::vector<Row> tensor_api_rows() {
  const Tensor v3 = wick::zeros({3}, f64()), m23 = wick::zeros({2, 3}, f64());
  const Tensor mask3 = wick::zeros({3}, f64()).gt(0);
  return {
      row<IndexError>("topk with k past the size", [=] { wick::topk(v3, 4); }, {"topk", "k = 4", "size 3", "[3]"}),
      row<IndexError>("sort along a dim that is not there", [=] { wick::sort(m23, 2); }, {"sort", "dim 2"}),
      row<ValueError>("bmm of 2-d tensors", [=] { wick::bmm(m23, m23); }, {"bmm", "[2, 3]", "3-d"}),
      row<ValueError>("addmm with an input that does not broadcast",
                      [=] {
                        wick::addmm(v3.view({3, 1}).expand({3, 2}), m23.t(), m23);
                      },
                      {"addmm", "[3, 2]", "[3, 3]"}),
      row<ValueError>("tril of a 1-d tensor", [=] { wick::tril(v3); }, {"tril", "[3]", "2 dims"}),
      row<TypeError>("masked_fill with a float mask", [=] { wick::masked_fill(v3, v3, 1.0); },
                     {"masked_fill", "bool", "float64"}),
      row<ValueError>("masked_fill with a 1-d value", [=] { wick::masked_fill(v3, mask3, v3); },
                      {"masked_fill", "0-dim", "[3]"}),
      row<ValueError>("repeat with fewer repeats than dims", [=] { wick::repeat(m23, {2}); }, {"repeat", "[2, 3]"}),
      row<ValueError>("roll with more shifts than dims",
                      [=] {
                        wick::roll(m23, {1, 2}, {0});
                      },
                      {"roll", "2 shifts", "1 dims"}),
      row<ValueError>("diag of a 3-d tensor", [=] { wick::diag(m23.unsqueeze(0)); }, {"diag", "[1, 2, 3]"}),
      row<ValueError>("dot of different lengths", [=] { wick::dot(v3, wick::zeros({2}, f64())); },
                      {"dot", "[3]", "[2]"}),
      row<TypeError>("one_hot of a float tensor", [=] { wick::one_hot(v3); }, {"one_hot", "int64", "float64"}),
      row<ValueError>("one_hot with a class past num_classes",
                      [] {
                        wick::one_hot(wick::tensor(std::vector<int64_t>{0, 5}, {2}), 3);
                      },
                      {"one_hot", "5", "num_classes = 3"}),
      row<ValueError>("multinomial with a negative weight",
                      [] {
                        wick::multinomial(wick::tensor({0.5, -1.0}, f64()), 1);
                      },
                      {"multinomial", "negative"}),
      row<ValueError>("multinomial with an all-zero row", [=] { wick::multinomial(v3, 1, true); },
                      {"multinomial", "sums to 0"}),
      row<ValueError>("multinomial without replacement past the positive weights",
                      [] {
                        wick::multinomial(wick::tensor({1.0, 0.0}, f64()), 2);
                      },
                      {"multinomial", "2 samples", "1 positive"}),
      row<TypeError>("isclose of two dtypes", [=] { wick::isclose(v3, v3.to(kFloat32)); },
                     {"isclose", "float64", "float32"}),
      row<TypeError>("norm of an integer tensor", [] { wick::norm(wick::zeros({2}, i64())); }, {"norm", "int64"}),
  };
}

std::vector<Row> parallel_rows() {
  namespace comm = parallel::comm;
  const Tensor a = wick::zeros({2, 3}, f32(cpu(0)));
  const Tensor b = wick::zeros({2, 3}, f64(cpu(1)));
  const std::vector<Device> two{cpu(0), cpu(1)};
  return {
      row<ValueError>("replicate a module that is not on devices[0]",
                      [=] { parallel::replicate(std::make_shared<nn::LinearImpl>(3, 2, f64(cpu(1))), two); },
                      {"replicate", "devices[0] (cpu:0)", "cpu:1"}),
      row<IndexError>("scatter a 0-dim tensor", [=] { comm::scatter(wick::zeros({}, f32()), two); },
                      {"scatter", "0-dim"}),
      row<ValueError>("scatter with chunk sizes that do not add up",
                      [=] {
                        comm::scatter(a, two, {1, 5});
                      },
                      {"scatter", "chunk_sizes", "sum to 2"}),
      row<TypeError>("gather tensors of different dtypes",
                     [=] {
                       comm::gather({a, b}, 0, cpu(0));
                     },
                     {"gather", "tensor 1", "float64", "float32"}),
      row<TypeError>("reduce_add of different dtypes",
                     [=] {
                       comm::reduce_add({a, b}, cpu(0));
                     },
                     {"reduce_add", "input 1", "float64", "float32"}),
      row<ValueError>("reduce_add to a device that holds none of the tensors",
                      [=] {
                        comm::reduce_add({a, wick::zeros({2, 3}, f32(cpu(1)))}, cpu(2));
                      },
                      {"reduce_add", "cpu:2", "cpu:0", "cpu:1"}),
      row<TypeError>("gather_out into a tensor of another dtype",
                     [=] {
                       comm::gather_out({a, a}, wick::zeros({4, 3}, f64()), 0);
                     },
                     {"gather_out", "float32", "float64"}),
      row<TypeError>("gather of replica outputs of different kinds",
                     [=] {
                       parallel::gather(std::vector<nn::Value>{nn::Value(a), nn::Value(int64_t{3})}, cpu(0));
                     },
                     {"gather", "replica 1", "Int 3", "Tensor"}),
      row<IndexError>("gather of dicts with different keys",
                      [=] {
                        parallel::gather(std::vector<nn::Value>{nn::Value::dict({"x"}, {nn::Value(a)}),
                                                                nn::Value::dict({"y"}, {nn::Value(a)})},
                                         cpu(0));
                      },
                      {"gather", "replica 1", "'x'"}),
      row<IndexError>("a reduce root that is not an input",
                      [=] {
                        parallel::local_communicator().reduce({a, a}, a, 5);
                      },
                      {"Communicator::reduce", "root 5", "2 inputs"}),
      row<ValueError>(
          "parallel_apply with more modules than inputs",
          [=] {
            auto m = std::make_shared<nn::LinearImpl>(3, 2, f32());
            parallel::parallel_apply(std::vector<std::shared_ptr<nn::Module>>{m, m}, std::vector<Tensor>{a}, two);
          },
          {"parallel_apply", "modules 2", "inputs 1"}),
      row<TypeError>(
          "a replica that fails keeps its error's class",
          [=] {
            auto m = std::make_shared<nn::LinearImpl>(3, 2, f32());
            auto replicas = parallel::replicate(m, two);
            parallel::parallel_apply(replicas, std::vector<Tensor>{a, wick::zeros({2, 3}, f64(cpu(1)))}, two);
          },
          {"in replica 1 on device cpu:1", "linear", "float64", "float32"}),
      row<ValueError>("DataParallel of a module that is not on device_ids[0]",
                      [=] {
                        auto dp = std::make_shared<parallel::DataParallel>(
                            std::make_shared<nn::LinearImpl>(3, 2, f32(cpu(1))), two);
                        dp->forward(a);
                      },
                      {"device_ids[0]", "cpu:0", "cpu:1"}),
      row<TypeError>("DataParallel of a module that returns no Tensor",
                     [=] { parallel::DataParallel(std::make_shared<ReturnsInt>(), two).forward(a); },
                     {"DataParallel", "Int 3", "Tensor"}),
  };
}

}  // namespace

TEST_CASE("typed errors: core") { check_rows(core_rows()); }
TEST_CASE("typed errors: autograd") { check_rows(autograd_rows()); }
TEST_CASE("typed errors: nn modules, functional, optimizers, state dicts") { check_rows(nn_rows()); }
TEST_CASE("typed errors: files (safetensors, checkpoints, IDX)") {
  TempDir dir("wick-errors-test");
  check_rows(file_rows(dir));
}
TEST_CASE("typed errors: parallel") { check_rows(parallel_rows()); }
TEST_CASE("typed errors: the tensor API") { check_rows(tensor_api_rows()); }

TEST_CASE("typed errors: the table covers at least 40 bad inputs") {
  TempDir dir("wick-errors-test");
  const size_t n = core_rows().size() + autograd_rows().size() + nn_rows().size() + file_rows(dir).size() +
                   parallel_rows().size() + tensor_api_rows().size();
  CHECK(n >= 40);
}

TEST_CASE("typed errors: no GPU is a DeviceUnavailable, and probes catch only that") {
  // default_device_ids catches DeviceUnavailable only; on a machine without a GPU (or without
  // CUDA) it is empty, and data_parallel without device_ids then says so with DeviceUnavailable.
  std::vector<Device> ids;
  REQUIRE_NOTHROW(ids = parallel::default_device_ids());
  if (!ids.empty()) {
    SUCCEED("this machine has a GPU");
    return;
  }
  auto m = std::make_shared<nn::LinearImpl>(3, 2, f32());
  check_rows({row<DeviceUnavailable>("data_parallel with no devices at all",
                                     [=] {
                                       parallel::data_parallel(m, wick::zeros({2, 3}, f32()));
                                     },
                                     {"data_parallel", "no devices"}),
              row<DeviceUnavailable>("cuda:0 where there is no GPU", [] { wick::zeros({2}, f32(Device("cuda:0"))); },
                                     {"cuda"}),
              row<DeviceUnavailable>("a DeviceGuard on cuda:0 where there is no GPU",
                                     [] { DeviceGuard g(Device("cuda:0")); }, {"cuda"})});
}

TEST_CASE("typed errors: a rethrown error keeps its class and gains context") {
  auto check_kept = [](const Error& original, const char* expected) {
    try {
      rethrow_with_context(original, "while testing: ");
    } catch (const Error& e) {
      CHECK(class_of(e) == expected);
      CHECK(std::string(e.what()) == std::string("while testing: ") + original.what());
    }
  };
  check_kept(ValueError("v"), "ValueError");
  check_kept(TypeError("t"), "TypeError");
  check_kept(IndexError("i"), "IndexError");
  check_kept(NotImplementedError("n"), "NotImplementedError");
  check_kept(StateError("s"), "StateError");
  check_kept(FormatError("f"), "FormatError");
  check_kept(IOError("io"), "IOError");
  check_kept(DeviceUnavailable("d"), "DeviceUnavailable");
  check_kept(BackendError("b"), "BackendError");
  check_kept(OutOfMemoryError("oom"), "OutOfMemoryError");

  // Through a reference to the base, and twice over.
  try {
    try {
      WICK_CHECK_INDEX(false, "inner: slot {} is not there", 7);
    } catch (const Error& e) {
      rethrow_with_context(e, "middle: ");
    }
  } catch (const Error& e) {
    REQUIRE_THROWS_AS(rethrow_with_context(e, "outer: "), IndexError);
    CHECK_THROWS_WITH(rethrow_with_context(e, "outer: "), "outer: middle: inner: slot 7 is not there");
  }

  // with_message gives a copy of the same class, ready to be stored and rethrown later.
  const StateError s("old");
  std::exception_ptr p = s.with_message("new");
  REQUIRE_THROWS_AS(std::rethrow_exception(p), StateError);
  CHECK_THROWS_WITH(std::rethrow_exception(p), "new");

  // A class of one's own that does not override with_message is rethrown as its wick base.
  struct MyError : IndexError {
    using IndexError::IndexError;
  };
  try {
    rethrow_with_context(MyError("mine"), "ctx: ");
  } catch (const Error& e) {
    CHECK(class_of(e) == "IndexError");
  }
}

TEST_CASE("typed errors: the typed macros raise their class") {
  CHECK_THROWS_AS([] { WICK_CHECK(false, "x"); }(), ValueError);
  CHECK_THROWS_AS([] { WICK_FAIL("x"); }(), ValueError);
  CHECK_THROWS_AS([] { WICK_CHECK_TYPE(false, "x"); }(), TypeError);
  CHECK_THROWS_AS([] { WICK_CHECK_INDEX(false, "x"); }(), IndexError);
  CHECK_THROWS_AS([] { WICK_CHECK_NOT_IMPLEMENTED(false, "x"); }(), NotImplementedError);
  CHECK_THROWS_AS([] { WICK_CHECK_STATE(false, "x"); }(), StateError);
  CHECK_THROWS_AS([] { WICK_CHECK_FORMAT(false, "x"); }(), FormatError);
  CHECK_THROWS_AS([] { WICK_CHECK_IO(false, "x"); }(), IOError);
  CHECK_THROWS_AS([] { WICK_CHECK_T(DeviceUnavailable, false, "x"); }(), DeviceUnavailable);
  CHECK_THROWS_AS([] { WICK_FAIL_T(OutOfMemoryError, "{} bytes", 5); }(), BackendError);
  CHECK_NOTHROW([] { WICK_CHECK_INDEX(true, "x"); }());
}
