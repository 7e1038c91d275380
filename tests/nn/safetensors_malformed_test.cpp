// safetensors: a wick::Error (never a crash) for every kind of malformed or truncated file, and
// tensors of dtypes wick cannot hold (Note [safetensors validation], Note [Unsupported
// safetensors dtypes]).
#include <wick/wick.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/safetensors_files.h"
#include "support/temp_dir.h"
#include "wick/nn/safetensors.h"

using namespace wick;
using namespace wick::serialize;
using namespace wick::test::safetensors_files;
using Catch::Matchers::Contains;
using wick::test::TempDir;
namespace fs = std::filesystem;

namespace {
SafetensorsData parse(const std::string& bytes) { return parse_safetensors(bytes.data(), bytes.size(), "test.st"); }
}  // namespace

TEST_CASE("safetensors: a truncated file is an error naming the file, at every cut") {
  const std::string bytes = read_bytes(oracle_file());
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  // Every 64th byte of the length and the first 4 KiB of the JSON header, then 512 cuts spread
  // over the rest of the header at an odd stride, so that they land inside every kind of token
  // while their number (and this test's time: each parse reads up to its cut) stays fixed as the
  // oracle file grows. Past the header every cut takes the same path (the whole header parses,
  // then the data offsets overrun the buffer), so 64 cuts spread over the data, and each boundary
  // byte.
  std::vector<size_t> cuts;
  const size_t header_end = 8 + n;
  for (size_t c = 0; c < std::min<size_t>(header_end, 4096); c += 64) cuts.push_back(c);
  if (header_end > 4096) {
    const size_t stride = ((header_end - 4096) / 512) | 1;
    for (size_t c = 4096; c < header_end; c += stride) cuts.push_back(c);
  }
  for (size_t c = header_end, stride = ((bytes.size() - header_end) / 64) | 1; c < bytes.size(); c += stride)
    cuts.push_back(c);
  for (size_t c :
       {size_t{7}, size_t{8}, size_t{9}, size_t(8 + n - 1), size_t(8 + n), size_t(8 + n + 1), bytes.size() - 1})
    cuts.push_back(c);
  // One parse per cut: the file's header is hundreds of KB of JSON, and the sanitizer passes run
  // this too.
  const auto error_at = [&](size_t c) -> std::string {
    try {
      parse_safetensors(bytes.data(), c, "cut.st");
    } catch (const Error& e) {
      return e.what();
    }
    return "<no wick::Error>";
  };
  for (size_t c : cuts) {
    INFO("cut at byte " << c << " of " << bytes.size());
    CHECK_THAT(error_at(c), Contains("safetensors: cut.st:"));
  }
  // The same through the file reader, for a few cuts.
  TempDir dir;
  const std::string path = dir.file("cut.safetensors");
  for (size_t c : {size_t{0}, size_t{5}, size_t(8 + n / 2), size_t(8 + n + 100), bytes.size() - 8}) {
    INFO("file cut at byte " << c);
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(c));
    CHECK_THROWS_WITH(load_safetensors(path), Contains(path) && (Contains("truncated") || Contains("past the end") ||
                                                                 Contains("not valid JSON") || Contains("cover only")));
  }
  CHECK_THROWS_WITH(load_safetensors(dir.file("absent.safetensors")),
                    Contains("absent.safetensors") && Contains("cannot open"));
  CHECK_THROWS_WITH(load_safetensors(dir.path.string()), Contains("not a regular file"));
}

