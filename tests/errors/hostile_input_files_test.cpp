// Hostile input (Notes [Loader limits] and [Checked sizes], docs/hostile-input.md): the catalogue's
// bad calls on optimizer options and state, loaders (deep JSON, false sizes, long values) and
// parallel sizes and devices, each with its exact class and words its message must contain. The
// reproducers, sizes and conversions: hostile_input_test.cpp.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "hostile_support.h"

using namespace wick;
using namespace wick::test::hostile;
using Catch::Matchers::Contains;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// An optimizer file whose JSON groups are `groups` (and optionally a step tensor).
std::string write_optimizer_file(const TempDir& dir, const std::string& name, const std::string& groups,
                                 std::vector<serialize::NamedTensor> tensors = {}) {
  const std::string path = dir.file(name);
  serialize::save_safetensors(path, tensors, {{"wick.optimizer", groups}, {"wick.epoch", "1"}});
  return path;
}

struct Model {
  std::shared_ptr<nn::LinearImpl> lin = std::make_shared<nn::LinearImpl>(3, 2, f64());
};

std::vector<Row> optimizer_rows(const TempDir& dir) {
  Model m;
  auto lin = m.lin;
  const std::string sgd_groups_bad_lr =
      R"({"optimizer":"SGD","param_groups":[{"params":[0,1],"lr":-1,"momentum":0,"dampening":0,)"
      R"("weight_decay":0,"nesterov":false,"maximize":false}]})";
  const std::string adam_groups_bad_beta =
      R"({"optimizer":"Adam","param_groups":[{"params":[0,1],"lr":0.1,"beta1":2,"beta2":0.999,)"
      R"("eps":1e-8,"weight_decay":0,"amsgrad":false,"maximize":false}]})";
  const std::string adam_groups =
      R"({"optimizer":"Adam","param_groups":[{"params":[0,1],"lr":0.1,"beta1":0.9,"beta2":0.999,)"
      R"("eps":1e-8,"weight_decay":0,"amsgrad":false,"maximize":false}]})";
  const std::string bad_lr = write_optimizer_file(dir, "bad-lr.safetensors", sgd_groups_bad_lr);
  const std::string bad_beta = write_optimizer_file(dir, "bad-beta.safetensors", adam_groups_bad_beta);
  auto state = [](double step) {
    return std::vector<serialize::NamedTensor>{{"optimizer.state.0.step", wick::full({}, step, f64())},
                                               {"optimizer.state.0.exp_avg", wick::zeros({2, 3}, f64())},
                                               {"optimizer.state.0.exp_avg_sq", wick::zeros({2, 3}, f64())}};
  };
  const std::string huge_step = write_optimizer_file(dir, "huge-step.safetensors", adam_groups, state(1e300));
  const std::string nan_step =
      write_optimizer_file(dir, "nan-step.safetensors", adam_groups, state(std::numeric_limits<double>::quiet_NaN()));
  const std::string deep_groups = std::string(100000, '[') + std::string(100000, ']');
  const std::string long_option =
      R"({"optimizer":"SGD","param_groups":[{"params":[0,1],"lr":")" + std::string(100000, 'x') + R"("}]})";
  return {
      {"SGD options with lr = -1",
       "ValueError",
       [=] {
         optim::SGDOptions o(0.1);
         auto v = o.values();
         v[0].second = -1;
         o.set_values(v);
       },
       {"SGD", "learning rate -1"}},
      {"nn::load of an SGD file with lr = -1",
       "ValueError",
       [=] {
         optim::SGD opt(lin->parameters(), optim::SGDOptions(0.1));
         nn::load(opt, bad_lr);
       },
       {"load", bad_lr, "SGD.load_state_dict", "learning rate -1"}},
      {"nn::load of an Adam file with beta1 = 2",
       "ValueError",
       [=] {
         optim::Adam opt(lin->parameters(), optim::AdamOptions(0.1));
         nn::load(opt, bad_beta);
       },
       {"load", bad_beta, "Adam.load_state_dict", "beta1 2"}},
      {"load_checkpoint of an Adam file with beta1 = 2",
       "ValueError",
       [=] {
         optim::Adam opt(lin->parameters(), optim::AdamOptions(0.1));
         nn::load_checkpoint(bad_beta, *lin, opt, /*strict=*/false);
       },
       {"load_checkpoint", bad_beta, "beta1 2", "nothing was loaded"}},
      {"nn::load of a saved step of 1e300",
       "ValueError",
       [=] {
         optim::Adam opt(lin->parameters(), optim::AdamOptions(0.1));
         nn::load(opt, huge_step);
       },
       {"load", huge_step, "state.0.step", "whole number"}},
      {"nn::load of a saved step of NaN",
       "ValueError",
       [=] {
         optim::Adam opt(lin->parameters(), optim::AdamOptions(0.1));
         nn::load(opt, nan_step);
       },
       {"load", nan_step, "state.0.step"}},
      {"optimizer groups nested 100000 deep",
       "FormatError",
       [=] { optim::OptimizerStateDict().set_groups_json(deep_groups); },
       {"optimizer state", "deeper than the limit of 64"}},
      {"an optimizer option that is a 100 KB string",
       "FormatError",
       [=] { optim::OptimizerStateDict().set_groups_json(long_option); },
       {"optimizer state", "\"lr\"", "xxx..."}},
  };
}

