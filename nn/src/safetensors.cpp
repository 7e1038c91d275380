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
#include <map>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "file_descriptor.h"
#include "json_limits.h"
#include "safetensors_widen.h"
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

// A safetensors dtype (Note [Unsupported safetensors dtypes]): its name, bits per element, and
// the wick DType that holds it, if any.
struct StDtype {
  std::string_view name;
  unsigned bits;
  std::optional<DType> dtype;
};

// The format's dtypes (the reference implementation's Dtype::bitsize table).
constexpr StDtype kStDtypes[] = {
    {"BOOL", 8, kBool}, {"I64", 64, kInt64}, {"F32", 32, kFloat32}, {"F64", 64, kFloat64}, {"F4", 4, {}},
    {"F6_E2M3", 6, {}}, {"F6_E3M2", 6, {}},  {"U8", 8, {}},         {"I8", 8, {}},         {"F8_E5M2", 8, {}},
    {"F8_E4M3", 8, {}}, {"F8_E8M0", 8, {}},  {"I16", 16, {}},       {"U16", 16, {}},       {"F16", 16, {}},
    {"BF16", 16, {}},   {"I32", 32, {}},     {"U32", 32, {}},       {"U64", 64, {}},       {"C64", 64, {}},
};

struct Entry {
  std::string name;
  const StDtype* dtype = nullptr;
  DimVector shape;
  uint64_t begin = 0, end = 0;
};

// The error for tensors of dtypes wick cannot hold, when they are read (Refuse) or asked for (at).
[[noreturn]] void fail_unsupported(const std::string& what, const std::vector<std::string>& named) {
  fail<NotImplementedError>(
      what,
      fmt::format("{} {} {} a dtype wick cannot hold (wick holds {}); load the file into a module with "
                  "nn::load(module, path, /*strict=*/false) or load_checkpoint(..., /*strict=*/false) to skip "
                  "the tensors the module does not have, or convert these tensors to one of those dtypes",
                  named.size() == 1 ? "tensor" : "tensors", detail::brief_join(named, ", ", false, 2 * kMaxQuotedChars),
                  named.size() == 1 ? "has" : "have", kSupportedSafetensorsDtypes));
}

// `"name" (F16)` as messages list an unsupported tensor.
std::string named_with_dtype(const std::string& name, std::string_view dtype) {
  return fmt::format("\"{}\" ({})", q(name), dtype);
}

// A shape as the header writes it: [2,3].
std::string dims_json(const DimVector& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); }

// The fields of a tensor entry, in the order a missing one is reported; bit f of
// HeaderReader::fields_ marks field f seen.
constexpr std::string_view kEntryFields[] = {"dtype", "shape", "data_offsets"};

// The header's reader (Note [safetensors validation]): nlohmann's SAX events go straight into
// `entries` and `metadata`, each checked as it arrives. The header is an object whose values
// are "__metadata__" (an object of strings) or tensor entries (objects of exactly "dtype", a
// string; "shape", an array of at most kMaxLoadedDims non-negative integers; and "data_offsets",
// an array of two). Anything else fails at once, before its contents are read, so a header of
// a hundred million empty arrays costs nothing. A field outside those three is refused (the
// reference reader ignores one), so that no value goes unchecked.
class HeaderReader final : public nlohmann::json_sax<ordered_json> {
 public:
  HeaderReader(const std::string& what, uint64_t data_size, std::vector<Entry>& entries,
               std::map<std::string, std::string>& metadata)
      : what_(what), data_size_(data_size), entries_(entries), metadata_(metadata) {}

