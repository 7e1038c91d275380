// safetensors reader and writer (Notes [safetensors validation] and [Atomic save] in
// wick/nn/safetensors.h).
#include "wick/nn/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "file_descriptor.h"
#include "json_limits.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/nn/loader_limits.h"

namespace wick::serialize {

static_assert(std::endian::native == std::endian::little,
              "safetensors stores little-endian data; wick's reader assumes a little-endian host");

namespace {

using ordered_json = nlohmann::ordered_json;

using detail::json_preview;

// A name as error messages quote it: at most kMaxQuotedChars characters.
std::string q(const std::string& name) { return detail::quote_prefix(name, kMaxQuotedChars); }

// A source of bytes: a file (pread) or memory. `read` returns false when fewer than `n` bytes
// were available at `offset`.
struct Source {
  std::string what;
  uint64_t size = 0;
  std::function<bool(uint64_t offset, void* dst, size_t n)> read;
};

// FormatError for bad contents; IOError (fail<IOError>) for a file that cannot be opened or written.
template <class E = FormatError>
[[noreturn]] void fail(const std::string& what, const std::string& problem) {
  WICK_FAIL_T(E, "safetensors: {}: {}", what, problem);
}

// Reads an unsigned integer from a JSON number, rejecting negatives, fractions and other types.
uint64_t as_u64(const ordered_json& v, const std::string& what, const std::string& field) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) fail(what, fmt::format("{} has the negative value {}", field, v.get<int64_t>()));
  fail(what, fmt::format("{} must be a non-negative integer, got {}", field, json_preview(v)));
}

struct Entry {
  std::string name;
  DType dtype;
  DimVector shape;
  uint64_t begin = 0, end = 0;
};