TEST_CASE("safetensors: malformed headers are errors naming the problem") {
  const std::string f64x2 = std::string(16, '\0');
  struct Bad {
    std::string bytes;
    std::string expected;
  };
  const std::string ok_entry = R"("t":{"dtype":"F64","shape":[2],"data_offsets":[0,16]})";
  std::string huge_len(8, '\xff');
  std::string len_over(8, '\0');
  len_over[0] = 100;  // claims 100 header bytes, has 10
  const std::vector<Bad> cases = {
      {"", "too short"},
      {std::string(7, '\0'), "too short"},
      {huge_len + "{}", "exceeds"},
      {len_over + "{\"a\":1}   ", "exceeds"},
      {image("{", ""), "too small"},
      {image("{ ", ""), "not valid JSON"},
      {image("{\"t\":", ""), "not valid JSON"},
      {image("[1, 2]  ", ""), "must be a JSON object"},
      {image("\"str\"   ", ""), "must be a JSON object"},
      {image("{\"t\":5}", ""), "tensor \"t\" must be described by an object"},
      {image(R"({"t":{"shape":[2],"data_offsets":[0,16]}})", f64x2), "no \"dtype\" field"},
      {image(R"({"t":{"dtype":"F64","data_offsets":[0,16]}})", f64x2), "no \"shape\" field"},
      {image(R"({"t":{"dtype":"F64","shape":[2]}})", f64x2), "no \"data_offsets\" field"},
      {image(R"({"t":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}})", "abcd"), "BF16"},
      {image(R"({"t":{"dtype":7,"shape":[2],"data_offsets":[0,16]}})", f64x2), "dtype must be a string"},
      {image(R"({"t":{"dtype":"F64","shape":2,"data_offsets":[0,16]}})", f64x2), "shape must be an array"},
      {image(R"({"t":{"dtype":"F64","shape":[-2],"data_offsets":[0,16]}})", f64x2), "negative value -2"},
      {image(R"({"t":{"dtype":"F64","shape":[1.5],"data_offsets":[0,16]}})", f64x2), "non-negative integer"},
      {image(R"({"t":{"dtype":"F64","shape":["2"],"data_offsets":[0,16]}})", f64x2), "non-negative integer"},
      {image(R"({"t":{"dtype":"F64","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,16]}})", f64x2),
       "overflows"},
      {image(R"({"t":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,16]}})", f64x2), "overflows"},
      {image(R"({"t":{"dtype":"F64","shape":[2],"data_offsets":[0]}})", f64x2), "data_offsets must be an array"},
      {image(R"({"t":{"dtype":"F64","shape":[2],"data_offsets":[16,0]}})", f64x2), "end before they begin"},
      {image(R"({"t":{"dtype":"F64","shape":[2],"data_offsets":[0,8]}})", f64x2), "need 16"},
      {image(R"({"t":{"dtype":"F64","shape":[2],"data_offsets":[0,18446744073709551615]}})", f64x2), "span"},
      {image(R"({"t":{"dtype":"F64","shape":[2],"data_offsets":[18446744073709551608,18446744073709551624]}})", f64x2),
       "non-negative integer"},
      {image(R"({"t":{"dtype":"F64","shape":[2],"data_offsets":[8,24]}})", f64x2), "past the end"},
      {image(R"({"t":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},)"
             R"("u":{"dtype":"F64","shape":[2],"data_offsets":[8,24]}})",
             std::string(24, '\0')),
       "overlaps"},
      {image(R"({"t":{"dtype":"F64","shape":[1],"data_offsets":[8,16]}})", f64x2), "hole"},
      {image("{" + ok_entry + "}", f64x2 + "xx"), "trailing bytes"},
      {image("{" + ok_entry + "," + ok_entry + "}", f64x2), "more than once"},
      {image(R"({"__metadata__":[1]})"), "__metadata__ must be an object"},
      {image(R"({"__metadata__":{"k":1}})"), "__metadata__[\"k\"] must be a string"},
      {image(R"({"__metadata__":{},"__metadata__":{}})"), "\"__metadata__\" more than once"},
      // nlohmann's lexer stops at a NUL and skips a byte-order mark: both would hide bytes.
      {image("{" + ok_entry + std::string("}\0\0 ", 4), f64x2), "NUL byte at offset"},
      {image("\xEF\xBB\xBF{" + ok_entry + "}", f64x2), "byte-order mark"},
      {image(R"({"t":{"dtype":"F64","shape":[2],"data_offsets":[0,16],"extra":[1]}})", f64x2),
       "tensor \"t\" has the field \"extra\""},
      {image(R"({"t":{"dtype":"F64","shape":[2],"data_offsets":[0,16,32]}})", f64x2), "got more values"},
      {image(R"({"t":{"dtype":"F64","shape":[[2]],"data_offsets":[0,16]}})", f64x2),
       "shape[0] must be a non-negative integer, got an array"},
      {image(R"({"t":[{"dtype":"F64"}]})", f64x2), "tensor \"t\" must be described by an object, got an array"},
  };
  for (const Bad& b : cases) {
    INFO("expected: " << b.expected);
    CHECK_THROWS_WITH(parse(b.bytes), Contains("safetensors: test.st:") && Contains(b.expected));
  }
  // The good counterpart parses, as does a BOOL tensor with a byte that is neither 0 nor 1.
  CHECK(parse(image("{" + ok_entry + "}", f64x2)).at("t").sizes() == IntArrayRef({2}));
  SafetensorsData bl =
      parse(image(R"({"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})", std::string("\x00\x07\x01", 3)));
  CHECK(bl.at("m").to_vector<bool>() == std::vector<bool>{false, true, true});
  CHECK(bl.at("m").to(kInt64).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 1});
}