std::vector<Row> file_rows() {
  Model m;
  auto lin = m.lin;
  const std::string deep = kHostile + "deep-header.safetensors";
  const std::string deep_dtype = kHostile + "deep-dtype.safetensors";
  const std::string deep_then_key = kHostile + "deep-then-key.safetensors";
  const std::string deep_meta = kHostile + "deep-optimizer-metadata.safetensors";
  const std::string strides = kHostile + "stride-overflow.safetensors";
  const std::string idx12 = kHostile + "claims-3gib-idx2-ubyte";
  const std::string idx30 = kHostile + "claims-3gib-idx2-ubyte.gz";
  const std::string idx_huge = kHostile + "claims-huge-idx3-ubyte";
  const std::string idx12_768 = kHostile + "claims-768mib-idx2-ubyte";
  const std::string idx_gz_768 = kHostile + "claims-768mib-idx2-ubyte.gz";
  auto sgd = [lin] { return optim::SGD(lin->parameters(), optim::SGDOptions(0.1)); };
  const std::string long_dtype = safetensors_image(
      R"({"t":{"dtype":")" + std::string(1 << 20, 'Q') + R"(","shape":[1],"data_offsets":[0,4]}})", "abcd");
  std::string utf8;
  for (int i = 0; i < 100; ++i) utf8 += "\xc3\xa9";  // 100 x U+00E9, 2 bytes each
  const std::string utf8_shape =
      safetensors_image(R"({"t":{"dtype":"F32","shape":")" + utf8 + R"(","data_offsets":[0,4]}})", "abcd");
  std::string dims65 = "1";
  for (int i = 1; i < 65; ++i) dims65 += ",1";
  const std::string sixty_five =
      safetensors_image(R"({"t":{"dtype":"F32","shape":[)" + dims65 + R"(],"data_offsets":[0,4]}})", "abcd");
  return {
      {"load_safetensors of 60000 nested arrays",
       "FormatError",
       [=] { serialize::load_safetensors(deep); },
       {"safetensors", deep, "deeper than the limit of 64"}},
      {"nn::load(model) of 60000 nested arrays",
       "FormatError",
       [=] { nn::load(*lin, deep); },
       {"load", deep, "deeper than the limit of 64"}},
      {"nn::load(optimizer) of 60000 nested arrays",
       "FormatError",
       [=] {
         auto opt = sgd();
         nn::load(opt, deep);
       },
       {"load", deep, "deeper than the limit of 64"}},
      {"load_checkpoint of 60000 nested arrays",
       "FormatError",
       [=] {
         auto opt = sgd();
         nn::load_checkpoint(deep, *lin, opt);
       },
       {"load_checkpoint", deep, "deeper than the limit of 64"}},
      {"load_safetensors of a deep dtype value",
       "FormatError",
       [=] { serialize::load_safetensors(deep_dtype); },
       {"safetensors", deep_dtype, "deeper than the limit"}},
      {"load_safetensors of a deep value followed by a key",
       "FormatError",
       [=] { serialize::load_safetensors(deep_then_key); },
       {"safetensors", deep_then_key, "deeper than the limit"}},
      {"nn::load(optimizer) of deeply nested optimizer metadata",
       "FormatError",
       [=] {
         auto opt = sgd();
         nn::load(opt, deep_meta);
       },
       {"load", deep_meta, "optimizer state", "deeper than the limit of 64"}},
      {"load_checkpoint of deeply nested optimizer metadata",
       "FormatError",
       [=] {
         auto opt = sgd();
         nn::load_checkpoint(deep_meta, *lin, opt);
       },
       {"load_checkpoint", deep_meta, "optimizer state", "deeper than the limit of 64"}},
      {"nn::load(model) of a checkpoint with deeply nested optimizer metadata",
       "FormatError",
       [=] { nn::load(*lin, deep_meta); },
       {deep_meta, "optimizer state", "deeper than the limit of 64"}},
      {"a loaded shape [0, 2^61, 2^61] whose strides overflow",
       "FormatError",
       [=] { serialize::load_safetensors(strides); },
       {"safetensors", strides, "\"t\"", "too large"}},
      {"a 1 MiB dtype string",
       "FormatError",
       [=] { serialize::parse_safetensors(long_dtype.data(), long_dtype.size(), "long-dtype"); },
       {"safetensors", "long-dtype", "QQQ..."}},
      {"a shape that is a long UTF-8 string (the preview cuts inside a character)",
       "FormatError",
       [=] { serialize::parse_safetensors(utf8_shape.data(), utf8_shape.size(), "utf8"); },
       {"safetensors", "utf8", "shape must be an array", "..."}},
      {"saving a tensor name that is not UTF-8",
       "ValueError",
       [] {
         serialize::serialize_safetensors({{std::string("\xff\xfe"), wick::zeros({1}, f32())}});
       },
       {"save_safetensors", "UTF-8"}},
      {"a tensor of 65 dims",
       "FormatError",
       [=] { serialize::parse_safetensors(sixty_five.data(), sixty_five.size(), "dims"); },
       {"safetensors", "dims", "65 dims", "limit of 64"}},
      {"read_idx of 12 bytes claiming 3 GiB",
       "FormatError",
       [=] { data::read_idx(idx12); },
       {"read_idx", idx12, "[3, 1073741824", "limit of 1073741824 bytes"}},
      {"read_idx of 30 gzip bytes claiming 3 GiB",
       "FormatError",
       [=] { data::read_idx(idx30); },
       {"read_idx", idx30, "[3, 1073741824", "limit of 1073741824 bytes"}},
      {"read_idx of 12 bytes claiming 768 MiB",
       "FormatError",
       [=] { data::read_idx(idx12_768); },
       {"read_idx", idx12_768, "truncated", "[3, 268435456]", "805306368 bytes"}},
      {"read_idx of gzip bytes claiming 768 MiB",
       "FormatError",
       [=] { data::read_idx(idx_gz_768); },
       {"read_idx", idx_gz_768, "truncated", "[3, 268435456]", "805306368 bytes"}},
      {"read_idx of a claim past the limit",
       "FormatError",
       [=] { data::read_idx(idx_huge); },
       {"read_idx", idx_huge, "limit of 1073741824 bytes"}},
      {"load_idx_labels of 12 bytes claiming 768 MiB",
       "FormatError",
       [=] { data::load_idx_labels(idx12_768); },
       {"read_idx", idx12_768, "truncated"}},
  };
}

