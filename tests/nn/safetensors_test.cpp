// safetensors: the on-disk format (the oracle file read in order, saved back byte for byte) and
// round trips of every dtype. Saving safely: safetensors_save_test.cpp; malformed, truncated and
// unsupported files: safetensors_malformed_test.cpp.
#include "wick/nn/safetensors.h"

#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <string>

#include "support/allclose.h"
#include "support/safetensors_files.h"
#include "support/temp_dir.h"

using namespace wick;
using namespace wick::serialize;
using namespace wick::test::safetensors_files;
using Catch::Matchers::Contains;
using wick::test::TempDir;
namespace fs = std::filesystem;

TEST_CASE("safetensors: the oracle file loads in header order with its metadata") {
  SafetensorsData d = load_safetensors(oracle_file());
  REQUIRE(d.tensors.size() > 100);
  CHECK(d.tensors[0].first == "c0.in0");
  CHECK(d.tensors[1].first == "c0.in1");
  CHECK(d.tensors[0].second.sizes() == IntArrayRef({3, 4}));
  CHECK(d.tensors[0].second.dtype() == kFloat64);
  CHECK(d.tensors[0].second.device() == kCPU);
  CHECK(d.metadata.at("dtype") == "float64");
  CHECK(d.metadata.count("cases") == 1);
  CHECK(d.at("c31.in1").dtype() == kInt64);  // index_select's index
  CHECK(d.contains("c0.out"));
  CHECK(d.find("nope") == nullptr);
  CHECK_THROWS_WITH(d.at("nope"), Contains("no tensor named \"nope\"") && Contains("c0.in0"));
}

TEST_CASE("safetensors: save writes exactly the oracle's format and load reads it back") {
  // Re-saving the oracle's tensors gives the oracle's bytes, except for the order of the
  // metadata keys (wick's metadata is a sorted map; the file's JSON object keeps Python's order).
  SafetensorsData d = load_safetensors(oracle_file());
  const std::string original = read_bytes(oracle_file());
  std::string mine = serialize_safetensors(d.tensors, d.metadata);
  REQUIRE(mine.size() == original.size());
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(mine[static_cast<size_t>(i)]);
  CHECK(n % 8 == 0);
  CHECK(mine.substr(0, 8) == original.substr(0, 8));    // header length
  CHECK(mine.substr(8 + n) == original.substr(8 + n));  // the data section
  const std::string tensors_part = original.substr(8, original.find("\"__metadata__\"") - 8);
  CHECK(mine.substr(8, tensors_part.size()) == tensors_part);  // every tensor entry
  SafetensorsData back = parse_safetensors(mine.data(), mine.size());
  CHECK(back.metadata == d.metadata);
  REQUIRE(back.tensors.size() == d.tensors.size());
  for (size_t i = 0; i < d.tensors.size(); ++i) {
    CHECK(back.tensors[i].first == d.tensors[i].first);
    CHECK_ALLCLOSE(back.tensors[i].second, d.tensors[i].second, 0, 0);
  }
}

TEST_CASE("safetensors: round trip of every dtype, empty and 0-dim tensors, views and other devices") {
  TempDir dir;
  const std::string path = dir.file("t.safetensors");
  Tensor f32 = tensor({1.5, -2.25, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  Tensor f64v = arange(0, 12, 1, kFloat64).view({3, 4}).t();  // non-contiguous
  Tensor i64 = tensor(std::vector<int64_t>{-5, 0, int64_t{1} << 50}, {3}, kInt64);
  Tensor b = tensor({1.0, 0.0, 1.0}).to(kBool);
  Tensor scalar = scalar_tensor(7.0, kFloat64);
  Tensor empty = zeros({0, 3});
  Tensor remote = ones({2}, TensorOptions(kFloat64).device("cpu:2"));
  std::vector<NamedTensor> ts = {{"z.f32", f32},     {"a.f64", f64v},  {"i64", i64},      {"mask", b},
                                 {"scalar", scalar}, {"empty", empty}, {"remote", remote}};
  save_safetensors(path, ts, {{"format", "pt"}, {"note", "caf\xc3\xa9 \"quoted\""}});
  SafetensorsData d = load_safetensors(path);
  REQUIRE(d.tensors.size() == ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    INFO(ts[i].first);
    CHECK(d.tensors[i].first == ts[i].first);  // insertion order, not sorted
    CHECK(d.tensors[i].second.dtype() == ts[i].second.dtype());
    CHECK(d.tensors[i].second.sizes() == ts[i].second.sizes());
    CHECK(d.tensors[i].second.device() == kCPU);
    CHECK_ALLCLOSE(d.tensors[i].second, ts[i].second, 0, 0);
  }
  CHECK(d.at("i64").to_vector<int64_t>()[2] == (int64_t{1} << 50));
  CHECK(d.metadata.at("note") == "caf\xc3\xa9 \"quoted\"");
  // Nothing but the file itself is left in the directory.
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
  // No tensors at all is a valid file too.
  save_safetensors(path, {});
  CHECK(load_safetensors(path).tensors.empty());
}