// Note [Unsupported safetensors dtypes]: a tensor of one of the format's dtypes that wick cannot
// hold is checked like any other, refused when read (NotImplementedError naming it and its dtype)
// or listed unread with UnsupportedDtypes::Skip; a name outside the format is a FormatError.
TEST_CASE("safetensors: tensors of dtypes wick cannot hold are checked, then refused or skipped") {
  // f32 [2] = {1, 2}, then F16 [2] = {1, 2}, then BF16 [1] = {1}.
  const std::string data("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x3c\x00\x40\x80\x3f", 14);
  const std::string header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("half":{"dtype":"F16","shape":[2],"data_offsets":[8,12]},)"
                             R"("brain":{"dtype":"BF16","shape":[1],"data_offsets":[12,14]}})";
  const std::string file = image(header, data);

  // Read in full (the default): refused, naming every such tensor, its dtype and wick's dtypes.
  CHECK_THROWS_AS(parse(file), NotImplementedError);
  CHECK_THROWS_WITH(parse(file), Contains("safetensors: test.st:") && Contains("\"half\" (F16)") &&
                                     Contains("\"brain\" (BF16)") && Contains("BOOL, I64, F32, F64"));
  TempDir dir;
  const std::string path = dir.file("mixed.safetensors");
  std::ofstream(path, std::ios::binary) << file;
  CHECK_THROWS_AS(load_safetensors(path), NotImplementedError);
  CHECK_THROWS_WITH(load_safetensors(path), Contains(path) && Contains("\"half\" (F16)"));

  // Skipped: the others load; the skipped ones are listed, and refused when asked for.
  for (const SafetensorsData& d : {parse_safetensors(file.data(), file.size(), "test.st", UnsupportedDtypes::Skip),
                                   load_safetensors(path, UnsupportedDtypes::Skip)}) {
    REQUIRE(d.tensors.size() == 1);
    CHECK(d.at("w").to_vector<float>() == std::vector<float>{1, 2});
    REQUIRE(d.unsupported.size() == 2);
    CHECK(d.unsupported[0].name == "half");
    CHECK(d.unsupported[0].dtype == "F16");
    CHECK(d.unsupported[0].shape == std::vector<int64_t>{2});
    CHECK(d.unsupported[1].name == "brain");
    CHECK(d.unsupported[1].dtype == "BF16");
    CHECK(d.find("half") == nullptr);
    CHECK(!d.contains("half"));
    REQUIRE(d.find_unsupported("half") != nullptr);
    CHECK(d.find_unsupported("w") == nullptr);
    CHECK_THROWS_AS(d.at("half"), NotImplementedError);
    CHECK_THROWS_WITH(d.at("half"), Contains("\"half\"") && Contains("F16") && Contains("BOOL, I64, F32, F64"));
    CHECK_THROWS_AS(d.at("nothing"), IndexError);
  }

  // Every check runs on those entries too, whatever the mode: offsets that do not fit the shape
  // at 2 bytes per F16 element, a range past the end, a hole, an overflowing shape.
  const std::string f32 = R"("w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  struct Bad {
    std::string bytes;
    std::string expected;
  };
  const std::vector<Bad> bad = {
      {image("{" + f32 + R"(,"half":{"dtype":"F16","shape":[2],"data_offsets":[8,14]}})", data),
       "data_offsets [8, 14] span 6 bytes but dtype F16 and shape [2] need 4"},
      {image("{" + f32 + R"(,"half":{"dtype":"F16","shape":[4],"data_offsets":[8,16]}})", data), "past the end"},
      {image("{" + f32 + R"(,"half":{"dtype":"I32","shape":[1],"data_offsets":[10,14]}})", data), "hole"},
      {image("{" + f32 + R"(,"half":{"dtype":"U8","shape":[6],"data_offsets":[8,14]}})", data + "x"), "trailing bytes"},
      {image(R"({"half":{"dtype":"F16","shape":[4611686018427387904],"data_offsets":[0,8]}})", data), "overflows"},
      {image(R"({"q":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})", "ab"), "whole number of bytes"},
      // A name outside the format: the whole file, as before.
      {image("{" + f32 + R"(,"half":{"dtype":"F17","shape":[2],"data_offsets":[8,12]}})", data.substr(0, 12)),
       "\"F17\" is not a safetensors dtype"},
  };
  for (const Bad& b : bad) {
    INFO("expected: " << b.expected);
    for (UnsupportedDtypes mode : {UnsupportedDtypes::Refuse, UnsupportedDtypes::Skip}) {
      CHECK_THROWS_AS(parse_safetensors(b.bytes.data(), b.bytes.size(), "test.st", mode), FormatError);
      CHECK_THROWS_WITH(parse_safetensors(b.bytes.data(), b.bytes.size(), "test.st", mode),
                        Contains("safetensors: test.st:") && Contains(b.expected));
    }
  }
  // Sub-byte dtypes count bits: F4 [2] is one byte, F6_E2M3 [4] three.
  const std::string packed = image(R"({"a":{"dtype":"F4","shape":[2],"data_offsets":[0,1]},)"
                                   R"("b":{"dtype":"F6_E2M3","shape":[4],"data_offsets":[1,4]}})",
                                   "abcd");
  CHECK(parse_safetensors(packed.data(), packed.size(), "test.st", UnsupportedDtypes::Skip).unsupported.size() == 2);
  // Every dtype of the format is known: none is a FormatError.
  for (const char* name : {"BOOL", "F4",  "F6_E2M3", "F6_E3M2", "U8",  "I8",  "F8_E5M2", "F8_E4M3", "F8_E8M0", "I16",
                           "U16",  "F16", "BF16",    "I32",     "U32", "F32", "C64",     "F64",     "I64",     "U64"}) {
    INFO(name);
    const std::string empty =
        image(R"({"e":{"dtype":")" + std::string(name) + R"(","shape":[0],"data_offsets":[0,0]}})");
    CHECK_NOTHROW(parse_safetensors(empty.data(), empty.size(), "test.st", UnsupportedDtypes::Skip));
  }
}

