// safetensors: round trips, the exact on-disk format, atomic saves, and a wick::Error (never a
// crash) for every kind of malformed or truncated file (Note [safetensors validation]).
#include "wick/nn/safetensors.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wick/wick.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "support/allclose.h"

// A sanitizer's allocator does not survive a limit on the address space (RLIMIT_AS).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define WICK_TEST_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define WICK_TEST_SANITIZER 1
#endif
#endif

using namespace wick;
using namespace wick::serialize;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {
std::string oracle_file() { return std::string(WICK_TEST_DATA_DIR) + "/ops.safetensors"; }

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// A fresh directory under the system temp dir, removed at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / fmt::format("wick-safetensors-{}-{}", ::getpid(), counter()++);
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

// A file image with the given header text and data bytes.
std::string image(const std::string& header, const std::string& data = "") {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

SafetensorsData parse(const std::string& bytes) { return parse_safetensors(bytes.data(), bytes.size(), "test.st"); }
}  // namespace

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

TEST_CASE("safetensors: a failed save leaves the old file intact and no temporary behind") {
  TempDir dir;
  const std::string path = dir.file("ckpt.safetensors");
  save_safetensors(path, {{"w", ones({3})}});
  const std::string before = read_bytes(path);
  CHECK_THROWS_WITH(save_safetensors(path, {{"w", zeros({3})}, {"v", Tensor()}}),
                    Contains(path) && Contains("\"v\" is undefined"));
  CHECK_THROWS_WITH(save_safetensors(path, {{"w", zeros({3})}, {"w", zeros({3})}}), Contains("more than one tensor"));
  CHECK_THROWS_WITH(save_safetensors(path, {{"", zeros({3})}}), Contains("empty name"));
  CHECK_THROWS_WITH(save_safetensors(path, {{"__metadata__", zeros({3})}}), Contains("reserved"));
  CHECK(read_bytes(path) == before);
  // An I/O failure: the destination is a directory, so the final rename fails.
  const std::string as_dir = dir.file("is_a_dir");
  fs::create_directories(fs::path(as_dir) / "child");
  CHECK_THROWS_WITH(save_safetensors(as_dir, {{"w", ones({3})}}), Contains(as_dir) && Contains("renaming"));
  CHECK_THROWS_WITH(save_safetensors(dir.file("missing/x.safetensors"), {{"w", ones({3})}}),
                    Contains("missing/x.safetensors") && Contains("cannot create"));
  CHECK(read_bytes(path) == before);
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) files += e.is_regular_file() ? 1 : 0;
  CHECK(files == 1);  // no *.tmp-* left behind
  // A successful save replaces the file.
  save_safetensors(path, {{"w", full({3}, 2.0)}});
  CHECK(load_safetensors(path).at("w").to_vector<float>() == std::vector<float>{2, 2, 2});
}

TEST_CASE("safetensors: a save through a symbolic link writes the link's target and keeps its mode") {
  TempDir dir;
  fs::create_directories(dir.path / "runs");
  const std::string real = dir.file("runs/real.safetensors"), link = dir.file("latest.safetensors");
  save_safetensors(real, {{"w", ones({3})}});
  REQUIRE(::chmod(real.c_str(), 0600) == 0);
  fs::create_symlink("runs/real.safetensors", link);  // relative, as `ln -s` makes it

  save_safetensors(link, {{"w", full({3}, 2.0)}});
  CHECK(fs::is_symlink(link));
  CHECK(fs::read_symlink(link) == fs::path("runs/real.safetensors"));
  CHECK(load_safetensors(real).at("w").to_vector<float>() == std::vector<float>{2, 2, 2});
  struct stat st {};
  REQUIRE(::stat(real.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  // No temporary left next to the link or next to the target.
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 2);  // runs, the link
  CHECK(std::distance(fs::directory_iterator(dir.path / "runs"), fs::directory_iterator()) == 1);

  // A plain file keeps its mode too.
  const std::string plain = dir.file("plain.safetensors");
  save_safetensors(plain, {{"w", ones({3})}});
  REQUIRE(::chmod(plain.c_str(), 0640) == 0);
  save_safetensors(plain, {{"w", full({3}, 3.0)}});
  REQUIRE(::stat(plain.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  CHECK(load_safetensors(plain).at("w").to_vector<float>() == std::vector<float>{3, 3, 3});

  // A link to nothing is refused, and neither the link nor its missing target is made a file.
  const std::string dangling = dir.file("dangling.safetensors");
  fs::create_symlink("runs/none.safetensors", dangling);
  CHECK_THROWS_AS(save_safetensors(dangling, {{"w", ones({3})}}), IOError);
  CHECK_THROWS_WITH(save_safetensors(dangling, {{"w", ones({3})}}),
                    Contains(dangling) && Contains("symbolic link that cannot be resolved"));
  CHECK(fs::is_symlink(dangling));
  CHECK(!fs::exists(dir.path / "runs" / "none.safetensors"));
}

TEST_CASE("safetensors: running out of memory while building the file is an OutOfMemoryError naming it") {
#ifdef WICK_TEST_SANITIZER
  WARN("not run under a sanitizer: it limits the address space, which a sanitizer's allocator does not survive");
#else
  TempDir dir;
  const std::string path = dir.file("big.safetensors");
  // 128 MiB of float32 data, allocated (not touched) before the fork. The child may map only
  // 16 MiB more, so the file's 128 MiB buffer cannot be had.
  const Tensor big = empty({int64_t{32} << 20});
  std::fflush(nullptr);
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::alarm(30);
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    const rlim_t limit = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) + (rlim_t{16} << 20);
    struct rlimit rl {
      limit, limit
    };
    ::setrlimit(RLIMIT_AS, &rl);
    std::string msg = "no error";
    try {
      save_safetensors(path, {{"big", big}});
    } catch (const OutOfMemoryError& e) {
      msg = std::string("OutOfMemoryError: ") + e.what();
    } catch (const std::exception& e) {
      msg = std::string("another exception: ") + e.what();
    }
    (void)!::write(fds[1], msg.data(), msg.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string msg;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) msg.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  INFO(msg);
  CHECK_THAT(msg, Contains("OutOfMemoryError: ") && Contains(path) && Contains("134217728 of tensor data"));
  CHECK(!fs::exists(path));  // nothing was written
#endif
}

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
