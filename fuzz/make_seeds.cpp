// Writes the seed corpora of the fuzz harnesses with wick's own writers: safetensors images
// (serialize_safetensors), model, optimizer and training checkpoints (nn::save,
// nn::save_checkpoint) of the harness's model, and IDX files raw and gzip-compressed.
// Usage: fuzz_make_seeds <corpus dir>   (writes <dir>/{safetensors,checkpoint,idx}/seed-*)
#include <wick/wick.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "model.h"

namespace fs = std::filesystem;
using namespace wick;

namespace {

void write_file(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

void write_gz(const fs::path& p, const std::string& bytes) {
  gzFile f = gzopen(p.c_str(), "wb9");
  if (!f || gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) != static_cast<int>(bytes.size())) {
    std::fprintf(stderr, "cannot write %s\n", p.c_str());
    std::exit(1);
  }
  gzclose(f);
}

// An IDX image: magic, big-endian dims, then `data` (already big-endian).
std::string idx(uint8_t type, const std::vector<uint32_t>& dims, const std::string& data) {
  std::string out{'\0', '\0', static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>((d >> s) & 0xff));
  return out + data;
}

void training_step(fuzz::Model& m, optim::Optimizer& opt) {
  opt.zero_grad();
  m.net->forward(wick::ones({2, 3}, TensorOptions(kFloat32))).square().sum().backward();
  opt.step();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
    return 2;
  }
  const fs::path root = argv[1];
  for (const char* h : {"safetensors", "checkpoint", "idx"}) fs::create_directories(root / h);

  // safetensors: every dtype, 0-dim and empty tensors, metadata.
  const fs::path st = root / "safetensors";
  write_file(st / "seed-empty", serialize::serialize_safetensors({}));
  write_file(st / "seed-dtypes",
             serialize::serialize_safetensors({{"f32", wick::arange(0, 6, 1, TensorOptions(kFloat32)).reshape({2, 3})},
                                               {"f64", wick::full({}, 2.5, TensorOptions(kFloat64))},
                                               {"i64", wick::arange(0, 4, 1, TensorOptions(kInt64))},
                                               {"bool", wick::ones({3}, TensorOptions(kBool))},
                                               {"empty", wick::zeros({0, 4}, TensorOptions(kFloat32))}},
                                              {{"format", "pt"}, {"note", "seed"}}));

  // checkpoints of the harness's model, before and after a training step, for both optimizers.
  const fs::path ck = root / "checkpoint";
  for (int kind = 0; kind < 2; ++kind) {
    fuzz::Model m;
    auto opt = m.optimizer(kind);
    const std::string k = std::to_string(kind);
    nn::save(*m.net, (ck / ("seed-model-" + k)).string());
    training_step(m, *opt);
    training_step(m, *opt);
    nn::save(*opt, (ck / ("seed-optimizer-" + k)).string());
    nn::save_checkpoint((ck / ("seed-checkpoint-" + k)).string(), *m.net, *opt, 2, {{"note", "seed"}});
  }

  // IDX: labels and images (ubyte), and the other element types; raw and gzip.
  const fs::path ix = root / "idx";
  const std::vector<std::pair<std::string, std::string>> files = {
      {"labels", idx(0x08, {10}, std::string("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09", 10))},
      {"images", idx(0x08, {2, 3, 3}, std::string(18, '\x7f'))},
      {"int16", idx(0x0B, {2}, std::string("\x01\x02\x03\x04", 4))},
      {"int32", idx(0x0C, {1, 1}, std::string("\x00\x00\x01\x00", 4))},
      {"float32", idx(0x0D, {1}, std::string("\x3f\x80\x00\x00", 4))},
      {"float64", idx(0x0E, {1}, std::string("\x3f\xf0\x00\x00\x00\x00\x00\x00", 8))},
  };
  for (const auto& [name, bytes] : files) {
    write_file(ix / ("seed-" + name), bytes);
    write_gz(ix / ("seed-" + name + ".gz"), bytes);
  }
  std::printf("seeds written under %s\n", root.c_str());
  return 0;
}
