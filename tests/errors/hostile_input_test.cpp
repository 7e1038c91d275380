// Hostile input (Notes [Loader limits] and [Checked sizes], docs/hostile-input.md):
// - the committed reproducers under tests/data/hostile/ (nested JSON through every loader entry
//   point, IDX files that claim gigabytes, a loaded shape whose strides overflow) give the right
//   wick::Error class fast: each runs in a forked child under a lowered address-space limit
//   (64 MiB above what the process already maps; not under ASan, which maps terabytes of shadow)
//   and must stay within 1 s of CPU time and 64 MiB of extra resident memory;
// - a catalogue of bad calls on sizes, conversions, options and files, each with its exact class
//   and words its message must contain (the op and the operands), continuing the table of
//   error_types_test.cpp (together they hold more than 100 rows);
// - error messages quote at most a short prefix of a bad value.
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

constexpr int64_t k40 = int64_t{1} << 40, k61 = int64_t{1} << 61, k62 = int64_t{1} << 62;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TensorOptions i64() { return TensorOptions(kInt64); }

std::vector<Row> size_rows() {
  const Tensor one = wick::zeros({1, 1}, f32());
  const Tensor empty0 = wick::zeros({0}, f32());
  const Tensor v4 = wick::zeros({4}, f32());
  return {
      {"zeros whose element count overflows",
       "ValueError",
       [] {
         wick::zeros({k40, k40}, f32());
       },
       {"empty", "[1099511627776, 1099511627776]", "overflow"}},
      {"empty whose byte count overflows",
       "ValueError",
       [] { wick::empty({k62}, f32()); },
       {"empty", "[4611686018427387904]", "4 bytes"}},
      {"ones int64 whose byte count overflows",
       "ValueError",
       [] { wick::ones({k62}, i64()); },
       {"empty", "[4611686018427387904]", "8 bytes"}},
      {"an empty shape whose strides overflow",
       "ValueError",
       [] {
         wick::zeros({0, k61, k61}, f32());
       },
       {"empty", "[0, 2305843009213693952, 2305843009213693952]", "strides"}},
      {"rand of an overflowing shape",
       "ValueError",
       [] {
         wick::rand({k40, k40}, f32());
       },
       {"empty", "[1099511627776, 1099511627776]"}},
      {"expand whose element count overflows",
       "ValueError",
       [=] {
         one.expand({k40, k40});
       },
       {"expand", "[1099511627776, 1099511627776]"}},
      {"expand then contiguous whose byte count overflows",
       "ValueError",
       [=] { wick::zeros({1}, f32()).expand({k62}).contiguous(); },
       {"empty", "[4611686018427387904]"}},
      {"expand of a tensor that requires grad",
       "ValueError",
       [] {
         wick::zeros({1, 1}, f64()).requires_grad_().expand({k40, k40, 4});
       },
       {"expand", "1099511627776"}},
      {"as_strided whose element count overflows",
       "ValueError",
       [=] {
         native::as_strided(one, {k40, k40}, {0, 0}, 0);
       },
       {"as_strided", "[1099511627776, 1099511627776]"}},
      {"as_strided with sizes and strides of different lengths",
       "ValueError",
       [=] {
         native::as_strided(one, {1, 1}, {0}, 0);
       },
       {"as_strided", "[1, 1]", "[0]"}},
      {"view of an empty tensor with overflowing strides",
       "ValueError",
       [=] {
         empty0.view({0, k61, k61});
       },
       {"view", "[0, 2305843009213693952, 2305843009213693952]"}},
      {"reshape whose known sizes overflow",
       "ValueError",
       [=] {
         empty0.reshape({k40, k40, k40, 0});
       },
       {"reshape", "[1099511627776, 1099511627776, 1099511627776, 0]"}},
      {"reshape with -1 whose known sizes overflow",
       "ValueError",
       [=] {
         empty0.reshape({-1, k62, 4});
       },
       {"reshape", "4611686018427387904"}},
      {"empty_strided whose extent overflows",
       "ValueError",
       [] {
         native::empty_strided({k40, 4}, {k40 * 16, 1}, kFloat32, kCPU);
       },
       {"empty_strided", "[1099511627776, 4]"}},
      {"empty_strided with a negative stride",
       "ValueError",
       [] {
         native::empty_strided({2, 2}, {-1, 1}, kFloat32, kCPU);
       },
       {"empty_strided", "negative stride -1"}},
      {"tensor() whose shape overflows",
       "ValueError",
       [] {
         wick::tensor(std::vector<float>{}, {k40, k40, 0});
       },
       {"tensor", "[1099511627776, 1099511627776, 0]"}},
      {"narrow whose start + length overflows",
       "IndexError",
       [=] { wick::narrow(v4, 0, 2, kMax); },
       {"narrow", "start 2", "9223372036854775807", "[4]"}},
      {"split_with_sizes whose sum overflows",
       "ValueError",
       [=] {
         wick::split_with_sizes(v4, {kMax, kMax, 2}, 0);
       },
       {"split_with_sizes", "9223372036854775807"}},
      {"cat whose sizes sum past int64",
       "ValueError",
       [] {
         const Tensor big = wick::zeros({1}, f32()).expand({k62});
         wick::cat({big, big});
       },
       {"cat", "sum past int64", "[4611686018427387904]"}},
      {"pad that overflows a size",
       "ValueError",
       [=] {
         nn::functional::pad(v4, {kMax, 1});
       },
       {"pad", "9223372036854775807", "overflows"}},
      {"matmul whose broadcast batch overflows",
       "ValueError",
       [] {
         wick::matmul(wick::zeros({1, 1, 1, 1}, f32()).expand({k40, 1, 1, 1}),
                      wick::zeros({1, 1, 1, 1}, f32()).expand({1, k40, 1, 1}));
       },
       {"matmul", "[1099511627776, 1099511627776]"}},
  };
}

