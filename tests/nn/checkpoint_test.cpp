// Checkpoint files: bit-identical round trips, every mismatch named with nothing changed,
// truncated files, and failed saves that keep the previous file. Training checkpoints (model +
// optimizer + epoch): checkpoint_training_test.cpp.
#include "wick/nn/checkpoint.h"

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
#include "wick/nn/nn.h"
#include "wick/nn/optim/optim.h"
#include "wick/nn/safetensors.h"

using namespace wick;
using namespace wick::test::checkpoint_nets;
namespace fs = std::filesystem;

namespace {

using TempDir = wick::test::TempDir;

std::vector<uint8_t> bytes_of(const std::string& path) {
  std::ifstream i(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(i), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& b, size_t n) {
  std::ofstream o(path, std::ios::binary | std::ios::trunc);
  o.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(n));
}

}  // namespace

TEST_CASE("checkpoint: save, load into a fresh model, evaluate: bit-identical", "[checkpoint]") {
  TempDir dir("wick-ckpt-test");
  auto net = make_net(1);
  {  // move BatchNorm's running statistics away from their initial values
    NoGradGuard g;
    net->train();
    net->forward(input());
  }
  net->eval();
  const Tensor want = net->forward(input());
  nn::save(*net, dir.file("model.safetensors"));

  // The file holds PyTorch's state_dict keys.
  auto data = nn::load_safetensors(dir.file("model.safetensors"));
  std::vector<std::string> names;
  for (const auto& [k, t] : data.tensors) names.push_back(k);
  CHECK(names == net->state_dict().keys());
  CHECK(data.contains("1.running_mean"));
  CHECK(data.contains("1.num_batches_tracked"));
  CHECK(data.contains("5.weight"));

  auto fresh = make_net(2);
  fresh->eval();
  CHECK(fresh->forward(input()).to_vector<float>() != want.to_vector<float>());
  auto r = nn::load(*fresh, dir.file("model.safetensors"));
  CHECK(r.missing_keys.empty());
  CHECK(r.unexpected_keys.empty());
  CHECK(fresh->forward(input()).to_vector<float>() == want.to_vector<float>());
  CHECK(values(*fresh) == values(*net));
}

TEST_CASE("checkpoint: every mismatch is named and nothing changes", "[checkpoint]") {
  TempDir dir("wick-ckpt-test");
  auto net = make_net(1);
  nn::StateDict good = net->state_dict();
  auto target = make_net(3);
  const auto before = values(*target);

  auto write = [&](const nn::StateDict& sd, const std::string& name) {
    std::vector<nn::NamedTensor> ts;
    for (const auto& [k, t] : sd) ts.emplace_back(k, t);
    nn::save_safetensors(dir.file(name), ts);
    return dir.file(name);
  };
  nn::StateDict missing = good;
  missing.erase("5.bias");
  nn::StateDict unexpected = good;
  unexpected.insert("extra.weight", wick::zeros({2}));
  nn::StateDict shape = good;
  shape.insert_or_assign("5.weight", wick::zeros({5, 63}));
  nn::StateDict dtype = good;
  dtype.insert_or_assign("0.bias", wick::zeros({4}, kFloat64));
  nn::StateDict all = good;
  all.erase("5.bias");
  all.insert("extra.weight", wick::zeros({2}));
  all.insert_or_assign("5.weight", wick::zeros({5, 63}));
  all.insert_or_assign("0.bias", wick::zeros({4}, kFloat64));

  const std::string p_missing = write(missing, "missing.safetensors");
  const std::string p_unexpected = write(unexpected, "unexpected.safetensors");
  const std::string p_shape = write(shape, "shape.safetensors");
  const std::string p_dtype = write(dtype, "dtype.safetensors");
  const std::string p_all = write(all, "all.safetensors");

  CHECK_THROWS_WITH(nn::load(*target, p_missing),
                    Catch::Contains("Missing key(s)") && Catch::Contains("\"5.bias\"") && Catch::Contains(p_missing));
  CHECK(values(*target) == before);
  CHECK_THROWS_WITH(nn::load(*target, p_unexpected),
                    Catch::Contains("Unexpected key(s)") && Catch::Contains("\"extra.weight\""));
  CHECK(values(*target) == before);
  CHECK_THROWS_WITH(nn::load(*target, p_shape),
                    Catch::Contains("size mismatch for 5.weight") && Catch::Contains("[5, 63]"));
  CHECK(values(*target) == before);
  CHECK_THROWS_WITH(nn::load(*target, p_dtype),
                    Catch::Contains("dtype mismatch for 0.bias") && Catch::Contains("float64"));
  CHECK(values(*target) == before);
  try {
    nn::load(*target, p_all);
    FAIL("no error");
  } catch (const Error& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("\"5.bias\"") != std::string::npos);
    CHECK(msg.find("\"extra.weight\"") != std::string::npos);
    CHECK(msg.find("size mismatch for 5.weight") != std::string::npos);
    CHECK(msg.find("dtype mismatch for 0.bias") != std::string::npos);
  }
  CHECK(values(*target) == before);

  // Non-strict: missing and unexpected keys are reported, the rest is loaded.
  auto r = nn::load(*target, p_missing, /*strict=*/false);
  CHECK(r.missing_keys == std::vector<std::string>{"5.bias"});
  CHECK(target->state_dict().at("5.weight").to_vector<float>() == good.at("5.weight").to_vector<float>());
}