SafetensorsData parse(const Source& src) {
  const std::string& what = src.what;
  if (src.size < 8)
    fail(what, fmt::format("the file is truncated: {} bytes, too short for the 8-byte header length", src.size));
  unsigned char len_bytes[8];
  if (!src.read(0, len_bytes, 8)) fail(what, "cannot read the 8-byte header length (truncated file)");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len_bytes[i];
  if (n > src.size - 8)
    fail(what, fmt::format("the header length {} exceeds the {} bytes that follow it (truncated file or corrupt "
                           "header length)",
                           n, src.size - 8));
  if (n > kMaxHeaderBytes)
    fail(what, fmt::format("the header length {} exceeds the limit of {} bytes", n, kMaxHeaderBytes));
  if (n < 2) fail(what, fmt::format("the header length {} is too small for a JSON object", n));
  std::string header(static_cast<size_t>(n), '\0');
  if (!src.read(8, header.data(), header.size())) fail(what, "cannot read the header (truncated file)");
  const uint64_t data_start = 8 + n;
  const uint64_t data_size = src.size - data_start;

  // Parse with the depth limit (Note [Loader limits]); a tensor named twice is a repeated key,
  // refused (nlohmann would silently keep the last one).
  const ordered_json h = detail::parse_json_limited(header, fmt::format("safetensors: {}: the header", what));
  if (!h.is_object()) fail(what, fmt::format("the header must be a JSON object, got a {}", h.type_name()));

  SafetensorsData out;
  std::vector<Entry> entries;
  for (auto it = h.begin(); it != h.end(); ++it) {
    const std::string& key = it.key();
    const ordered_json& v = it.value();
    if (key == "__metadata__") {
      if (!v.is_object()) fail(what, fmt::format("__metadata__ must be an object of strings, got a {}", v.type_name()));
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string())
          fail(what, fmt::format("__metadata__[\"{}\"] must be a string, got {}",
                                 detail::quote_prefix(m.key(), kMaxQuotedChars), json_preview(m.value())));
        out.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string field = fmt::format("tensor \"{}\"", detail::quote_prefix(key, kMaxQuotedChars));
    if (!v.is_object()) fail(what, fmt::format("{} must be described by an object, got {}", field, json_preview(v)));
    for (const char* f : {"dtype", "shape", "data_offsets"})
      if (!v.contains(f)) fail(what, fmt::format("{} has no \"{}\" field", field, f));
    Entry e;
    e.name = key;
    if (!v["dtype"].is_string())
      fail(what, fmt::format("{}: dtype must be a string, got {}", field, json_preview(v["dtype"])));
    try {
      e.dtype = dtype_from_safetensors_name(v["dtype"].get<std::string>());
    } catch (const Error& err) {
      rethrow_with_context(err, fmt::format("safetensors: {}: {}: ", what, field));
    }
    const ordered_json& shape = v["shape"];
    if (!shape.is_array()) fail(what, fmt::format("{}: shape must be an array, got {}", field, json_preview(shape)));
    if (shape.size() > kMaxLoadedDims)
      fail(what, fmt::format("{}: shape has {} dims, more than the limit of {}", field, shape.size(), kMaxLoadedDims));
    for (size_t i = 0; i < shape.size(); ++i) {
      const uint64_t d = as_u64(shape[i], what, fmt::format("{}: shape[{}]", field, i));
      if (d > static_cast<uint64_t>(INT64_MAX))
        fail(what, fmt::format("{}: shape[{}] = {} does not fit in int64", field, i, d));
      e.shape.push_back(static_cast<int64_t>(d));
    }
    // numel, strides and bytes, checked against overflow (Note [Checked sizes]).
    uint64_t bytes = 0;
    try {
      bytes = checked_nbytes(e.shape, element_size(e.dtype), "safetensors");
    } catch (const ValueError& err) {
      fail(what, fmt::format("{}: shape {} is too large: its element count, strides or byte size overflows int64",
                             field, json_preview(shape)));
    }
    const ordered_json& off = v["data_offsets"];
    if (!off.is_array() || off.size() != 2)
      fail(what, fmt::format("{}: data_offsets must be an array [begin, end], got {}", field, json_preview(off)));
    e.begin = as_u64(off[0], what, field + ": data_offsets[0]");
    e.end = as_u64(off[1], what, field + ": data_offsets[1]");
    if (e.end < e.begin)
      fail(what, fmt::format("{}: data_offsets [{}, {}] end before they begin", field, e.begin, e.end));
    if (e.end - e.begin != bytes)
      fail(what,
           fmt::format("{}: data_offsets [{}, {}] span {} bytes but dtype {} and shape {} need {}", field, e.begin,
                       e.end, e.end - e.begin, dtype_safetensors_name(e.dtype), json_preview(shape), bytes));
    if (e.end > data_size)
      fail(what, fmt::format("{}: data_offsets [{}, {}] run past the end of the data section ({} bytes; truncated "
                             "file?)",
                             field, e.begin, e.end, data_size));
    entries.push_back(std::move(e));
  }

  // The ranges must tile the data section: no overlaps, no holes, nothing after the last.
  std::vector<const Entry*> by_offset;
  for (const Entry& e : entries) by_offset.push_back(&e);
  std::stable_sort(by_offset.begin(), by_offset.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t pos = 0;
  const Entry* prev = nullptr;
  for (const Entry* e : by_offset) {
    if (e->begin < pos)
      fail(what, fmt::format("the data of tensor \"{}\" [{}, {}] overlaps that of tensor \"{}\" [{}, {}]", q(e->name),
                             e->begin, e->end, q(prev->name), prev->begin, prev->end));
    if (e->begin > pos)
      fail(what, fmt::format("the data section has a hole: bytes [{}, {}) before tensor \"{}\" belong to no tensor",
                             pos, e->begin, q(e->name)));
    pos = e->end;
    prev = e;
  }
  if (pos != data_size)
    fail(what,
         fmt::format("the data section has {} bytes but the tensors cover only {} (trailing bytes)", data_size, pos));

  out.tensors.reserve(entries.size());
  for (const Entry& e : entries) {
    Tensor t = native::empty(e.shape, e.dtype, kCPU);
    const size_t bytes = static_cast<size_t>(e.end - e.begin);
    if (bytes && !src.read(data_start + e.begin, t.data_ptr(), bytes))
      fail(what, fmt::format("cannot read the data of tensor \"{}\" (truncated file?)", q(e.name)));
    if (e.dtype == kBool) {  // any nonzero byte is true; never let a C++ bool hold another value
      auto* p = static_cast<unsigned char*>(t.data_ptr());
      for (size_t i = 0; i < bytes; ++i) p[i] = p[i] != 0;
    }
    out.tensors.emplace_back(e.name, std::move(t));
  }
  return out;
}

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

const Tensor* SafetensorsData::find(std::string_view name) const {
  for (const auto& [n, t] : tensors)
    if (n == name) return &t;
  return nullptr;
}

const Tensor& SafetensorsData::at(std::string_view name) const {
  if (const Tensor* t = find(name)) return *t;
  std::string some;
  for (size_t i = 0; i < tensors.size() && i < 8; ++i)
    some += (i ? ", " : "") + detail::quote_prefix(tensors[i].first, kMaxQuotedChars);
  if (tensors.size() > 8) some += ", ...";
  WICK_FAIL_T(IndexError, "safetensors: no tensor named \"{}\" (the file holds {} tensors: {})",
              detail::quote_prefix(name, kMaxQuotedChars), tensors.size(), some);
}

SafetensorsData parse_safetensors(const void* data, size_t size, const std::string& what) {
  Source src;
  src.what = what;
  src.size = size;
  src.read = [data, size](uint64_t offset, void* dst, size_t n) {
    if (offset > size || n > size - offset) return false;
    if (n) std::memcpy(dst, static_cast<const char*>(data) + offset, n);
    return true;
  };
  return parse(src);
}

SafetensorsData load_safetensors(const std::string& path) {
  const detail::OpenedFile f = detail::open_for_reading(path);
  if (f.not_regular) fail<IOError>(path, "not a regular file (a directory, FIFO, socket or device)");
  if (f.fd.fd < 0) fail<IOError>(path, fmt::format("cannot open the file for reading: {}", std::strerror(f.error)));
  const struct stat& st = f.st;
  Source src;
  src.what = path;
  src.size = static_cast<uint64_t>(st.st_size);
  const int fd = f.fd.fd;
  src.read = [fd](uint64_t offset, void* dst, size_t n) {
    auto* p = static_cast<char*>(dst);
    while (n > 0) {
      const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(offset));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;  // error, or end of file: the file is shorter than it claims
      p += r;
      offset += static_cast<uint64_t>(r);
      n -= static_cast<size_t>(r);
    }
    return true;
  };
  return parse(src);
}