std::vector<Row> conversion_rows() {
  return {
      {"arange past int64", "ValueError", [] { wick::arange(0, 1e30); }, {"arange", "1e+30"}},
      {"arange to infinity",
       "ValueError",
       [] { wick::arange(0.0, std::numeric_limits<double>::infinity(), 1.0); },
       {"arange", "inf", "finite"}},
      {"arange of int64 whose end does not fit",
       "ValueError",
       [] { wick::arange(0.0, 1e19, 1e18, TensorOptions(kInt64)); },
       {"arange", "1e+19", "int64"}},
      {"linspace of int64 whose end does not fit",
       "ValueError",
       [] { wick::linspace(0, 1e300, 3, i64()); },
       {"linspace", "1e+300", "int64"}},
      {"full of int64 with NaN",
       "ValueError",
       [] { wick::full({2}, std::nan(""), i64()); },
       {"full", "nan", "int64", "[2]"}},
      {"full of int64 with 1e300", "ValueError", [] { wick::full({2}, 1e300, i64()); }, {"full", "1e+300", "int64"}},
      {"fill_ of an int64 tensor with infinity",
       "ValueError",
       [] { wick::zeros({3}, i64()).fill_(std::numeric_limits<double>::infinity()); },
       {"fill_", "inf", "int64", "[3]"}},
      {"Scalar NaN to an integer", "ValueError", [] { (void)Scalar(std::nan("")).to_int(); }, {"Scalar", "nan"}},
      {"Scalar infinity to an integer",
       "ValueError",
       [] { (void)Scalar(std::numeric_limits<double>::infinity()).to<int64_t>(); },
       {"Scalar", "inf"}},
      {"Scalar 1e300 to int32",
       "ValueError",
       [] { (void)Scalar(1e300).to<int32_t>(); },
       {"Scalar", "1e+300", "4 bytes"}},
      {"Scalar 2^63 to int64",
       "ValueError",
       [] { (void)Scalar(9223372036854775808.0).to_int(); },
       {"Scalar", "9.223372036854776e+18"}},
      {"Scalar of an unsigned 2^63",
       "ValueError",
       [] { (void)Scalar(uint64_t{1} << 63); },
       {"Scalar", "9223372036854775808", "int64"}},
      {"Scalar 2^40 to int32",
       "ValueError",
       [] { (void)Scalar(int64_t{1} << 40).to<int32_t>(); },
       {"Scalar", "1099511627776", "4 bytes"}},
      {"Scalar -1 to uint32", "ValueError", [] { (void)Scalar(-1).to<uint32_t>(); }, {"Scalar", "-1", "unsigned"}},
      {"item<int32_t> of an int64 tensor holding -2^31 - 1",
       "ValueError",
       [] { (void)wick::full({}, int64_t{-2147483649}, i64()).item<int32_t>(); },
       {"Scalar", "-2147483649", "4 bytes"}},
      {"item<int64_t> of an infinite float",
       "ValueError",
       [] { (void)wick::full({}, std::numeric_limits<double>::infinity(), f64()).item<int64_t>(); },
       {"Scalar", "inf"}},
      {"a CPU device index past int16",
       "ValueError",
       [] { Device(DeviceType::CPU, 70000); },
       {"Device", "70000", "cpu"}},
      {"a negative CUDA device index", "ValueError", [] { Device(DeviceType::CUDA, -1); }, {"Device", "-1", "cuda"}},
      {"a device string past int16", "ValueError", [] { Device("cpu:70000"); }, {"Device", "cpu:70000"}},
  };
}

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

