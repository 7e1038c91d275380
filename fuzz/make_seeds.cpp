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

// One gzip member holding `bytes` (several back to back make a multi-member gzip file).
std::string gzip_member(const std::string& bytes) {
  z_stream z{};
  std::string out(compressBound(static_cast<uLong>(bytes.size())) + 64, '\0');
  if (deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::exit(1);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) std::exit(1);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// A safetensors image written by hand: `header` (JSON) then `data`.
std::string safetensors_image(std::string header, const std::string& data) {
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  return out + header + data;
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

  // Dtypes wick cannot hold next to one it can (Note [Unsupported safetensors dtypes]).
  const std::string foreign = safetensors_image(
      R"({"f32":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"f16":{"dtype":"F16","shape":[2],"data_offsets":)"
      R"([8,12]},"bf16":{"dtype":"BF16","shape":[1],"data_offsets":[12,14]},"f4":{"dtype":"F4","shape":[2],)"
      R"("data_offsets":[14,15]},"__metadata__":{"format":"pt"}})",
      std::string("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x3c\x00\x40\x80\x3f\x21", 15));
  write_file(st / "seed-unsupported-dtypes", foreign);
  // Only dtypes that Widen reads (Note [Widening safetensors dtypes]): the widening loops run.
  const std::string widenable =
      safetensors_image(R"({"f16":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},"u64":{"dtype":"U64","shape":[1],)"
                        R"("data_offsets":[4,12]},"e4m3":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[12,14]},)"
                        R"("i8":{"dtype":"I8","shape":[2],"data_offsets":[14,16]}})",
                        std::string("\x00\x3c\x01\x7c\xff\xff\xff\xff\xff\xff\xff\x7f\x7e\xff\x80\x7f", 16));
  write_file(st / "seed-widenable-dtypes", widenable);

  // checkpoints of the harness's model, before and after a training step, for every optimizer.
  const fs::path ck = root / "checkpoint";
  for (int kind = 0; kind < fuzz::Model::kOptimizers; ++kind) {
    fuzz::Model m;
    auto opt = m.optimizer(kind);
    const std::string k = std::to_string(kind);
    nn::save(*m.net, (ck / ("seed-model-" + k)).string());
    training_step(m, *opt);
    training_step(m, *opt);
    nn::save(*opt, (ck / ("seed-optimizer-" + k)).string());
    nn::save_checkpoint((ck / ("seed-checkpoint-" + k)).string(), *m.net, *opt, 2, {{"note", "seed"}});
  }
  write_file(ck / "seed-unsupported-dtypes", foreign);

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
  // Two gzip members split inside the header, an empty one, then zero padding (Note [gzip
  // members and trailing bytes] in nn/src/data/idx.cpp).
  const std::string labels = files[0].second;
  write_file(ix / "seed-labels-members.gz",
             gzip_member(labels.substr(0, 6)) + gzip_member(labels.substr(6)) + gzip_member("") + std::string(4, '\0'));
  std::printf("seeds written under %s\n", root.c_str());
  return 0;
}