TEST_CASE("safetensors: random corruption of a header holding the oracle's first tensors never crashes") {
  // A fixed-size image: the oracle's first 96 tensors and a piece of its manifest (a long JSON
  // string full of escapes) as metadata, so the test's time does not grow with the oracle file.
  SafetensorsData oracle = load_safetensors(oracle_file());
  REQUIRE(oracle.tensors.size() >= 96);
  std::vector<NamedTensor> first(oracle.tensors.begin(), oracle.tensors.begin() + 96);
  const std::string manifest = oracle.metadata.at("cases");
  const std::string bytes = serialize_safetensors(first, {{"cases", manifest.substr(0, 2000)}, {"seed", "7"}});
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  int errors = 0, parsed = 0;
  const char replacements[] = {'0', '9', '-', '"', '{', '}', '[', ']', ',', ':', 'e', ' ', '\0', '\xff'};
  for (int trial = 0; trial < 300; ++trial) {
    std::string c = bytes;
    const int flips = 1 + static_cast<int>(next() % 3);
    for (int k = 0; k < flips; ++k) {
      const size_t pos = 8 + next() % n;
      c[pos] = replacements[next() % sizeof(replacements)];
    }
    try {
      SafetensorsData d = parse_safetensors(c.data(), c.size(), "fuzz.st");
      ++parsed;  // some flips are harmless (inside a string, or whitespace)
    } catch (const Error& e) {
      ++errors;
      CHECK_THAT(std::string(e.what()), Contains("safetensors: fuzz.st:"));
    }
  }
  CHECK(errors + parsed == 300);
  CHECK(errors > 100);
}