TEST_CASE("checkpoint: a file cut off at every 64th byte fails cleanly and changes nothing", "[checkpoint]") {
  TempDir dir("wick-ckpt-test");
  auto net = make_net(1);
  nn::save(*net, dir.file("full.safetensors"));
  const auto full = bytes_of(dir.file("full.safetensors"));
  REQUIRE(full.size() > 1000);
  auto target = make_net(4);
  const auto before = values(*target);
  int cuts = 0;
  for (size_t n = 0; n < full.size(); n += 64) {
    write_bytes(dir.file("cut.safetensors"), full, n);
    INFO("cut at byte " << n << " of " << full.size());
    CHECK_THROWS_AS(nn::load(*target, dir.file("cut.safetensors")), Error);
    ++cuts;
  }
  CHECK(cuts == static_cast<int>((full.size() + 63) / 64));
  CHECK(values(*target) == before);
  // A flipped header byte: malformed, also refused.
  auto bad = full;
  bad[10] = '!';
  write_bytes(dir.file("bad.safetensors"), bad, bad.size());
  CHECK_THROWS_AS(nn::load(*target, dir.file("bad.safetensors")), Error);
  CHECK(values(*target) == before);
  CHECK_THROWS_WITH(nn::load(*target, dir.file("nope.safetensors")), Catch::Contains("nope.safetensors"));
}

TEST_CASE("checkpoint: a failed save leaves the previous file intact", "[checkpoint]") {
  TempDir dir("wick-ckpt-test");
  const std::string path = dir.file("model.safetensors");
  auto small = make_net(1);
  nn::save(*small, path);
  const auto before = bytes_of(path);
  auto big = make_net(2, 2000);  // ~512 KB of weights

  // A write that fails part way (file size limit; works even as root), via SIGXFSZ ignored.
  struct rlimit old {};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim = old;
  lim.rlim_cur = 64 * 1024;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &lim) == 0);
  bool threw = false;
  try {
    nn::save(*big, path);
  } catch (const Error&) {
    threw = true;
  }
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  CHECK(threw);
  CHECK(bytes_of(path) == before);
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) {
    INFO(e.path());
    ++files;
  }
  CHECK(files == 1);  // no temporary left behind

  // An unwritable destination directory.
  CHECK_THROWS_AS(nn::save(*big, dir.file("no/such/dir/model.safetensors")), Error);
  if (::geteuid() != 0) {
    fs::permissions(dir.path, fs::perms::owner_read | fs::perms::owner_exec);
    CHECK_THROWS_AS(nn::save(*big, path), Error);
    fs::permissions(dir.path, fs::perms::owner_all);
    CHECK(bytes_of(path) == before);
  }
  auto check = make_net(5);
  nn::load(*check, path);
  CHECK(values(*check) == values(*small));
}