  bool null() override { return scalar(ordered_json(nullptr)); }
  bool boolean(bool v) override { return scalar(ordered_json(v)); }
  bool number_integer(number_integer_t v) override { return scalar(ordered_json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(ordered_json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return scalar(ordered_json(v)); }
  bool string(string_t& v) override {
    if (at_ == At::Meta) {
      if (!metadata_.try_emplace(key_, std::move(v)).second)
        fail(what_, fmt::format("__metadata__ names the key \"{}\" more than once", q(key_)));
      return true;
    }
    if (at_ == At::Tensor && key_ == "dtype") {
      for (const StDtype& d : kStDtypes)
        if (v == d.name) entry_.dtype = &d;
      if (entry_.dtype) return true;
      std::vector<std::string> names;
      for (const StDtype& d : kStDtypes) names.emplace_back(d.name);
      fail(what_, fmt::format("{}: \"{}\" is not a safetensors dtype (the format's dtypes are {}; wick holds {})",
                              field(), q(v), fmt::join(names, ", "), kSupportedSafetensorsDtypes));
    }
    return scalar(ordered_json(std::move(v)));
  }
  bool binary(binary_t&) override { return scalar(ordered_json(nullptr)); }  // JSON text has none
  bool start_object(std::size_t) override {
    switch (at_) {
      case At::Start:
        at_ = At::Top;
        return true;
      case At::Top:
        if (key_ == "__metadata__") {
          if (seen_metadata_) fail(what_, "the header names \"__metadata__\" more than once");
          seen_metadata_ = true;
          at_ = At::Meta;
        } else {
          entry_ = Entry{};
          entry_.name = key_;
          fields_ = 0;
          at_ = At::Tensor;
        }
        return true;
      default:
        return wrong("an object");
    }
  }
  bool start_array(std::size_t) override {
    if (at_ == At::Tensor && (key_ == "shape" || key_ == "data_offsets")) {
      at_ = key_ == "shape" ? At::Shape : At::Offsets;
      count_ = 0;
      return true;
    }
    return wrong("an array");
  }
  bool key(string_t& k) override {
    if (at_ == At::Tensor) {
      int f = 0;
      while (f < 3 && k != kEntryFields[f]) ++f;
      if (f == 3)
        fail(what_,
             fmt::format("{} has the field \"{}\"; an entry holds only dtype, shape and data_offsets", field(), q(k)));
      if (fields_ & (1 << f)) fail(what_, fmt::format("{} names \"{}\" more than once", field(), k));
      fields_ |= 1 << f;
    } else if (at_ == At::Meta && metadata_.size() >= kMaxMetadataEntries) {
      fail(what_, fmt::format("__metadata__ holds more than the limit of {} entries", kMaxMetadataEntries));
    }
    key_ = std::move(k);
    return true;
  }
  bool end_object() override {
    if (at_ == At::Tensor) {
      finish_entry();
      at_ = At::Top;
    } else {
      at_ = at_ == At::Meta ? At::Top : At::Done;
    }
    return true;
  }
  bool end_array() override {
    if (at_ == At::Offsets && count_ != 2)
      fail(what_, fmt::format("{}: data_offsets must be an array [begin, end], got {} values", field(), count_));
    at_ = At::Tensor;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    fail(what_, fmt::format("the header is not valid JSON ({})", detail::quote_prefix(e.what(), 4 * kMaxQuotedChars)));
  }

 private:
  enum class At { Start, Top, Meta, Tensor, Shape, Offsets, Done };

  std::string field() const { return fmt::format("tensor \"{}\"", q(entry_.name)); }

  // A scalar where the reader stands: a shape or offset value, or a value of the wrong kind.
  bool scalar(const ordered_json& v) {
    if (at_ == At::Shape) {
      if (count_ == kMaxLoadedDims)
        fail(what_,
             fmt::format("{}: shape has {} dims, more than the limit of {}", field(), count_ + 1, kMaxLoadedDims));
      const uint64_t d = as_u64(v, what_, fmt::format("{}: shape[{}]", field(), count_));
      if (d > static_cast<uint64_t>(INT64_MAX))
        fail(what_, fmt::format("{}: shape[{}] = {} does not fit in int64", field(), count_, d));
      entry_.shape.push_back(static_cast<int64_t>(d));
      ++count_;
      return true;
    }
    if (at_ == At::Offsets) {
      if (count_ == 2)
        fail(what_, fmt::format("{}: data_offsets must be an array [begin, end], got more values", field()));
      (count_ == 0 ? entry_.begin : entry_.end) =
          as_u64(v, what_, fmt::format("{}: data_offsets[{}]", field(), count_));
      ++count_;
      return true;
    }
    return wrong(json_preview(v));
  }

  // A value of the wrong kind (`got` says what it is) where the reader stands.
  bool wrong(const std::string& got) {
    switch (at_) {
      case At::Start:
        fail(what_, fmt::format("the header must be a JSON object, got {}", got));
      case At::Top:
        if (key_ == "__metadata__") fail(what_, fmt::format("__metadata__ must be an object of strings, got {}", got));
        fail(what_, fmt::format("tensor \"{}\" must be described by an object, got {}", q(key_), got));
      case At::Meta:
        fail(what_, fmt::format("__metadata__[\"{}\"] must be a string, got {}", q(key_), got));
      case At::Tensor:
        if (key_ == "dtype") fail(what_, fmt::format("{}: dtype must be a string, got {}", field(), got));
        if (key_ == "shape") fail(what_, fmt::format("{}: shape must be an array, got {}", field(), got));
        fail(what_, fmt::format("{}: data_offsets must be an array [begin, end], got {}", field(), got));
      case At::Shape:
        fail(what_, fmt::format("{}: shape[{}] must be a non-negative integer, got {}", field(), count_, got));
      case At::Offsets:
        fail(what_, fmt::format("{}: data_offsets[{}] must be a non-negative integer, got {}", field(), count_, got));
      case At::Done:
        break;
    }
    fail(what_, "the header has a value after its object");
  }

  // The checks that need a whole entry: every field present, and offsets that fit the shape.
  void finish_entry() {
    for (int f = 0; f < 3; ++f)
      if (!(fields_ & (1 << f))) fail(what_, fmt::format("{} has no \"{}\" field", field(), kEntryFields[f]));
    // numel, strides and bytes, checked against overflow (Note [Checked sizes]), for every
    // dtype of the format, held by wick or not (Note [Unsupported safetensors dtypes]).
    const StDtype& dt = *entry_.dtype;
    uint64_t numel = 0, bytes = 0;
    try {
      numel = checked_nbytes(entry_.shape, 1, "safetensors");
    } catch (const ValueError&) {
      numel = UINT64_MAX;  // reported below
    }
    // bytes = numel * bits / 8, in parts that cannot overflow unnoticed (sub-byte dtypes included).
    const uint64_t whole = numel / 8, rest_bits = numel % 8 * dt.bits;
    if (numel == UINT64_MAX || mul_overflow(whole, uint64_t{dt.bits}, &bytes) ||
        add_overflow(bytes, rest_bits / 8, &bytes) || bytes > static_cast<uint64_t>(INT64_MAX))
      fail(what_, fmt::format("{}: shape {} is too large: its element count, strides or byte size overflows int64",
                              field(), dims_json(entry_.shape)));
    if (rest_bits % 8 != 0)
      fail(what_, fmt::format("{}: shape {} holds {} elements of dtype {} ({} bits each), which do not fill a whole "
                              "number of bytes",
                              field(), dims_json(entry_.shape), numel, dt.name, dt.bits));
    const Entry& e = entry_;
    if (e.end < e.begin)
      fail(what_, fmt::format("{}: data_offsets [{}, {}] end before they begin", field(), e.begin, e.end));
    if (e.end - e.begin != bytes)
      fail(what_, fmt::format("{}: data_offsets [{}, {}] span {} bytes but dtype {} and shape {} need {}", field(),
                              e.begin, e.end, e.end - e.begin, dt.name, dims_json(e.shape), bytes));
    if (e.end > data_size_)
      fail(what_, fmt::format("{}: data_offsets [{}, {}] run past the end of the data section ({} bytes; truncated "
                              "file?)",
                              field(), e.begin, e.end, data_size_));
    entries_.push_back(std::move(entry_));
  }

  const std::string& what_;
  const uint64_t data_size_;
  std::vector<Entry>& entries_;
  std::map<std::string, std::string>& metadata_;
  At at_ = At::Start;
  std::string key_;   // the last key read
  Entry entry_;       // the tensor entry being read
  int fields_ = 0;    // the fields of entry_ seen so far: 1 dtype, 2 shape, 4 data_offsets
  size_t count_ = 0;  // the values read into the open shape or data_offsets array
  bool seen_metadata_ = false;
};

// Reads entry `e`, of a dtype wick cannot hold, into the wick dtype that holds its values exactly
// (Note [Widening safetensors dtypes]), 64 KiB of the file at a time.
Tensor read_widened(const Source& src, uint64_t data_start, const Entry& e) {
  const std::string_view name = e.dtype->name;
  const DType dtype = *detail::widened_dtype(name);
  Tensor t = native::empty(e.shape, dtype, kCPU);
  const size_t in_size = e.dtype->bits / 8;  // every widened dtype is whole bytes
  const size_t numel = static_cast<size_t>(t.numel());
  auto* out = static_cast<unsigned char*>(t.data_ptr());
  unsigned char chunk[size_t{1} << 16];
  const size_t per_chunk = sizeof(chunk) / in_size;
  for (size_t done = 0; done < numel;) {
    const size_t count = std::min(per_chunk, numel - done);
    if (!src.read(data_start + e.begin + done * in_size, chunk, count * in_size))
      fail(src.what, fmt::format("cannot read the data of tensor \"{}\" (truncated file?)", q(e.name)));
    const size_t widened = detail::widen_elements(name, chunk, count, out + done * element_size(dtype));
    if (widened < count) {
      uint64_t v;
      std::memcpy(&v, chunk + widened * in_size, sizeof(v));
      WICK_FAIL(
          "safetensors: {}: tensor \"{}\" ({}) holds {} at element {}, above int64's largest value {}: wick "
          "cannot hold it exactly (only U64 tensors whose values fit int64 can be widened)",
          src.what, q(e.name), name, v, done + widened, std::numeric_limits<int64_t>::max());
    }
    done += count;
  }
  return t;
}

SafetensorsData parse(const Source& src, UnsupportedDtypes unsupported) {
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

  // Read straight into entries (Note [safetensors validation]): no JSON tree is built, so
  // memory stays a small multiple of the header, and a value of the wrong kind stops the read.
  detail::check_json_text(header, fmt::format("safetensors: {}: the header", what));
  SafetensorsData out;
  std::vector<Entry> entries;
  HeaderReader reader(what, data_size, entries, out.metadata);
  try {
    ordered_json::sax_parse(header.begin(), header.end(), &reader);
  } catch (const ordered_json::exception& e) {
    fail(what, fmt::format("the header is not valid JSON ({})", detail::quote_prefix(e.what(), 4 * kMaxQuotedChars)));
  } catch (const std::bad_alloc&) {
    fail<OutOfMemoryError>(what, fmt::format("out of memory reading a header of {} bytes", header.size()));
  }
  // A tensor named twice would leave two readers disagreeing on what the file holds.
  std::vector<const Entry*> by_name;
  by_name.reserve(entries.size());
  for (const Entry& e : entries) by_name.push_back(&e);
  std::sort(by_name.begin(), by_name.end(), [](const Entry* x, const Entry* y) { return x->name < y->name; });
  for (size_t i = 1; i < by_name.size(); ++i)
    if (by_name[i]->name == by_name[i - 1]->name)
      fail(what, fmt::format("the header names tensor \"{}\" more than once", q(by_name[i]->name)));

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

  // Tensors of dtypes wick cannot hold fail here, after every entry was checked and before
  // anything is read (Note [Unsupported safetensors dtypes]), or are listed unread.
  // With Widen, only those no wick dtype holds exactly (Note [Widening safetensors dtypes]).
  if (unsupported != UnsupportedDtypes::Skip) {
    std::vector<std::string> named;
    for (const Entry& e : entries)
      if (!e.dtype->dtype && !(unsupported == UnsupportedDtypes::Widen && detail::widened_dtype(e.dtype->name)))
        named.push_back(named_with_dtype(e.name, e.dtype->name));
    if (!named.empty()) fail_unsupported(what, named);
  }
  out.tensors.reserve(entries.size());
  for (const Entry& e : entries) {
    if (!e.dtype->dtype && unsupported == UnsupportedDtypes::Widen) {
      out.tensors.emplace_back(e.name, read_widened(src, data_start, e));
      out.widened.push_back({e.name, std::string(e.dtype->name)});
      continue;
    }
    if (!e.dtype->dtype) {
      out.unsupported.push_back({e.name, std::string(e.dtype->name), IntArrayRef(e.shape).vec()});
      continue;
    }
    const DType dtype = *e.dtype->dtype;
    Tensor t = native::empty(e.shape, dtype, kCPU);
    const size_t bytes = static_cast<size_t>(e.end - e.begin);
    if (bytes && !src.read(data_start + e.begin, t.data_ptr(), bytes))
      fail(what, fmt::format("cannot read the data of tensor \"{}\" (truncated file?)", q(e.name)));
    if (dtype == kBool) {  // any nonzero byte is true; never let a C++ bool hold another value
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

const UnsupportedTensor* SafetensorsData::find_unsupported(std::string_view name) const {
  for (const UnsupportedTensor& u : unsupported)
    if (u.name == name) return &u;
  return nullptr;
}

const Tensor& SafetensorsData::at(std::string_view name) const {
  if (const Tensor* t = find(name)) return *t;
  if (const UnsupportedTensor* u = find_unsupported(name))
    WICK_FAIL_T(NotImplementedError,
                "safetensors: tensor \"{}\" has dtype {}, which wick cannot hold (wick holds {}); it was skipped, "
                "unread, when the file was read",
                q(u->name), u->dtype, kSupportedSafetensorsDtypes);
  std::string some;
  for (size_t i = 0; i < tensors.size() && i < 8; ++i)
    some += (i ? ", " : "") + detail::quote_prefix(tensors[i].first, kMaxQuotedChars);
  if (tensors.size() > 8) some += ", ...";
  WICK_FAIL_T(IndexError, "safetensors: no tensor named \"{}\" (the file holds {} tensors: {})",
              detail::quote_prefix(name, kMaxQuotedChars), tensors.size(), some);
}

SafetensorsData parse_safetensors(const void* data, size_t size, const std::string& what,
                                  UnsupportedDtypes unsupported) {
  Source src;
  src.what = what;
  src.size = size;
  src.read = [data, size](uint64_t offset, void* dst, size_t n) {
    if (offset > size || n > size - offset) return false;
    if (n) std::memcpy(dst, static_cast<const char*>(data) + offset, n);
    return true;
  };
  return parse(src, unsupported);
}

SafetensorsData load_safetensors(const std::string& path, UnsupportedDtypes unsupported) {
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
  return parse(src, unsupported);
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