std::vector<Repro> reproducers() {
  auto lin = std::make_shared<nn::LinearImpl>(3, 2, f64());
  auto sgd = [lin] { return optim::SGD(lin->parameters(), optim::SGDOptions(0.1)); };
  const std::string deep = kHostile + "deep-header.safetensors";
  const std::string deep_meta = kHostile + "deep-optimizer-metadata.safetensors";
  return {
      {"deep JSON: load_safetensors", "FormatError", [=] { serialize::load_safetensors(deep); }},
      {"deep JSON: nn::load(model)", "FormatError", [=] { nn::load(*lin, deep); }},
      {"deep JSON: nn::load(optimizer)", "FormatError",
       [=] {
         auto o = sgd();
         nn::load(o, deep);
       }},
      {"deep JSON: load_checkpoint", "FormatError",
       [=] {
         auto o = sgd();
         nn::load_checkpoint(deep, *lin, o);
       }},
      {"deep JSON: a value followed by a key", "FormatError",
       [] { serialize::load_safetensors(kHostile + "deep-then-key.safetensors"); }},
      {"deep JSON: inside a dtype (error message dump)", "FormatError",
       [] { serialize::load_safetensors(kHostile + "deep-dtype.safetensors"); }},
      {"deep JSON: optimizer metadata, nn::load(optimizer)", "FormatError",
       [=] {
         auto o = sgd();
         nn::load(o, deep_meta);
       }},
      {"deep JSON: optimizer metadata, load_checkpoint", "FormatError",
       [=] {
         auto o = sgd();
         nn::load_checkpoint(deep_meta, *lin, o);
       }},
      {"IDX: 12 bytes claiming 3 GiB", "FormatError", [] { data::read_idx(kHostile + "claims-3gib-idx2-ubyte"); }},
      {"IDX: 30 gzip bytes claiming 3 GiB", "FormatError",
       [] { data::read_idx(kHostile + "claims-3gib-idx2-ubyte.gz"); }},
      {"IDX: 12 bytes claiming 768 MiB", "FormatError", [] { data::read_idx(kHostile + "claims-768mib-idx2-ubyte"); }},
      {"IDX: gzip bytes claiming 768 MiB", "FormatError",
       [] { data::read_idx(kHostile + "claims-768mib-idx2-ubyte.gz"); }},
      {"IDX: a claim past the limit", "FormatError", [] { data::read_idx(kHostile + "claims-huge-idx3-ubyte"); }},
      {"safetensors: shape [0, 2^61, 2^61]", "FormatError",
       [] { serialize::load_safetensors(kHostile + "stride-overflow.safetensors"); }},
      {"zeros({2^40, 2^40})", "ValueError",
       [] {
         wick::zeros({k40, k40}, f32());
       }},
      {"empty({2^62}) float32", "ValueError", [] { wick::empty({k62}, f32()); }},
      {"expand({2^62}).contiguous()", "ValueError", [] { wick::zeros({1}, f32()).expand({k62}).contiguous(); }},
      {"zeros({0, 2^61, 2^61})", "ValueError",
       [] {
         wick::zeros({0, k61, k61}, f32());
       }},
  };
}

}  // namespace

TEST_CASE("hostile input: sizes that overflow are a ValueError naming the op and the shape") {
  check_rows(size_rows());
}
TEST_CASE("hostile input: conversions of scalars, ranges and device indices are checked") {
  check_rows(conversion_rows());
}
TEST_CASE("hostile input: optimizer options and state are validated at load") {
  TempDir dir("wick-hostile-test");
  check_rows(optimizer_rows(dir));
}
TEST_CASE("hostile input: loaders reject deep JSON, false sizes and long values") { check_rows(file_rows()); }
TEST_CASE("hostile input: parallel sizes and devices") { check_rows(parallel_rows()); }

TEST_CASE("hostile input: the catalogue, with error_types_test.cpp's table, holds at least 100 bad calls") {
  TempDir dir("wick-hostile-test");
  const size_t mine = size_rows().size() + conversion_rows().size() + optimizer_rows(dir).size() + file_rows().size() +
                      parallel_rows().size();
  // error_types_test.cpp's table holds 83 rows; this file adds the rest.
  CHECK(mine + 83 >= 100);
  CHECK(mine >= 60);
}

TEST_CASE("hostile input: the committed reproducers fail fast, within 1 s and 64 MiB") {
  for (const Repro& r : reproducers()) {
    const Bounded b = run_bounded(r.call, r.expected);
    INFO(r.what << ": exit " << b.code << ", " << b.cpu_seconds << " s CPU, " << b.extra_rss_mib << " MiB extra RSS; "
                << b.message);
    CHECK(b.exited);
    CHECK(b.code == 0);
    CHECK(b.cpu_seconds < 1.0);
    CHECK(b.extra_rss_mib < 64.0);
  }
}

TEST_CASE("hostile input: a model, optimizer and checkpoint still load after the limits") {
  // The limits reject only what is hostile: a real checkpoint round-trips.
  TempDir dir("wick-hostile-test");
  auto lin = std::make_shared<nn::LinearImpl>(3, 2, f64());
  optim::Adam opt(lin->parameters(), optim::AdamOptions(0.01));
  lin->forward(wick::ones({4, 3}, f64())).sum().backward();
  opt.step();
  const std::string path = dir.file("ckpt.safetensors");
  nn::save_checkpoint(path, *lin, opt, 3);
  auto lin2 = std::make_shared<nn::LinearImpl>(3, 2, f64());
  optim::Adam opt2(lin2->parameters(), optim::AdamOptions(0.5));
  const nn::CheckpointInfo info = nn::load_checkpoint(path, *lin2, opt2);
  CHECK(info.epoch == 3);
  CHECK(static_cast<const optim::AdamOptions&>(opt2.param_groups()[0].options()).lr() == 0.01);
  CHECK((lin2->get_parameter("weight") - lin->get_parameter("weight")).abs().sum().item<double>() == 0.0);
}