std::string serialize_safetensors(const std::vector<NamedTensor>& tensors,
                                  const std::map<std::string, std::string>& metadata) {
  std::set<std::string_view> seen;
  std::vector<Tensor> host;
  host.reserve(tensors.size());
  ordered_json header = ordered_json::object();
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& [name, t] = tensors[i];
    WICK_CHECK(!name.empty(), "save_safetensors: tensor {} has an empty name", i);
    WICK_CHECK(name != "__metadata__", "save_safetensors: \"__metadata__\" is reserved and cannot name a tensor");
    WICK_CHECK(seen.insert(name).second, "save_safetensors: the name \"{}\" is used by more than one tensor", name);
    WICK_CHECK(t.defined(), "save_safetensors: tensor \"{}\" is undefined", name);
    Tensor c = native::contiguous(native::to(t, kCPU, t.dtype()));
    ordered_json e = ordered_json::object();
    e["dtype"] = std::string(dtype_safetensors_name(c.dtype()));
    e["shape"] = c.sizes().vec();
    e["data_offsets"] = {offset, offset + c.nbytes()};
    offset += c.nbytes();
    header[name] = std::move(e);
    host.push_back(std::move(c));
  }
  ordered_json meta = ordered_json::object();
  for (const auto& [k, v] : metadata) meta[k] = v;
  header["__metadata__"] = std::move(meta);
  // Compact, ASCII-only JSON, as Python's json.dumps(..., separators=(",", ":")).
  std::string h;
  try {
    h = header.dump(-1, ' ', /*ensure_ascii=*/true);
  } catch (const ordered_json::exception& e) {  // a name or metadata string that is not valid UTF-8
    WICK_FAIL("save_safetensors: a tensor name or metadata entry is not valid UTF-8 ({})", e.what());
  }
  h.append((8 - h.size() % 8) % 8, ' ');
  std::string out;
  const uint64_t total = 8 + h.size() + offset;
  try {
    out.reserve(total);
  } catch (const std::exception&) {  // std::bad_alloc, or std::length_error past max_size()
    WICK_FAIL_T(OutOfMemoryError,
                "save_safetensors: out of memory building the file in memory: {} bytes ({} of header, {} of tensor "
                "data); free memory or save fewer tensors per file",
                total, 8 + h.size(), offset);
  }
  uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out += h;
  for (const Tensor& c : host) out.append(static_cast<const char*>(c.data_ptr()), c.nbytes());
  return out;
}

