// wick::data: the IDX reader on small hand-made files (gzip and plain). The batch loader:
// data_batch_loader_test.cpp.
#include "wick/nn/data/data.h"

#include <unistd.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "wick/autograd/functions.h"

using namespace wick;
using namespace wick::data;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("wick-data-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
  static int& counter() {
    static int c = 0;
    return c;
  }
};

std::vector<uint8_t> idx_bytes(uint8_t type, const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(d >> s));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

void write_gz(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) == static_cast<int>(bytes.size()));
  gzclose(f);
}

void write_plain(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream o(path, std::ios::binary);
  o.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream i(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(i), std::istreambuf_iterator<char>()};
}

// One gzip member holding bytes[begin, end), made with zlib's deflate (a gzip file may hold
// several back to back).
std::vector<uint8_t> gzip_member(const std::vector<uint8_t>& bytes, size_t begin = 0, size_t end = SIZE_MAX) {
  end = std::min(end, bytes.size());
  z_stream z{};
  REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::vector<uint8_t> out(deflateBound(&z, static_cast<uLong>(end - begin)) + 32);
  z.next_in = const_cast<Bytef*>(bytes.data() + begin);
  z.avail_in = static_cast<uInt>(end - begin);
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::vector<uint8_t> cat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

}  // namespace

TEST_CASE("data: IDX images and labels load from gzip and plain files", "[data]") {
  TempDir dir;
  std::vector<uint8_t> pixels;
  for (int i = 0; i < 5 * 2 * 3; ++i) pixels.push_back(static_cast<uint8_t>(i * 8));
  write_gz(dir.file("train-images-idx3-ubyte.gz"), idx_bytes(0x08, {5, 2, 3}, pixels));
  write_gz(dir.file("train-labels-idx1-ubyte.gz"), idx_bytes(0x08, {5}, {3, 0, 9, 1, 3}));
  write_plain(dir.file("plain-images"), idx_bytes(0x08, {5, 2, 3}, pixels));

  Tensor img = load_idx_images(dir.file("train-images-idx3-ubyte.gz"));
  CHECK(img.sizes() == std::vector<int64_t>{5, 1, 2, 3});
  CHECK(img.dtype() == kFloat32);
  auto v = img.to_vector<float>();
  for (size_t i = 0; i < v.size(); ++i) CHECK(v[i] == Approx(pixels[i] / 255.0).epsilon(1e-6));
  CHECK(load_idx_images(dir.file("plain-images")).to_vector<float>() == v);
  Tensor norm = load_idx_images(dir.file("plain-images"), 0.5, 0.25);
  CHECK(norm.to_vector<float>()[7] == Approx((pixels[7] / 255.0 - 0.5) / 0.25).epsilon(1e-6));

  Tensor lab = load_idx_labels(dir.file("train-labels-idx1-ubyte.gz"));
  CHECK(lab.dtype() == kInt64);
  CHECK(lab.to_vector<int64_t>() == std::vector<int64_t>{3, 0, 9, 1, 3});

  // A split needs MNIST's 28x28 images.
  std::vector<uint8_t> pixels28(5 * 28 * 28);
  for (size_t i = 0; i < pixels28.size(); ++i) pixels28[i] = static_cast<uint8_t>(i % 251);
  write_gz(dir.file("train-images-idx3-ubyte.gz"), idx_bytes(0x08, {5, 28, 28}, pixels28));
  Split s = load_mnist_split(dir.path.string(), "train", 0.0, 1.0);
  CHECK(s.images.sizes() == std::vector<int64_t>{5, 1, 28, 28});
  CHECK(s.images.to_vector<float>()[800] == Approx((800 % 251) / 255.0).epsilon(1e-6));
  CHECK(s.labels.to_vector<int64_t>()[2] == 9);
}

