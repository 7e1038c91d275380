// Training checkpoints (model + optimizer + epoch): they resume bit-identically, one that does
// not fit changes nothing, nn::load(optimizer) reads one, strict = false reports the keys, and
// tensors of dtypes wick cannot hold. Model checkpoints: checkpoint_test.cpp.
#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/checkpoint_nets.h"
#include "support/temp_dir.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/generator.h"
#include "wick/nn/checkpoint.h"
#include "wick/nn/nn.h"
#include "wick/nn/optim/optim.h"
#include "wick/nn/safetensors.h"

using namespace wick;
using namespace wick::test::checkpoint_nets;
namespace fs = std::filesystem;

namespace {

using TempDir = wick::test::TempDir;

// Whether two tensors hold the same bytes (dtype, shape and every bit).
bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes()) return false;
  const Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

std::string text_of(const std::string& path) {
  std::ifstream i(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(i), std::istreambuf_iterator<char>()};
}

// An entry of a dtype wick cannot hold, added to a file by header surgery.
struct Foreign {
  std::string name, dtype, shape;  // shape as JSON: "[2]"
  std::string data;                // its bytes (their count sets data_offsets, right or wrong)
};

// `file` (a safetensors image written by wick) with `extra` entries put first in its header and
// their bytes appended to its data section.
std::string with_foreign(const std::string& file, const std::vector<Foreign>& extra) {
  REQUIRE(file.size() >= 8);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(file[static_cast<size_t>(i)]);
  std::string header = file.substr(8, n), data = file.substr(8 + n);
  while (!header.empty() && header.back() == ' ') header.pop_back();
  REQUIRE(header.size() > 2);  // wick always writes __metadata__
  std::string entries;
  for (const Foreign& e : extra) {
    entries += fmt::format(R"("{}":{{"dtype":"{}","shape":{},"data_offsets":[{},{}]}},)", e.name, e.dtype, e.shape,
                           data.size(), data.size() + e.data.size());
    data += e.data;
  }
  header = "{" + entries + header.substr(1);
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  return out + header + data;
}

void train_steps(nn::Module& net, optim::Optimizer& opt, int steps) {
  net.train();
  for (int s = 0; s < steps; ++s) {
    opt.zero_grad();
    Tensor out = net.forward_tensor(input().mul(1.0 + s));
    Tensor target = wick::tensor(std::vector<int64_t>{0, 3, 1}, {3}, TensorOptions(kInt64));
    nn::F::cross_entropy(out, target).backward();
    opt.step();
  }
}

}  // namespace

TEST_CASE("checkpoint: a training checkpoint resumes bit-identically", "[checkpoint]") {
  TempDir dir("wick-ckpt-test");
  const std::string path = dir.file("train.safetensors");
  for (int kind = 0; kind < 2; ++kind) {
    INFO((kind == 0 ? "Adam" : "SGD"));
    auto net = make_net(1);
    std::unique_ptr<optim::Optimizer> opt;
    if (kind == 0)
      opt = std::make_unique<optim::Adam>(net->parameters(), optim::AdamOptions(1e-2).amsgrad(true));
    else
      opt = std::make_unique<optim::SGD>(net->parameters(), optim::SGDOptions(0.05).momentum(0.9));
    train_steps(*net, *opt, 3);
    nn::save_checkpoint(path, *net, *opt, 3, {{"note", "hello"}});
    const auto saved = values(*net);

    auto net2 = make_net(7);
    std::unique_ptr<optim::Optimizer> opt2;
    if (kind == 0)
      opt2 = std::make_unique<optim::Adam>(net2->parameters(), optim::AdamOptions(0.5));
    else
      opt2 = std::make_unique<optim::SGD>(net2->parameters(), optim::SGDOptions(0.5));
    nn::CheckpointInfo info = nn::load_checkpoint(path, *net2, *opt2);
    CHECK(info.epoch == 3);
    CHECK(info.metadata.at("note") == "hello");
    CHECK(opt2->param_groups()[0].options().get_lr() == opt->param_groups()[0].options().get_lr());
    train_steps(*net, *opt, 2);
    train_steps(*net2, *opt2, 2);
    CHECK(values(*net2) == values(*net));

    // The model alone loads from a training checkpoint too (optimizer entries ignored), and gets
    // the values the model had when it was saved.
    auto net3 = make_net(8);
    CHECK(values(*net3) != saved);  // different initial values, so the load below shows
    nn::load(*net3, path);
    CHECK(values(*net3) == saved);
  }
}

