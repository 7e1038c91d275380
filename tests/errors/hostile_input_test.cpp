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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <typeinfo>
#include <vector>

#include "support/temp_dir.h"

using namespace wick;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

#if defined(__SANITIZE_ADDRESS__)
#define WICK_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WICK_TEST_ASAN 1
#endif
#endif

namespace {

const std::string kHostile = std::string(WICK_TEST_DATA_DIR) + "/hostile/";

// The exact (most derived) class of a wick error, by name.
std::string class_of(const Error& e) {
  if (dynamic_cast<const OutOfMemoryError*>(&e)) return "OutOfMemoryError";
  if (dynamic_cast<const BackendError*>(&e)) return "BackendError";
  if (dynamic_cast<const ValueError*>(&e)) return "ValueError";
  if (dynamic_cast<const TypeError*>(&e)) return "TypeError";
  if (dynamic_cast<const IndexError*>(&e)) return "IndexError";
  if (dynamic_cast<const NotImplementedError*>(&e)) return "NotImplementedError";
  if (dynamic_cast<const StateError*>(&e)) return "StateError";
  if (dynamic_cast<const FormatError*>(&e)) return "FormatError";
  if (dynamic_cast<const IOError*>(&e)) return "IOError";
  if (dynamic_cast<const DeviceUnavailable*>(&e)) return "DeviceUnavailable";
  return "Error";
}

using TempDir = wick::test::TempDir;

// ---- the catalogue ----

struct Row {
  std::string what;
  std::string expected;  // class name
  std::function<void()> call;
  std::vector<std::string> words;
};

void check_rows(const std::vector<Row>& rows) {
  for (const Row& r : rows) {
    INFO("row: " << r.what << " (expects " << r.expected << ")");
    bool threw = false;
    try {
      r.call();
    } catch (const Error& e) {
      threw = true;
      INFO("message: " << e.what());
      CHECK(class_of(e) == r.expected);
      for (const auto& w : r.words) CHECK_THAT(e.what(), Contains(w));
      CHECK(std::string(e.what()).size() < 1500);  // no bad value is quoted at length
    } catch (const std::exception& e) {
      FAIL("not a wick::Error: " << typeid(e).name() << ": " << e.what());
    }
    CHECK(threw);
  }
}

constexpr int64_t k40 = int64_t{1} << 40, k61 = int64_t{1} << 61, k62 = int64_t{1} << 62;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TensorOptions f32() { return TensorOptions(kFloat32); }
TensorOptions f64() { return TensorOptions(kFloat64); }
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

// A safetensors image with `header` and `data`.
std::string safetensors_image(const std::string& header, const std::string& data = "") {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
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

// ---- bounded runs of the reproducers ----

struct Bounded {
  bool exited = false;
  int code = -1;             // 0: a wick::Error of the expected class; see run_bounded
  std::string message;       // the error's class and message, from the child
  double cpu_seconds = 0;    // user + system time of the child
  double extra_rss_mib = 0;  // the child's peak resident memory above the parent's at the fork
};

long rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return 0;
}

// Runs fn in a forked child limited to 64 MiB of address space above the parent's (when not
// under ASan) and to 10 s of wall time. Exit codes: 0 the expected class, 1 another wick class,
// 2 std::bad_alloc, 3 another exception, 4 no exception.
Bounded run_bounded(const std::function<void()>& fn, const std::string& expected) {
  std::fflush(nullptr);
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const long parent_rss = rss_kib();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
#ifndef WICK_TEST_ASAN
    std::ifstream statm("/proc/self/statm");
    long pages = 0;
    statm >> pages;
    const rlim_t limit = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) + (rlim_t{64} << 20);
    struct rlimit rl {
      limit, limit
    };
    ::setrlimit(RLIMIT_AS, &rl);
#endif
    ::alarm(10);
    int code = 4;
    std::string msg;
    try {
      fn();
    } catch (const Error& e) {
      msg = class_of(e) + ": " + e.what();
      code = class_of(e) == expected ? 0 : 1;
    } catch (const std::bad_alloc&) {
      code = 2;
    } catch (...) {
      code = 3;
    }
    (void)!::write(fds[1], msg.data(), msg.size());
    ::_exit(code);
  }
  ::close(fds[1]);
  Bounded b;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) b.message.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  struct rusage ru {};
  REQUIRE(::wait4(pid, &status, 0, &ru) == pid);
  b.exited = WIFEXITED(status);
  b.code = b.exited ? WEXITSTATUS(status) : -WTERMSIG(status);
  b.cpu_seconds = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                  static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  b.extra_rss_mib = static_cast<double>(ru.ru_maxrss - parent_rss) / 1024.0;
  return b;
}

struct Repro {
  std::string what;
  std::string expected;
  std::function<void()> call;
};

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

