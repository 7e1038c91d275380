// Typed errors (Note [Typed errors], typed_error_rows.h): the rows of files (safetensors,
// checkpoints, IDX) and of parallel, each with the exact class it must raise and words its message
// must contain. The other tables: error_types_test.cpp.
#include <unistd.h>
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "hostile_support.h"
#include "support/temp_dir.h"
#include "typed_error_rows.h"

using namespace wick;
using namespace wick::test::typed_errors;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

using wick::test::hostile::class_of;  // the exact (most derived) class, by name
using wick::test::hostile::safetensors_image;
using TempDir = wick::test::TempDir;

// ---- the table, by layer (each lambda captures by value: rows outlive their builder) ----

std::vector<Row> file_rows(const TempDir& dir) {
  auto lin = std::make_shared<nn::LinearImpl>(3, 2, f64());
  const std::string truncated =
      dir.write("truncated.safetensors", safetensors_image(std::string(40, ' '), "").substr(0, 20));
  const std::string f16 = dir.write(
      "f16.safetensors", safetensors_image(R"({"t":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", "abcd"));
  const std::string missing = dir.file("missing.safetensors");
  const std::string reserved = dir.file("reserved.safetensors");
  const std::string missing_idx = dir.file("nope-idx1-ubyte");
  const std::string model_file = dir.file("model.safetensors");
  nn::save(*lin, model_file);
  const std::string other_model = dir.file("other.safetensors");
  nn::save(nn::Linear(nn::LinearOptions(3, 2).bias(false), f64()), other_model);
  const std::string bad_magic = dir.write("bad-magic-idx1-ubyte", std::string("\x01\x02\x08\x01", 4));
  const std::string short_idx =
      dir.write("short-idx1-ubyte", std::string("\x00\x00\x08\x01\x00\x00\x00\x05\x01\x02", 10));
  auto opt = std::make_shared<optim::SGD>(lin->parameters(), optim::SGDOptions(0.1));
  return {
      row<FormatError>("a truncated safetensors file", [=] { serialize::load_safetensors(truncated); },
                       {"safetensors", truncated, "header length"}),
      row<IOError>("a safetensors file that is not there", [=] { serialize::load_safetensors(missing); },
                   {"safetensors", missing, "cannot open"}),
      row<NotImplementedError>("a safetensors file of F16 tensors (rethrown with context)",
                               [=] { serialize::load_safetensors(f16); }, {"safetensors", f16, "\"t\"", "F16"}),
      row<IndexError>("a tensor name that is not in the file",
                      [=] { serialize::load_safetensors(model_file).at("nope"); },
                      {"safetensors", "no tensor named \"nope\"", "weight"}),
      row<ValueError>("saving a tensor under a reserved name",
                      [=] {
                        serialize::save_safetensors(reserved, {{"__metadata__", wick::zeros({1})}});
                      },
                      {"save_safetensors", "__metadata__"}),
      row<FormatError>("nn::load of a truncated file (rethrown with context)", [=] { nn::load(*lin, truncated); },
                       {"load", "cannot read the checkpoint", truncated, "header length"}),
      row<IOError>("nn::load of a file that is not there (rethrown with context)", [=] { nn::load(*lin, missing); },
                   {"load", missing, "cannot open"}),
      row<IndexError>("nn::load of a file with a missing key (rethrown with context)",
                      [=] { nn::load(*lin, other_model); }, {"load", other_model, "Missing key(s)", "\"bias\""}),
      row<FormatError>("load_checkpoint of a plain model file", [=] { nn::load_checkpoint(model_file, *lin, *opt); },
                       {"load_checkpoint", model_file, "not a training checkpoint"}),
      row<FormatError>("an IDX file with a bad magic number", [=] { data::read_idx(bad_magic); },
                       {"read_idx", bad_magic, "not an IDX file"}),
      row<FormatError>("a truncated IDX file", [=] { data::read_idx(short_idx); },
                       {"read_idx", short_idx, "truncated", "[5]"}),
      row<IOError>("an IDX file that is not there", [=] { data::read_idx(missing_idx); },
                   {"read_idx", "nope-idx1-ubyte"}),
  };
}