TEST_CASE("data: load_mnist_split refuses images that are not 28x28, naming the file and the dims", "[data]") {
  TempDir dir;
  write_gz(dir.file("train-labels-idx1-ubyte.gz"), idx_bytes(0x08, {2}, {0, 1}));
  const std::string images = dir.file("train-images-idx3-ubyte.gz");
  for (const auto& [rows, cols] : std::vector<std::pair<uint32_t, uint32_t>>{{32, 32}, {28, 27}, {2, 3}}) {
    write_gz(images, idx_bytes(0x08, {2, rows, cols}, std::vector<uint8_t>(2 * rows * cols, 5)));
    const std::string dims = std::to_string(rows) + "x" + std::to_string(cols);
    INFO(dims);
    CHECK_THROWS_AS(load_mnist_split(dir.path.string(), "train"), FormatError);
    CHECK_THROWS_WITH(load_mnist_split(dir.path.string(), "train"),
                      Catch::Contains(images) && Catch::Contains(dims) && Catch::Contains("28x28"));
    CHECK(load_idx_images(images).sizes() == std::vector<int64_t>{2, 1, rows, cols});  // the reader itself takes any
  }
}

TEST_CASE("data: IDX multi-byte types are read big-endian", "[data]") {
  TempDir dir;
  // int32 [2]: 0x01020304, 0xFFFFFFFE
  write_gz(dir.file("i32.gz"), idx_bytes(0x0C, {2}, {1, 2, 3, 4, 0xFF, 0xFF, 0xFF, 0xFE}));
  IdxArray a = read_idx(dir.file("i32.gz"));
  REQUIRE(a.bytes.size() == 8);
  int32_t x[2];
  std::memcpy(x, a.bytes.data(), 8);
  CHECK(x[0] == 0x01020304);
  CHECK(x[1] == -2);
  CHECK(a.dims == std::vector<int64_t>{2});
}

TEST_CASE("data: damaged IDX files raise errors naming the file and the problem", "[data]") {
  TempDir dir;
  const std::string missing = dir.file("t10k-images-idx3-ubyte.gz");
  CHECK_THROWS_WITH(load_idx_images(missing),
                    Catch::Contains(missing) && Catch::Contains("sudo apt-get install dataset-fashion-mnist"));
  CHECK_THROWS_WITH(load_mnist_split(dir.path.string(), "t10k"),
                    Catch::Contains("apt-get install dataset-fashion-mnist"));

  write_gz(dir.file("magic.gz"), {1, 2, 8, 1, 0, 0, 0, 1, 7});
  CHECK_THROWS_WITH(read_idx(dir.file("magic.gz")), Catch::Contains("not an IDX file"));
  write_gz(dir.file("type.gz"), idx_bytes(0x07, {1}, {7}));
  CHECK_THROWS_WITH(read_idx(dir.file("type.gz")), Catch::Contains("unknown element type 0x07"));
  write_gz(dir.file("nodims.gz"), {0, 0, 8, 0});
  CHECK_THROWS_WITH(read_idx(dir.file("nodims.gz")), Catch::Contains("0 dimensions"));
  write_gz(dir.file("short.gz"), idx_bytes(0x08, {4, 2}, {1, 2, 3}));
  CHECK_THROWS_WITH(read_idx(dir.file("short.gz")), Catch::Contains("truncated") && Catch::Contains("need 8 bytes"));
  write_gz(dir.file("long.gz"), idx_bytes(0x08, {2}, {1, 2, 3}));
  CHECK_THROWS_WITH(read_idx(dir.file("long.gz")), Catch::Contains("bytes after"));
  write_gz(dir.file("header.gz"), {0, 0, 8, 3, 0, 0});
  CHECK_THROWS_WITH(read_idx(dir.file("header.gz")), Catch::Contains("ends inside the header"));
  write_gz(dir.file("huge.gz"), idx_bytes(0x0E, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, {}));
  CHECK_THROWS_WITH(read_idx(dir.file("huge.gz")), Catch::Contains("more than the limit of 1073741824 bytes"));
  write_gz(dir.file("vector.gz"), idx_bytes(0x08, {2}, {1, 2}));
  CHECK_THROWS_WITH(load_idx_images(dir.file("vector.gz")), Catch::Contains("3 dimensions"));

  // A gzip stream cut short: every prefix fails cleanly.
  std::vector<uint8_t> pixels(600, 17);
  write_gz(dir.file("full.gz"), idx_bytes(0x08, {6, 10, 10}, pixels));
  auto full = read_file(dir.file("full.gz"));
  for (size_t cut = 1; cut + 1 < full.size(); cut += 3) {
    write_plain(dir.file("cut.gz"),
                std::vector<uint8_t>(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(cut)));
    INFO("cut at " << cut);
    CHECK_THROWS_AS(read_idx(dir.file("cut.gz")), Error);
  }

  // Counts and label ranges of a split are checked.
  write_gz(dir.file("train-images-idx3-ubyte.gz"), idx_bytes(0x08, {2, 28, 28}, std::vector<uint8_t>(2 * 28 * 28, 1)));
  write_gz(dir.file("train-labels-idx1-ubyte.gz"), idx_bytes(0x08, {3}, {0, 1, 2}));
  CHECK_THROWS_WITH(load_mnist_split(dir.path.string(), "train"), Catch::Contains("2 images but 3 labels"));
  write_gz(dir.file("train-labels-idx1-ubyte.gz"), idx_bytes(0x08, {2}, {0, 10}));
  CHECK_THROWS_WITH(load_mnist_split(dir.path.string(), "train"), Catch::Contains("label 10 of sample 1"));
}

