// Hostile input (Notes [Loader limits] and [Checked sizes], docs/hostile-input.md):
// - the committed reproducers under tests/data/hostile/ (nested JSON through every loader entry
//   point, IDX files that claim gigabytes, a loaded shape whose strides overflow) give the right
//   wick::Error class fast: each runs in a forked child under a lowered address-space limit
//   (64 MiB above what the process already maps; not under ASan, which maps terabytes of shadow)
//   and must stay within 1 s of CPU time and 64 MiB of extra resident memory;
// - a catalogue of bad calls on sizes and conversions (here) and on optimizer options, files and
//   parallel (hostile_input_files_test.cpp), each with its exact class and words its message must
//   contain (the op and the operands), continuing the table of error_types_test.cpp (together
//   they hold more than 100 rows);
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

[[maybe_unused]] const bool registered = add_row_tables({
    {"sizes", [](const TempDir&) { return size_rows(); }},
    {"conversions", [](const TempDir&) { return conversion_rows(); }},
});

}  // namespace

TEST_CASE("hostile input: sizes that overflow are a ValueError naming the op and the shape") {
  check_rows(size_rows());
}
TEST_CASE("hostile input: conversions of scalars, ranges and device indices are checked") {
  check_rows(conversion_rows());
}

TEST_CASE("hostile input: the catalogue, with error_types_test.cpp's table, holds at least 100 bad calls") {
  TempDir dir("wick-hostile-test");
  size_t mine = 0;
  for (const char* table : {"sizes", "conversions", "optimizer", "files", "parallel"}) {
    if (!row_tables().count(table)) FAIL("no hostile-input table named " << table);
    mine += row_tables().at(table)(dir).size();
  }
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