namespace {
// A safetensors file holding `lin`'s tensors, SGD `groups` with one momentum buffer per parameter
// (zeros, under "optimizer.state.<i>.momentum_buffer" unless `state_keys` says otherwise), and
// `epoch`.
std::string write_sgd_checkpoint(const TempDir& dir, const std::string& name, nn::LinearImpl& lin,
                                 const std::string& groups, const std::string& epoch,
                                 std::vector<std::string> state_keys = {}) {
  std::vector<serialize::NamedTensor> tensors;
  for (const auto& [k, t] : lin.state_dict()) tensors.emplace_back(k, t);
  if (state_keys.empty()) state_keys = {"state.0.momentum_buffer", "state.1.momentum_buffer"};
  const auto params = lin.parameters();
  for (size_t i = 0; i < state_keys.size(); ++i)
    tensors.emplace_back("optimizer." + state_keys[i], wick::zeros_like(params[i % params.size()]));
  const std::string path = dir.file(name);
  serialize::save_safetensors(path, tensors, {{"wick.optimizer", groups}, {"wick.epoch", epoch}});
  return path;
}
}  // namespace

TEST_CASE("hostile input: FIFOs and devices are refused at once, never waited on") {
  TempDir dir("wick-hostile-test");
  const std::string fifo = dir.file("ck.safetensors");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto lin = std::make_shared<nn::LinearImpl>(3, 2, f64());
  const std::vector<Repro> calls = {
      {"load_safetensors of a FIFO", "IOError", [=] { serialize::load_safetensors(fifo); }},
      {"nn::load of a FIFO", "IOError", [=] { nn::load(*lin, fifo); }},
      {"read_idx of a FIFO", "IOError", [=] { data::read_idx(fifo); }},
      {"read_idx of /dev/zero", "IOError", [] { data::read_idx("/dev/zero"); }},
      {"load_safetensors of a directory", "IOError", [d = dir.path.string()] { serialize::load_safetensors(d); }},
  };
  for (const Repro& r : calls) {
    const Bounded b = run_bounded(r.call, r.expected);  // a blocked open() would end in SIGALRM
    INFO(r.what << ": exit " << b.code << "; " << b.message);
    CHECK(b.code == 0);
    CHECK_THAT(b.message, Contains("not a regular file"));
  }
}

TEST_CASE("hostile input: JSON and IDX headers that would cost memory before any check are refused") {
  // 10 MB of '[': nlohmann keeps a stack entry per level, over 64 MiB, before a callback could
  // refuse the depth; the byte scan refuses it first.
  const std::string brackets = safetensors_image(std::string(10'000'000, '['));
  const Bounded deep =
      run_bounded([&] { serialize::parse_safetensors(brackets.data(), brackets.size(), "brackets"); }, "FormatError");
  INFO("exit " << deep.code << ", " << deep.extra_rss_mib << " MiB; " << deep.message);
  CHECK(deep.code == 0);
  CHECK_THAT(deep.message, Contains("deeper than the limit of 64"));

  TempDir dir("wick-hostile-test");
  // dims [0, 2^32-1, 2^32-1]: no data, but the tensor's strides would overflow.
  const std::string zero_dim = dir.write(
      "zero-dim-idx3-ubyte", std::string("\x00\x00\x08\x03\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff", 16));
  CHECK_THROWS_AS(data::load_idx_images(zero_dim), FormatError);
  CHECK_THROWS_WITH(data::read_idx(zero_dim), Contains(zero_dim) && Contains("limit of 1073741824 bytes"));

  // 2^29 + 1 labels: within the data limit, but their int64 tensor passes kMaxIdxTensorBytes. A
  // sparse file, so the test writes 8 bytes.
  const std::string labels = dir.write("labels-idx1-ubyte", std::string("\x00\x00\x08\x01\x20\x00\x00\x01", 8));
  std::filesystem::resize_file(labels, 8 + (uint64_t{1} << 29) + 1);
  CHECK(data::read_idx(labels).dims == std::vector<int64_t>{(int64_t{1} << 29) + 1});
  CHECK_THROWS_WITH(data::load_idx_labels(labels),
                    Contains("load_idx_labels") && Contains(labels) && Contains("limit of 4294967296 bytes"));
}

