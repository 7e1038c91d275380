// Hostile files (Note [Loader limits], docs/hostile-input.md), the cases added with the rules
// for special files, memory spent before a check, repeated keys and epochs:
// - FIFOs, devices and directories are refused at once, in a forked child where a blocked open
//   would end in SIGALRM;
// - inputs that would cost memory before any check (deep JSON, IDX headers) are refused first;
// - checkpoints with repeated keys, odd state-key spellings or absurd epochs are refused;
// - a bad checkpoint leaves an optimizer whose options changed as it was.
#include <fmt/format.h>
#include <sys/stat.h>
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "hostile_support.h"

using namespace wick;
using namespace wick::test::hostile;
using Catch::Matchers::Contains;

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

  // 20 MB of empty arrays where a tensor entry belongs: a JSON tree of them took 21 times the
  // header's size before any check; the header's reader refuses the first one.
  std::string arrays = R"({"t":[)";
  for (int i = 0; i < 6'000'000; ++i) arrays += "[],";
  arrays += "[]]}";
  const std::string arrays_img = safetensors_image(arrays);
  const Bounded wide =
      run_bounded([&] { serialize::parse_safetensors(arrays_img.data(), arrays_img.size(), "arrays"); }, "FormatError");
  INFO("exit " << wide.code << ", " << wide.extra_rss_mib << " MiB; " << wide.message);
  CHECK(wide.code == 0);
  CHECK_THAT(wide.message, Contains("must be described by an object, got an array"));

  // 100 000 valid zero-size entries, then a bad one: nlohmann's callback parser rescanned the
  // header object after each entry (quadratic: over 10 s here); the reader is linear.
  std::string many = "{";
  for (int i = 0; i < 100'000; ++i)
    many += fmt::format(R"("t{}":{{"dtype":"F32","shape":[0],"data_offsets":[0,0]}},)", i);
  many += R"("last":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})";
  const std::string many_img = safetensors_image(many);
  const Bounded entries =
      run_bounded([&] { serialize::parse_safetensors(many_img.data(), many_img.size(), "many"); }, "FormatError");
  INFO("exit " << entries.code << ", " << entries.cpu_seconds << " s CPU; " << entries.message);
  CHECK(entries.code == 0);
  CHECK_THAT(entries.message, Contains("\"last\"") && Contains("negative value -1"));

  // The optimizer's group JSON goes through the general parser: 200 000 sibling objects were
  // quadratic there too.
  std::string objects = "[";
  for (int i = 0; i < 200'000; ++i) objects += "{},";
  objects += "{}]";
  const Bounded groups = run_bounded([&] { optim::OptimizerStateDict().set_groups_json(objects); }, "FormatError");
  INFO("exit " << groups.code << ", " << groups.cpu_seconds << " s CPU; " << groups.message);
  CHECK(groups.code == 0);
  CHECK_THAT(groups.message, Contains("optimizer state"));

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
  // The optimizer's options changed since its state was made (momentum 0.9 -> 0, which keeps its
  // momentum buffers): load_checkpoint checks both parts before applying either, so nothing needs
  // undoing.
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
