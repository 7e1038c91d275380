// safetensors: UnsupportedDtypes::Widen reads the format's other dtypes into float32 or int64
// exactly (Note [Widening safetensors dtypes]): against PyTorch's own conversion
// (tests/data/widen.safetensors, tests/data/make_widen_file.py) and hand-computed 8-bit floats.
#include <wick/wick.h>

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "support/safetensors_files.h"
#include "support/temp_dir.h"
#include "wick/nn/safetensors.h"

using namespace wick;
using namespace wick::serialize;
using Catch::Matchers::Contains;
using wick::test::safetensors_files::image;
using wick::test::safetensors_files::read_bytes;

namespace {
std::string widen_file() { return std::string(WICK_TEST_DATA_DIR) + "/widen.safetensors"; }

// The names in widen.safetensors that hold another dtype, and those dtypes.
const std::vector<std::pair<std::string, std::string>> kWidened = {
    {"f16", "F16"}, {"bf16", "BF16"}, {"i8", "I8"},          {"u8", "U8"},
    {"i16", "I16"}, {"i32", "I32"},   {"f16_scalar", "F16"}, {"f16_empty", "F16"}};

// A one-tensor image: `name` of `dtype` and shape [n] holding `bytes`.
std::string one_tensor(const std::string& name, const std::string& dtype, const std::string& bytes, size_t n) {
  return image(
      fmt::format(R"({{"{}":{{"dtype":"{}","shape":[{}],"data_offsets":[0,{}]}}}})", name, dtype, n, bytes.size()),
      bytes);
}

SafetensorsData widen(const std::string& bytes) {
  return parse_safetensors(bytes.data(), bytes.size(), "w.st", UnsupportedDtypes::Widen);
}

// Every byte code 0..255.
std::string all_bytes() {
  std::string s(256, '\0');
  for (int i = 0; i < 256; ++i) s[static_cast<size_t>(i)] = static_cast<char>(i);
  return s;
}

// An 8-bit float code by its definition: sign, `e_bits` exponent bits of bias 2^(e_bits-1) - 1,
// the rest mantissa; exponent 0 is subnormal. `nan(code)` and `inf(code)` say which codes are
// special in the format.
template <class IsNan, class IsInf>
double fp8_value(int code, int e_bits, IsNan nan, IsInf inf) {
  const int m_bits = 7 - e_bits;
  const int bias = (1 << (e_bits - 1)) - 1;
  const double sign = (code & 0x80) ? -1.0 : 1.0;
  const int e = (code >> m_bits) & ((1 << e_bits) - 1);
  const int m = code & ((1 << m_bits) - 1);
  if (nan(code)) return std::numeric_limits<double>::quiet_NaN();
  if (inf(code)) return sign * std::numeric_limits<double>::infinity();
  if (e == 0) return sign * std::pow(2.0, 1 - bias) * (m / std::pow(2.0, m_bits));
  return sign * std::pow(2.0, e - bias) * (1.0 + m / std::pow(2.0, m_bits));
}

void check_codes(const Tensor& t, const std::vector<double>& want) {
  REQUIRE(t.dtype() == kFloat32);
  REQUIRE(t.numel() == static_cast<int64_t>(want.size()));
  const float* p = t.data_ptr<float>();
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("code " << i);
    if (std::isnan(want[i])) {
      CHECK(std::isnan(p[i]));
    } else {
      CHECK(static_cast<double>(p[i]) == want[i]);
      CHECK(std::signbit(p[i]) == std::signbit(want[i]));  // -0.0 stays negative
    }
  }
}
}  // namespace

TEST_CASE("safetensors: Widen reads F16, BF16 and small integers bit for bit as PyTorch converts them") {
  const SafetensorsData d = load_safetensors(widen_file(), UnsupportedDtypes::Widen);
  REQUIRE(d.unsupported.empty());
  REQUIRE(d.widened.size() == kWidened.size());
  for (size_t i = 0; i < kWidened.size(); ++i) {
    INFO(kWidened[i].first);
    CHECK(d.widened[i].name == kWidened[i].first);
    CHECK(d.widened[i].dtype == kWidened[i].second);
    const Tensor& got = d.at(kWidened[i].first);
    const Tensor& want = d.at(kWidened[i].first + ".expected");
    REQUIRE(got.dtype() == want.dtype());
    REQUIRE(got.sizes() == want.sizes());
    // Bits, not values: NaN payloads and signed zeros count (every float16 code is in "f16").
    if (got.numel() > 0)  // an empty tensor has no data pointer
      CHECK(std::memcmp(got.data_ptr(), want.data_ptr(),
                        static_cast<size_t>(got.numel()) * element_size(got.dtype())) == 0);
  }
  CHECK(d.at("f16").numel() == 65536);  // more than one 64 KiB piece of the file
  CHECK(d.at("f16_scalar").dim() == 0);
  CHECK(std::signbit(d.at("f16_scalar").item<float>()));
  // A tensor of wick's own dtypes is read as it is, and not listed.
  CHECK(d.at("plain").dtype() == kFloat32);
  CHECK(d.at("plain").data_ptr<float>()[1] == -2.0f);
}

TEST_CASE("safetensors: Refuse and Skip keep treating the other dtypes as before") {
  REQUIRE_THROWS_AS(load_safetensors(widen_file()), NotImplementedError);
  const SafetensorsData d = load_safetensors(widen_file(), UnsupportedDtypes::Skip);
  CHECK(d.widened.empty());
  REQUIRE(d.unsupported.size() == kWidened.size());
  CHECK(d.unsupported[1].name == "bf16");
  CHECK_THROWS_AS(d.at("bf16"), NotImplementedError);
}