TEST_CASE("hostile input: checkpoints with repeated keys, odd spellings or absurd epochs are refused") {
  TempDir dir("wick-hostile-test");
  auto lin = std::make_shared<nn::LinearImpl>(3, 2, f64());
  optim::SGD opt(lin->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  const std::string groups = opt.state_dict().groups_json();
  // A checkpoint whose optimizer part adds `key` to the two momentum buffers.
  auto odd_spelling = [&](const std::string& what, const std::string& key) {
    return Row{what,
               "ValueError",
               [&, key] {
                 optim::SGD o(lin->parameters(), optim::SGDOptions(0.1).momentum(0.9));
                 nn::load_checkpoint(write_sgd_checkpoint(dir, "odd.safetensors", *lin, groups, "1",
                                                          {"state.0.momentum_buffer", "state.1.momentum_buffer", key}),
                                     *lin, o);
               },
               {"unexpected key \"" + key + "\""}};
  };
  const std::vector<Row> rows = {
      {"a key repeated below the top level of a safetensors header",
       "FormatError",
       [] {
         const std::string img =
             safetensors_image(R"({"w":{"dtype":"F32","dtype":"F64","shape":[1],"data_offsets":[0,4]}})", "abcd");
         serialize::parse_safetensors(img.data(), img.size(), "repeated");
       },
       {"repeated", "\"dtype\" more than once"}},
      {"a metadata key repeated",
       "FormatError",
       [] {
         const std::string img = safetensors_image(R"({"__metadata__":{"wick.epoch":"1","wick.epoch":"9"}})");
         serialize::parse_safetensors(img.data(), img.size(), "meta");
       },
       {"meta", "\"wick.epoch\" more than once"}},
      {"an epoch past 2^31 - 1",
       "FormatError",
       [&] {
         optim::SGD o(lin->parameters(), optim::SGDOptions(0.1).momentum(0.9));
         nn::load_checkpoint(write_sgd_checkpoint(dir, "epoch.safetensors", *lin, groups, "9223372036854775807"), *lin,
                             o);
       },
       {"load_checkpoint", "epoch", "[0, 2147483647]"}},
      {"saving an epoch past 2^31 - 1",
       "ValueError",
       [&] { nn::save_checkpoint(dir.file("big.safetensors"), *lin, opt, int64_t{1} << 31); },
       {"save_checkpoint", "2147483648"}},
      odd_spelling("a parameter number spelled with a leading zero", "state.00.momentum_buffer"),
      odd_spelling("a parameter number spelled -0", "state.-0.momentum_buffer"),
      {"a parameter number past int64 in the groups",
       "FormatError",
       [] {
         optim::OptimizerStateDict().set_groups_json(
             R"({"optimizer":"SGD","param_groups":[{"params":[18446744073709551615]}]})");
       },
       {"optimizer state", "fit in int64"}},
      {"300 unexpected keys of 200 characters each",
       "IndexError",
       [&] {
         std::vector<serialize::NamedTensor> tensors;
         for (const auto& [k, t] : lin->state_dict()) tensors.emplace_back(k, t);
         for (int i = 0; i < 300; ++i)
           tensors.emplace_back(std::to_string(i) + std::string(200, 'k'), wick::zeros({0}, f32()));
         const std::string path = dir.file("many.safetensors");
         serialize::save_safetensors(path, tensors);
         nn::load(*lin, path);
       },
       {"Unexpected key(s)", "kkk...", "and 290 more"}},
  };
  check_rows(rows);
}

TEST_CASE("hostile input: a bad checkpoint leaves an optimizer with changed options as it was") {
  // The optimizer's options changed since its state was made (momentum 0.9 -> 0, so its momentum
  // buffers no longer fit them): an undo by loading its own old state dict would be refused, so
  // load_checkpoint checks both parts before applying either.
  TempDir dir("wick-hostile-test");
  auto lin = std::make_shared<nn::LinearImpl>(3, 2, f64());
  optim::SGD opt(lin->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  lin->forward(wick::ones({4, 3}, f64())).sum().backward();
  opt.step();
  const std::string groups = opt.state_dict().groups_json();  // a valid optimizer part
  static_cast<optim::SGDOptions&>(opt.param_groups()[0].options()).momentum(0.0);
  const Tensor buffer_before = opt.state(lin->get_parameter("weight"))->buffers["momentum_buffer"].clone();
  const Tensor weight_before = lin->get_parameter("weight").clone();
  // A model part of the wrong shape.
  auto other = std::make_shared<nn::LinearImpl>(4, 2, f64());
  const std::string path = write_sgd_checkpoint(dir, "bad-model.safetensors", *other, groups, "1");
  CHECK_THROWS_WITH(nn::load_checkpoint(path, *lin, opt),
                    Contains("nothing was loaded") && Contains("size mismatch for weight"));
  CHECK(static_cast<const optim::SGDOptions&>(opt.param_groups()[0].options()).momentum() == 0.0);
  CHECK(wick::equal(opt.state(lin->get_parameter("weight"))->buffers.at("momentum_buffer"), buffer_before));
  CHECK(wick::equal(lin->get_parameter("weight"), weight_before));
  // A good model part with a bad optimizer part: the model is put back, the optimizer untouched.
  auto twin = std::make_shared<nn::LinearImpl>(3, 2, f64());
  const std::string bad_opt = write_sgd_checkpoint(dir, "bad-opt.safetensors", *twin, groups, "1",
                                                   {"state.0.momentum_buffer", "state.7.momentum_buffer"});
  CHECK_THROWS_WITH(nn::load_checkpoint(bad_opt, *lin, opt), Contains("nothing was loaded") && Contains("state.7"));
  CHECK(wick::equal(lin->get_parameter("weight"), weight_before));
  CHECK(static_cast<const optim::SGDOptions&>(opt.param_groups()[0].options()).momentum() == 0.0);
}