// Note [gzip members and trailing bytes] (nn/src/data/idx.cpp): what Python 3.11's
// gzip.decompress accepts (more members, an empty one, zero padding) loads; junk after a member
// is a FormatError naming the file and the offset (Python: BadGzipFile "Not a gzipped file"); a
// member cut short is the truncation error (Python: EOFError).
TEST_CASE("data: gzip IDX files with several members, zero padding or trailing bytes", "[data]") {
  TempDir dir;
  std::vector<uint8_t> pixels(600);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 7 % 251);
  const std::vector<uint8_t> idx = idx_bytes(0x08, {6, 10, 10}, pixels);
  const std::vector<uint8_t> one = gzip_member(idx);
  write_plain(dir.file("one.gz"), one);
  const IdxArray want = read_idx(dir.file("one.gz"));
  REQUIRE(want.bytes == pixels);
  auto same_as_one = [&](const std::string& name, const std::vector<uint8_t>& bytes) {
    INFO(name);
    write_plain(dir.file(name), bytes);
    const IdxArray a = read_idx(dir.file(name));
    CHECK(a.type == want.type);
    CHECK(a.dims == want.dims);
    CHECK(a.bytes == want.bytes);
  };
  // The header split across two members (6 of its 16 bytes in the first), and the data split too.
  same_as_one("split-header.gz", cat({gzip_member(idx, 0, 6), gzip_member(idx, 6)}));
  same_as_one("three.gz", cat({gzip_member(idx, 0, 16), gzip_member(idx, 16, 300), gzip_member(idx, 300)}));
  // Empty members, first, between and last.
  const std::vector<uint8_t> empty = gzip_member({});
  same_as_one("empty-members.gz", cat({empty, gzip_member(idx, 0, 100), empty, gzip_member(idx, 100), empty}));
  // Zero bytes after a member, also between members and after the last.
  same_as_one("zero-padded.gz", cat({one, std::vector<uint8_t>(7, 0)}));
  same_as_one("zeros-between.gz",
              cat({gzip_member(idx, 0, 50), std::vector<uint8_t>(3, 0), gzip_member(idx, 50), {0}}));
  same_as_one("long-zero-padding.gz", cat({one, std::vector<uint8_t>(300000, 0)}));  // longer than the read buffer

  // Anything else after a member is refused, at the offset of the first byte that is not padding.
  struct Bad {
    std::string name;
    std::vector<uint8_t> bytes;
    std::vector<std::string> expected;
  };
  const std::string end = std::to_string(one.size());
  const std::vector<Bad> bad = {
      {"junk.gz", cat({one, {'j', 'u', 'n', 'k'}}), {"not another gzip member", "bytes 6a 75 at offset " + end}},
      {"zeros-then-junk.gz",
       cat({one, {0, 0, 'x'}}),
       {"not another gzip member", "offset " + std::to_string(one.size() + 2)}},
      {"lone-1f.gz", cat({one, {0x1f}}), {"not another gzip member", "byte 1f at offset " + end}},
      {"junk-between-members.gz",
       cat({gzip_member(idx, 0, 50), {1}, gzip_member(idx, 50)}),
       {"not another gzip member", "bytes 01 1f at offset " + std::to_string(gzip_member(idx, 0, 50).size())}},
  };
  for (const Bad& b : bad) {
    INFO(b.name);
    const std::string path = dir.file(b.name);
    write_plain(path, b.bytes);
    CHECK_THROWS_AS(read_idx(path), FormatError);
    for (const std::string& e : b.expected)
      CHECK_THROWS_WITH(read_idx(path), Catch::Contains(path) && Catch::Contains(e));
    CHECK_THROWS_AS(load_idx_images(path), FormatError);
  }
  // A member cut short (the second one, or one that is only the magic bytes) is the error of a
  // truncated gzip stream, as before; it names the member's offset.
  const std::vector<uint8_t> first = gzip_member(idx, 0, 100), second = gzip_member(idx, 100);
  const std::string cut = dir.file("cut-second.gz");
  write_plain(cut, cat({first, std::vector<uint8_t>(second.begin(), second.end() - 3)}));
  CHECK_THROWS_AS(read_idx(cut), FormatError);
  CHECK_THROWS_WITH(read_idx(cut), Catch::Contains(cut) && Catch::Contains("damaged") &&
                                       Catch::Contains("unexpected end of file") &&
                                       Catch::Contains("starts at offset " + std::to_string(first.size())));
  const std::string magic = dir.file("magic-only.gz");
  write_plain(magic, cat({one, {0x1f, 0x8b}}));
  CHECK_THROWS_AS(read_idx(magic), FormatError);
  CHECK_THROWS_WITH(read_idx(magic), Catch::Contains("unexpected end of file"));
  // A member whose CRC-32 does not match its data.
  std::vector<uint8_t> crc = one;
  crc[crc.size() - 8] ^= 1;
  write_plain(dir.file("crc.gz"), crc);
  CHECK_THROWS_AS(read_idx(dir.file("crc.gz")), FormatError);
  CHECK_THROWS_WITH(read_idx(dir.file("crc.gz")), Catch::Contains("damaged"));
  // Complete members that hold more than the header declares: the existing "bytes after" error.
  write_plain(dir.file("long-members.gz"), cat({one, gzip_member({9})}));
  CHECK_THROWS_AS(read_idx(dir.file("long-members.gz")), FormatError);
  CHECK_THROWS_WITH(read_idx(dir.file("long-members.gz")), Catch::Contains("bytes after the 600 bytes of data"));
  // A plain file with a trailing byte, zero or not: the existing error (no padding in plain files).
  for (uint8_t extra : {uint8_t{0}, uint8_t{'j'}}) {
    write_plain(dir.file("plain"), cat({idx, {extra}}));
    CHECK_THROWS_AS(read_idx(dir.file("plain")), FormatError);
    CHECK_THROWS_WITH(read_idx(dir.file("plain")),
                      Catch::Contains(dir.file("plain")) && Catch::Contains("bytes after the 600 bytes of data"));
  }
  // Every cut of a two-member file fails cleanly.
  const std::vector<uint8_t> two = cat({gzip_member(idx, 0, 7), gzip_member(idx, 7)});
  for (size_t n = 1; n < two.size(); ++n) {
    INFO("cut at " << n);
    write_plain(dir.file("cut.gz"), std::vector<uint8_t>(two.begin(), two.begin() + static_cast<std::ptrdiff_t>(n)));
    CHECK_THROWS_AS(read_idx(dir.file("cut.gz")), FormatError);
  }
}