TEST_CASE("safetensors: Widen reads every 8-bit float code as its definition gives it") {
  SECTION("F8_E4M3: no infinities, S.1111.111 is NaN, largest 448") {
    std::vector<double> want;
    for (int c = 0; c < 256; ++c)
      want.push_back(fp8_value(
          c, 4, [](int x) { return (x & 0x7f) == 0x7f; }, [](int) { return false; }));
    const Tensor t = widen(one_tensor("x", "F8_E4M3", all_bytes(), 256)).at("x");
    check_codes(t, want);
    CHECK(t.data_ptr<float>()[0x7e] == 448.0f);
    CHECK(t.data_ptr<float>()[0x01] == std::ldexp(1.0f, -9));
  }
  SECTION("F8_E5M2: float16's upper byte, with infinities") {
    std::vector<double> want;
    for (int c = 0; c < 256; ++c)
      want.push_back(fp8_value(
          c, 5, [](int x) { return (x & 0x7c) == 0x7c && (x & 3); }, [](int x) { return (x & 0x7f) == 0x7c; }));
    const Tensor t = widen(one_tensor("x", "F8_E5M2", all_bytes(), 256)).at("x");
    check_codes(t, want);
    CHECK(t.data_ptr<float>()[0x7b] == 57344.0f);
    CHECK(std::isinf(t.data_ptr<float>()[0xfc]));
  }
  SECTION("F8_E8M0: 2^(code - 127), 0xFF is NaN") {
    std::vector<double> want;
    for (int c = 0; c < 256; ++c)
      want.push_back(c == 255 ? std::numeric_limits<double>::quiet_NaN() : std::pow(2.0, c - 127));
    const Tensor t = widen(one_tensor("x", "F8_E8M0", all_bytes(), 256)).at("x");
    check_codes(t, want);
    CHECK(t.data_ptr<float>()[127] == 1.0f);
  }
}

TEST_CASE("safetensors: Widen reads U16, U32 and U64 into int64, and refuses U64 values int64 cannot hold") {
  auto le = [](uint64_t v, int bytes) {
    std::string s;
    for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
    return s;
  };
  CHECK(widen(one_tensor("a", "U16", le(0, 2) + le(65535, 2), 2)).at("a").data_ptr<int64_t>()[1] == 65535);
  CHECK(widen(one_tensor("a", "U32", le(0, 4) + le(4294967295u, 4), 2)).at("a").data_ptr<int64_t>()[1] == 4294967295);
  const uint64_t big = uint64_t{1} << 63;
  CHECK(widen(one_tensor("a", "U64", le(big - 1, 8), 1)).at("a").data_ptr<int64_t>()[0] ==
        std::numeric_limits<int64_t>::max());
  // The first value above 2^63 - 1, in the file's second 64 KiB piece: named with its element.
  std::string bytes;
  for (int i = 0; i < 9000; ++i) bytes += le(i == 8500 ? big : static_cast<uint64_t>(i), 8);
  REQUIRE_THROWS_WITH(
      widen(one_tensor("counts", "U64", bytes, 9000)),
      Contains("w.st") && Contains("\"counts\" (U64)") && Contains("element 8500") && Contains("9223372036854775808"));
  REQUIRE_THROWS_AS(widen(one_tensor("counts", "U64", bytes, 9000)), ValueError);
}

TEST_CASE("safetensors: Widen refuses the dtypes no wick dtype holds exactly, naming them") {
  REQUIRE_THROWS_AS(widen(one_tensor("z", "C64", std::string(16, '\0'), 2)), NotImplementedError);
  REQUIRE_THROWS_WITH(widen(one_tensor("z", "C64", std::string(16, '\0'), 2)), Contains("\"z\" (C64)"));
  REQUIRE_THROWS_WITH(widen(one_tensor("q", "F4", std::string(1, '\0'), 2)), Contains("\"q\" (F4)"));
}

TEST_CASE("safetensors: a float16 checkpoint loads into a float32 module through Widen, and nn::load names the way") {
  wick::test::TempDir dir;
  nn::Linear model(2, 2);
  // weight [[1.5, -0.25], [65504 (float16's largest), 2^-24 (its smallest subnormal)]], bias [0, -0].
  auto h = [](uint16_t v) { return std::string{static_cast<char>(v & 0xff), static_cast<char>(v >> 8)}; };
  const std::string w = h(0x3e00) + h(0xb400) + h(0x7bff) + h(0x0001), b = h(0x0000) + h(0x8000);
  const std::string bytes = image(R"({"bias":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},)"
                                  R"("weight":{"dtype":"F16","shape":[2,2],"data_offsets":[4,12]}})",
                                  b + w);
  const std::string path = dir.write("half.safetensors", bytes);
  const Tensor before = model->weight().clone();
  REQUIRE_THROWS_AS(nn::load(model, path), TypeError);
  REQUIRE_THROWS_WITH(nn::load(model, path),
                      Contains("UnsupportedDtypes::Widen") && Contains("F16 exactly as float32"));
  CHECK(model->weight().equal(before));  // nothing was loaded

  const SafetensorsData d = load_safetensors(path, UnsupportedDtypes::Widen);
  nn::StateDict dict;
  for (const auto& [name, t] : d.tensors) dict.insert(name, t);
  model->load_state_dict(dict);
  const float* p = model->weight().data_ptr<float>();
  CHECK(p[0] == 1.5f);
  CHECK(p[1] == -0.25f);
  CHECK(p[2] == 65504.0f);
  CHECK(p[3] == std::ldexp(1.0f, -24));
  CHECK(std::signbit(model->bias().data_ptr<float>()[1]));
}