std::vector<Row> parallel_rows() {
  const Tensor a = wick::zeros({4, 3}, f32());
  const std::vector<Device> two{Device("cpu:0"), Device("cpu:1")};
  return {
      {"scatter with chunk sizes whose sum overflows",
       "ValueError",
       [=] {
         parallel::comm::scatter(a, two, {kMax, kMax});
       },
       {"scatter", "chunk_sizes", "9223372036854775807"}},
      {"scatter to a device index past int16",
       "ValueError",
       [=] {
         parallel::comm::scatter(a, {Device("cpu:0"), Device(DeviceType::CPU, 40000)});
       },
       {"Device", "40000"}},
  };
}

[[maybe_unused]] const bool registered = add_row_tables({
    {"optimizer", [](const TempDir& dir) { return optimizer_rows(dir); }},
    {"files", [](const TempDir&) { return file_rows(); }},
    {"parallel", [](const TempDir&) { return parallel_rows(); }},
});

}  // namespace

TEST_CASE("hostile input: optimizer options and state are validated at load") {
  TempDir dir("wick-hostile-test");
  check_rows(optimizer_rows(dir));
}
TEST_CASE("hostile input: loaders reject deep JSON, false sizes and long values") { check_rows(file_rows()); }
TEST_CASE("hostile input: parallel sizes and devices") { check_rows(parallel_rows()); }