namespace {

// The bytes of tensor data a save would write (for messages).
uint64_t tensor_data_bytes(const std::vector<NamedTensor>& tensors) {
  uint64_t n = 0;
  for (const auto& [name, t] : tensors)
    if (t.defined()) n += t.nbytes();
  return n;
}

// The file a save writes (Note [Atomic save]): `path` itself, or, when `path` is a symbolic link,
// the file it points to, so that the link stays a link. IOError for a link that cannot be
// resolved (dangling, a loop).
std::string resolve_destination(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  char* real = ::realpath(path.c_str(), nullptr);
  if (!real)
    fail<IOError>(path, fmt::format("the destination is a symbolic link that cannot be resolved ({}); point it at an "
                                    "existing file or remove it",
                                    std::strerror(errno)));
  std::string out(real);
  std::free(real);
  return out;
}

// The status of the regular file at `dest` that a save replaces; nullopt when there is none.
std::optional<struct stat> existing_file(const std::string& dest) {
  struct stat st {};
  if (::stat(dest.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return st;
}

// Gives the temporary `fd` the permission bits of the file it replaces (and its owner and group
// where the process may: root, or a group it belongs to). False when the mode cannot be set.
bool keep_owner_and_mode(int fd, const struct stat& old) {
  if (old.st_uid != ::geteuid() || old.st_gid != ::getegid())
    (void)!::fchown(fd, old.st_uid, old.st_gid);  // best effort; first, as it may clear setuid/setgid bits
  return ::fchmod(fd, old.st_mode & 07777) == 0;
}

}  // namespace

void save_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  // Build everything first: a bad argument must fail before the file system is touched.
  std::string bytes;
  try {
    bytes = serialize_safetensors(tensors, metadata);
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("safetensors: {}: ", path));
  } catch (const std::bad_alloc&) {  // a container of the header; the file's buffer is checked in serialize
    fail<OutOfMemoryError>(path, fmt::format("out of memory building the file in memory ({} bytes of tensor data); "
                                             "free memory or save fewer tensors per file",
                                             tensor_data_bytes(tensors)));
  }
  WICK_CHECK(!path.empty(), "save_safetensors: the path is empty");
  const std::string dest = resolve_destination(path);
  const std::optional<struct stat> old = existing_file(dest);
  // The temporary lives next to the file it replaces so that rename() is atomic (same file system).
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = fmt::format("{}.tmp-{}-{}", dest, ::getpid(), counter.fetch_add(1));
  const size_t slash = dest.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : dest.substr(0, slash));
  auto fail_io = [&](const char* step) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail<IOError>(path,
                  fmt::format("{} failed: {}; the previous file (if any) is unchanged", step, std::strerror(err)));
  };
  {
    // 0600 while the data is written when it replaces a file, whose mode is set before the rename.
    detail::Fd f(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, old ? 0600 : 0644));
    if (f.fd < 0)
      fail<IOError>(path, fmt::format("cannot create the temporary file {}: {}", tmp, std::strerror(errno)));
    if (!write_all(f.fd, bytes.data(), bytes.size())) fail_io("writing the temporary file");
    if (old && !keep_owner_and_mode(f.fd, *old)) fail_io("giving the temporary file the mode of the file it replaces");
    if (::fsync(f.fd) != 0) fail_io("fsync of the temporary file");
    if (::close(f.release()) != 0) fail_io("closing the temporary file");
  }
  if (::rename(tmp.c_str(), dest.c_str()) != 0) fail_io("renaming the temporary file over the destination");
  // Make the rename itself durable; failure here does not undo the (complete) save.
  const detail::Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (d.fd >= 0) ::fsync(d.fd);
}

}  // namespace wick::serialize