std::vector<Row> parallel_rows() {
  namespace comm = parallel::comm;
  const Tensor a = wick::zeros({2, 3}, f32(cpu(0)));
  const Tensor b = wick::zeros({2, 3}, f64(cpu(1)));
  const std::vector<Device> two{cpu(0), cpu(1)};
  return {
      row<ValueError>("replicate a module that is not on devices[0]",
                      [=] { parallel::replicate(std::make_shared<nn::LinearImpl>(3, 2, f64(cpu(1))), two); },
                      {"replicate", "devices[0] (cpu:0)", "cpu:1"}),
      row<IndexError>("scatter a 0-dim tensor", [=] { comm::scatter(wick::zeros({}, f32()), two); },
                      {"scatter", "0-dim"}),
      row<ValueError>("scatter with chunk sizes that do not add up",
                      [=] {
                        comm::scatter(a, two, {1, 5});
                      },
                      {"scatter", "chunk_sizes", "sum to 2"}),
      row<TypeError>("gather tensors of different dtypes",
                     [=] {
                       comm::gather({a, b}, 0, cpu(0));
                     },
                     {"gather", "tensor 1", "float64", "float32"}),
      row<TypeError>("reduce_add of different dtypes",
                     [=] {
                       comm::reduce_add({a, b}, cpu(0));
                     },
                     {"reduce_add", "input 1", "float64", "float32"}),
      row<ValueError>("reduce_add to a device that holds none of the tensors",
                      [=] {
                        comm::reduce_add({a, wick::zeros({2, 3}, f32(cpu(1)))}, cpu(2));
                      },
                      {"reduce_add", "cpu:2", "cpu:0", "cpu:1"}),
      row<TypeError>("gather_out into a tensor of another dtype",
                     [=] {
                       comm::gather_out({a, a}, wick::zeros({4, 3}, f64()), 0);
                     },
                     {"gather_out", "float32", "float64"}),
      row<TypeError>("gather of replica outputs of different kinds",
                     [=] {
                       parallel::gather(std::vector<nn::Value>{nn::Value(a), nn::Value(int64_t{3})}, cpu(0));
                     },
                     {"gather", "replica 1", "Int 3", "Tensor"}),
      row<IndexError>("gather of dicts with different keys",
                      [=] {
                        parallel::gather(std::vector<nn::Value>{nn::Value::dict({"x"}, {nn::Value(a)}),
                                                                nn::Value::dict({"y"}, {nn::Value(a)})},
                                         cpu(0));
                      },
                      {"gather", "replica 1", "'x'"}),
      row<IndexError>("a reduce root that is not an input",
                      [=] {
                        parallel::local_communicator().reduce({a, a}, a, 5);
                      },
                      {"Communicator::reduce", "root 5", "2 inputs"}),
      row<ValueError>(
          "parallel_apply with more modules than inputs",
          [=] {
            auto m = std::make_shared<nn::LinearImpl>(3, 2, f32());
            parallel::parallel_apply(std::vector<std::shared_ptr<nn::Module>>{m, m}, std::vector<Tensor>{a}, two);
          },
          {"parallel_apply", "modules 2", "inputs 1"}),
      row<TypeError>(
          "a replica that fails keeps its error's class",
          [=] {
            auto m = std::make_shared<nn::LinearImpl>(3, 2, f32());
            auto replicas = parallel::replicate(m, two);
            parallel::parallel_apply(replicas, std::vector<Tensor>{a, wick::zeros({2, 3}, f64(cpu(1)))}, two);
          },
          {"in replica 1 on device cpu:1", "linear", "float64", "float32"}),
      row<ValueError>("DataParallel of a module that is not on device_ids[0]",
                      [=] {
                        auto dp = std::make_shared<parallel::DataParallel>(
                            std::make_shared<nn::LinearImpl>(3, 2, f32(cpu(1))), two);
                        dp->forward(a);
                      },
                      {"device_ids[0]", "cpu:0", "cpu:1"}),
      row<TypeError>("DataParallel of a module that returns no Tensor",
                     [=] { parallel::DataParallel(std::make_shared<ReturnsInt>(), two).forward(a); },
                     {"DataParallel", "Int 3", "Tensor"}),
  };
}

[[maybe_unused]] const bool registered = add_row_tables({
    {"files", [](const TempDir& dir) { return file_rows(dir); }},
    {"parallel", [](const TempDir&) { return parallel_rows(); }},
});

}  // namespace

TEST_CASE("typed errors: files (safetensors, checkpoints, IDX)") {
  TempDir dir("wick-errors-test");
  check_rows(file_rows(dir));
}
TEST_CASE("typed errors: parallel") { check_rows(parallel_rows()); }