TEST_CASE("checkpoint: a training checkpoint that does not fit changes neither model nor optimizer", "[checkpoint]") {
  TempDir dir("wick-ckpt-test");
  auto net = make_net(1);
  optim::SGD sgd(net->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  train_steps(*net, sgd, 2);
  nn::save_checkpoint(dir.file("sgd.safetensors"), *net, sgd, 1);
  nn::save(*net, dir.file("model-only.safetensors"));

  auto net2 = make_net(2);
  optim::Adam adam(net2->parameters(), optim::AdamOptions(1e-3));
  train_steps(*net2, adam, 1);
  const auto model_before = values(*net2);
  const auto opt_before = adam.state_dict();

  // The model part fits, the optimizer part does not (SGD state into Adam): both unchanged.
  CHECK_THROWS_WITH(
      nn::load_checkpoint(dir.file("sgd.safetensors"), *net2, adam),
      Catch::Contains("nothing was loaded") && Catch::Contains("the state dict is for SGD but this optimizer is Adam"));
  CHECK(values(*net2) == model_before);
  auto opt_after = adam.state_dict();
  CHECK(opt_after.state.keys() == opt_before.state.keys());
  for (const auto& [k, t] : opt_before.state) CHECK(opt_after.state.at(k).to_vector<double>() == t.to_vector<double>());

  // Model mismatch and optimizer mismatch together: both reported.
  auto other = make_net(3, 6);
  optim::Adam adam2(other->parameters(), optim::AdamOptions(1e-3));
  CHECK_THROWS_WITH(
      nn::load_checkpoint(dir.file("sgd.safetensors"), *other, adam2),
      Catch::Contains("Model:") && Catch::Contains("size mismatch for 5.weight") && Catch::Contains("Optimizer:"));
  CHECK_THROWS_WITH(nn::load_checkpoint(dir.file("model-only.safetensors"), *net2, adam),
                    Catch::Contains("not a training checkpoint"));

  // Optimizer-only files.
  nn::save(sgd, dir.file("opt.safetensors"));
  optim::SGD sgd2(net->parameters(), optim::SGDOptions(0.5));
  nn::load(sgd2, dir.file("opt.safetensors"));
  CHECK(sgd2.param_groups()[0].options().get_lr() == 0.05);
  CHECK_THROWS_WITH(nn::load(adam, dir.file("opt.safetensors")), Catch::Contains("is for SGD"));
}

TEST_CASE("checkpoint: nn::load(optimizer) reads a training checkpoint, ignoring the model's tensors", "[checkpoint]") {
  TempDir dir("wick-ckpt-test");
  const std::string path = dir.file("train.safetensors");
  auto net = make_net(1);
  optim::Adam adam(net->parameters(), optim::AdamOptions(1e-2).amsgrad(true));
  train_steps(*net, adam, 3);
  nn::save_checkpoint(path, *net, adam, 3);

  auto net2 = make_net(2);
  optim::Adam adam2(net2->parameters(), optim::AdamOptions(0.5));
  const auto model_before = values(*net2);
  nn::load(adam2, path);
  const optim::OptimizerStateDict want = adam.state_dict(), got = adam2.state_dict();
  CHECK(got.groups_json() == want.groups_json());
  REQUIRE(got.state.keys() == want.state.keys());
  for (const auto& [k, t] : want.state) {
    INFO(k);
    CHECK(same_bits(got.state.at(k), t));
  }
  CHECK(values(*net2) == model_before);  // the model's tensors in the file were not loaded anywhere

  // A file that is not a training checkpoint still may hold nothing but optimizer state.
  auto data = nn::load_safetensors(path);
  data.metadata.erase("wick.epoch");
  nn::save_safetensors(dir.file("no-epoch.safetensors"), data.tensors, data.metadata);
  CHECK_THROWS_WITH(nn::load(adam2, dir.file("no-epoch.safetensors")),
                    Catch::Contains("unexpected key(s) for an optimizer") && Catch::Contains("\"0.weight\""));
}

TEST_CASE("checkpoint: load_checkpoint with strict = false reports the model's missing and unexpected keys",
          "[checkpoint]") {
  TempDir dir("wick-ckpt-test");
  auto net = make_net(1);
  optim::SGD sgd(net->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  train_steps(*net, sgd, 2);
  nn::save_checkpoint(dir.file("full.safetensors"), *net, sgd, 2);
  // The same checkpoint without the model's "5.bias" and with an "extra.weight".
  auto data = nn::load_safetensors(dir.file("full.safetensors"));
  std::vector<nn::NamedTensor> tensors;
  for (const auto& [k, t] : data.tensors)
    if (k != "5.bias") tensors.emplace_back(k, t);
  tensors.emplace_back("extra.weight", wick::zeros({2}));
  const std::string path = dir.file("partial.safetensors");
  nn::save_safetensors(path, tensors, data.metadata);

  auto net2 = make_net(2);
  optim::SGD sgd2(net2->parameters(), optim::SGDOptions(0.5));
  const Tensor bias_before = net2->get_parameter("5.bias").clone();
  CHECK_THROWS_WITH(nn::load_checkpoint(path, *net2, sgd2),
                    Catch::Contains("\"5.bias\"") && Catch::Contains("\"extra.weight\""));
  const nn::CheckpointInfo info = nn::load_checkpoint(path, *net2, sgd2, /*strict=*/false);
  CHECK(info.epoch == 2);
  CHECK(info.model_keys.missing_keys == std::vector<std::string>{"5.bias"});
  CHECK(info.model_keys.unexpected_keys == std::vector<std::string>{"extra.weight"});
  CHECK(same_bits(net2->get_parameter("5.weight"), net->get_parameter("5.weight")));
  CHECK(same_bits(net2->get_parameter("5.bias"), bias_before));  // missing: kept its own value
  CHECK(sgd2.param_groups()[0].options().get_lr() == 0.05);
  // A complete checkpoint reports no keys.
  const nn::CheckpointInfo full = nn::load_checkpoint(dir.file("full.safetensors"), *net2, sgd2, false);
  CHECK(full.model_keys.missing_keys.empty());
  CHECK(full.model_keys.unexpected_keys.empty());
}

// Note [Unsupported safetensors dtypes]: PyTorch's load_state_dict(strict=False) ignores keys the
// model does not have, whatever they hold; so does wick for tensors of dtypes it cannot hold.
TEST_CASE("checkpoint: tensors of dtypes wick cannot hold load with strict = false when the model lacks them",
          "[checkpoint]") {
  using Catch::Contains;
  TempDir dir("wick-ckpt-test");
  manual_seed(1);
  auto src = std::make_shared<nn::LinearImpl>(2, 1);
  nn::save(*src, dir.file("src.safetensors"));
  const std::string src_bytes = text_of(dir.file("src.safetensors"));
  const std::string f16x2("\x00\x3c\x00\x40", 4), bf16x1("\x80\x3f", 2);
  const std::string path =
      dir.write("extra.safetensors",
                with_foreign(src_bytes, {{"half.w", "F16", "[2]", f16x2}, {"brain.w", "BF16", "[1]", bf16x1}}));

  manual_seed(2);
  auto dst = std::make_shared<nn::LinearImpl>(2, 1);
  const auto before = values(*dst);
  REQUIRE(before != values(*src));
  // strict: the unexpected keys are named with their dtypes; nothing changes.
  CHECK_THROWS_AS(nn::load(*dst, path), IndexError);
  CHECK_THROWS_WITH(nn::load(*dst, path), Contains(path) && Contains("Unexpected key(s) in state_dict") &&
                                              Contains("\"half.w\" (F16)") && Contains("\"brain.w\" (BF16)") &&
                                              Contains("BOOL, I64, F32, F64"));
  CHECK(values(*dst) == before);
  // strict = false: the model's keys load, the others are reported.
  const nn::LoadStateDictResult r = nn::load(*dst, path, /*strict=*/false);
  CHECK(r.missing_keys.empty());
  CHECK(r.unexpected_keys == std::vector<std::string>{"half.w", "brain.w"});
  CHECK(same_bits(dst->get_parameter("weight"), src->get_parameter("weight")));
  CHECK(same_bits(dst->get_parameter("bias"), src->get_parameter("bias")));
  // Reading every tensor still refuses them.
  CHECK_THROWS_AS(nn::load_safetensors(path), NotImplementedError);
  CHECK_THROWS_WITH(nn::load_safetensors(path), Contains("\"half.w\" (F16)"));

  // A key the model has, in such a dtype: a dtype mismatch naming the key, the dtype and wick's
  // dtypes, with or without strict; with the wrong shape too, a size mismatch (ValueError).
  const std::string weight_only =
      nn::serialize_safetensors({{"weight", src->get_parameter("weight")}}, {{"format", "pt"}});
  const std::string needs = dir.write("needs.safetensors", with_foreign(weight_only, {{"bias", "F16", "[1]", "ab"}}));
  for (bool strict : {true, false}) {
    INFO("strict " << strict);
    CHECK_THROWS_AS(nn::load(*dst, needs, strict), TypeError);
    CHECK_THROWS_WITH(nn::load(*dst, needs, strict), Contains(needs) && Contains("dtype mismatch for bias") &&
                                                         Contains("dtype F16") && Contains("float32") &&
                                                         Contains("BOOL, I64, F32, F64"));
  }
  const std::string wrong_shape =
      dir.write("wrong-shape.safetensors", with_foreign(weight_only, {{"bias", "F16", "[3]", "abcdef"}}));
  CHECK_THROWS_AS(nn::load(*dst, wrong_shape, false), ValueError);
  CHECK_THROWS_WITH(nn::load(*dst, wrong_shape, false),
                    Contains("size mismatch for bias") && Contains("dtype mismatch for bias"));
  CHECK(same_bits(dst->get_parameter("weight"), src->get_parameter("weight")));  // unchanged by the failures

  // The size checks run on those entries too: F16 is 2 bytes per element.
  const std::string bad_offsets =
      dir.write("bad-offsets.safetensors", with_foreign(src_bytes, {{"half.w", "F16", "[2]", f16x2 + "xy"}}));
  CHECK_THROWS_AS(nn::load(*dst, bad_offsets, false), FormatError);
  CHECK_THROWS_WITH(nn::load(*dst, bad_offsets, false),
                    Contains(bad_offsets) && Contains("\"half.w\"") && Contains("dtype F16 and shape [2] need 4"));
  // A dtype that is no safetensors dtype fails the whole file, as before.
  const std::string f17 = dir.write("f17.safetensors", with_foreign(src_bytes, {{"half.w", "F17", "[2]", f16x2}}));
  CHECK_THROWS_AS(nn::load(*dst, f17, false), FormatError);
  CHECK_THROWS_WITH(nn::load(*dst, f17, false), Contains(f17) && Contains("\"F17\" is not a safetensors dtype"));
}

TEST_CASE("checkpoint: training checkpoints with tensors of dtypes wick cannot hold", "[checkpoint]") {
  using Catch::Contains;
  TempDir dir("wick-ckpt-test");
  auto net = make_net(1);
  optim::SGD sgd(net->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  train_steps(*net, sgd, 2);
  nn::save_checkpoint(dir.file("full.safetensors"), *net, sgd, 2);
  const std::string full = text_of(dir.file("full.safetensors"));
  const std::string f16x2("\x00\x3c\x00\x40", 4);

  // A model key the model lacks.
  const std::string path = dir.write("extra.safetensors", with_foreign(full, {{"head.half", "F16", "[2]", f16x2}}));
  auto net2 = make_net(2);
  optim::SGD sgd2(net2->parameters(), optim::SGDOptions(0.5));
  const auto before = values(*net2);
  CHECK_THROWS_AS(nn::load_checkpoint(path, *net2, sgd2), IndexError);
  CHECK_THROWS_WITH(nn::load_checkpoint(path, *net2, sgd2),
                    Contains("nothing was loaded") && Contains("\"head.half\" (F16)"));
  CHECK(values(*net2) == before);
  CHECK(sgd2.param_groups()[0].options().get_lr() == 0.5);
  const nn::CheckpointInfo info = nn::load_checkpoint(path, *net2, sgd2, /*strict=*/false);
  CHECK(info.epoch == 2);
  CHECK(info.model_keys.missing_keys.empty());
  CHECK(info.model_keys.unexpected_keys == std::vector<std::string>{"head.half"});
  CHECK(same_bits(net2->get_parameter("5.weight"), net->get_parameter("5.weight")));
  CHECK(sgd2.param_groups()[0].options().get_lr() == 0.05);
  optim::SGD sgd3(net2->parameters(), optim::SGDOptions(0.5));
  nn::load(sgd3, path);  // the model's tensors, this one included, are not the optimizer's business
  CHECK(sgd3.param_groups()[0].options().get_lr() == 0.05);

  // Optimizer state of such a dtype: the optimizer needs all of its state, so a TypeError even
  // with strict = false, and nothing changes; a model load ignores the optimizer's entries.
  const std::string opt_path = dir.write(
      "opt-f16.safetensors", with_foreign(full, {{"optimizer.state.9.momentum_buffer", "F16", "[2]", f16x2}}));
  auto net3 = make_net(3);
  optim::SGD sgd4(net3->parameters(), optim::SGDOptions(0.5).momentum(0.9));
  const auto before3 = values(*net3);
  CHECK_THROWS_AS(nn::load_checkpoint(opt_path, *net3, sgd4, false), TypeError);
  CHECK_THROWS_WITH(nn::load_checkpoint(opt_path, *net3, sgd4, false),
                    Contains("Optimizer:") && Contains("\"optimizer.state.9.momentum_buffer\" (F16)") &&
                        Contains("BOOL, I64, F32, F64"));
  CHECK(values(*net3) == before3);
  CHECK(sgd4.param_groups()[0].options().get_lr() == 0.5);
  CHECK_THROWS_AS(nn::load(sgd4, opt_path), TypeError);
  CHECK_THROWS_WITH(nn::load(sgd4, opt_path), Contains(opt_path) && Contains("optimizer.state.9.momentum_buffer"));
  nn::load(*net3, opt_path);
  CHECK(same_bits(net3->get_parameter("5.weight"), net->get_parameter("5.weight")));
}

TEST_CASE("checkpoint: an optimizer state dict saved on its own is the optimizer's file", "[checkpoint]") {
  // nn::save(state dict, path) writes what nn::save(optimizer, path) writes, byte for byte, and
  // load_optimizer_state_dict reads it back entry for entry, with load(optimizer)'s file checks.
  TempDir dir("wick-ckpt-test");
  auto net = make_net(1);
  optim::Adam adam(net->parameters(), optim::AdamOptions(1e-2).amsgrad(true));
  train_steps(*net, adam, 2);
  nn::save(adam, dir.file("opt.safetensors"));
  nn::save(adam.state_dict(), dir.file("dict.safetensors"));
  CHECK(text_of(dir.file("dict.safetensors")) == text_of(dir.file("opt.safetensors")));
  const optim::OptimizerStateDict want = adam.state_dict(),
                                  got = nn::load_optimizer_state_dict(dir.file("dict.safetensors"));
  CHECK(got.optimizer == want.optimizer);
  CHECK(got.groups_json() == want.groups_json());
  REQUIRE(got.state.keys() == want.state.keys());
  for (const auto& [k, t] : want.state) {
    INFO(k);
    CHECK(same_bits(got.state.at(k), t));
  }
  nn::save(*net, dir.file("model.safetensors"));  // a model's file holds no optimizer state
  CHECK_THROWS_AS(nn::load_optimizer_state_dict(dir.file("model.safetensors")), FormatError);
}
