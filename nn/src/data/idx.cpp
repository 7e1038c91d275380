// IDX reading (gzip through zlib's inflate, or plain files), with every size checked before it is trusted.
#include "wick/nn/data/idx.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include "../file_descriptor.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/nn/loader_limits.h"

namespace wick::data {

namespace {

size_t idx_element_size(uint8_t type) {
  switch (type) {
    case 0x08:
    case 0x09:
      return 1;
    case 0x0B:
      return 2;
    case 0x0C:
    case 0x0D:
      return 4;
    case 0x0E:
      return 8;
    default:
      return 0;
  }
}

// Note [gzip members and trailing bytes]
// A gzip file is one or more members back to back (RFC 1952 2.2; `cat a.gz b.gz` is a valid
// gzip file whose data is a's then b's), and Python's gzip module, which torchvision reads these
// files with, also skips zero bytes after a member (tape padding). zlib's gzread accepts both
// but also ignores any other bytes after a member without a word, so a file with junk appended
// would load. wick therefore runs zlib's inflate itself, member by member, and accepts exactly
// what Python 3.11's gzip.decompress accepts:
// - after each member, any number of zero bytes, then the end of the file or another member
//   (which must start with the magic bytes 1f 8b; an empty member is fine);
// - anything else after a member (junk, a lone 1f) is a FormatError naming the file and the
//   offset of the first such byte; Python raises BadGzipFile "Not a gzipped file" there;
// - a member cut short (even one that is only 1f 8b) is the "damaged (unexpected end of file)"
//   FormatError; Python raises EOFError; every member's CRC-32 and length are checked.
// A file that does not start with 1f 8b is read as it is (an IDX file starts with 00 00).
class IdxStream {
 public:
  IdxStream(serialize::detail::Fd fd, const std::string& path) : fd_(std::move(fd)), path_(path) {
    while (end_ < 2 && fill() > 0) {
    }
    gzip_ = end_ >= 2 && buf_[0] == 0x1f && buf_[1] == 0x8b;
    if (!gzip_) return;
    const int r = inflateInit2(&z_, 16 + MAX_WBITS);  // gzip only, as gzread
    if (r == Z_MEM_ERROR) WICK_FAIL_T(OutOfMemoryError, "read_idx: {}: out of memory starting zlib's inflate", path_);
    WICK_CHECK_IO(r == Z_OK, "read_idx: {}: cannot start zlib's inflate ({})", path_, zError(r));
    inflating_ = true;
  }
  ~IdxStream() {
    if (inflating_) inflateEnd(&z_);
  }
  IdxStream(const IdxStream&) = delete;
  IdxStream& operator=(const IdxStream&) = delete;

  /// True for a gzip file (what `read` returns is then the members' decompressed data).
  bool gzip() const { return gzip_; }

  /// Reads up to n bytes into dst; returns the count, short only at the end of the data. Throws
  /// FormatError for a damaged gzip member or bytes after one that are not another member, and
  /// IOError when the file cannot be read.
  size_t read(void* dst, size_t n) { return gzip_ ? read_gzip(static_cast<uint8_t*>(dst), n) : read_plain(dst, n); }

 private:
  static constexpr size_t kBufBytes = size_t{1} << 17;

  // Moves the unread bytes to the front of the buffer and reads more after them; returns the
  // number of bytes added (0 at the end of the file, or when the buffer is full).
  size_t fill() {
    if (start_ > 0) {
      std::memmove(buf_.get(), buf_.get() + start_, end_ - start_);
      buf_offset_ += start_;
      end_ -= start_;
      start_ = 0;
    }
    if (end_ == kBufBytes) return 0;
    for (;;) {
      const ssize_t r = ::read(fd_.fd, buf_.get() + end_, kBufBytes - end_);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) WICK_FAIL_T(IOError, "read_idx: cannot read {}: {}", path_, std::strerror(errno));
      end_ += static_cast<size_t>(r);
      return static_cast<size_t>(r);
    }
  }

  size_t read_plain(void* dst, size_t n) {
    auto* out = static_cast<uint8_t*>(dst);
    size_t done = std::min(n, end_ - start_);
    if (done > 0) std::memcpy(out, buf_.get() + start_, done);  // out may be null when n is 0
    start_ += done;
    while (done < n) {  // the buffer is empty now: read straight into dst
      const ssize_t r = ::read(fd_.fd, out + done, std::min<size_t>(n - done, size_t{1} << 30));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) WICK_FAIL_T(IOError, "read_idx: cannot read {}: {}", path_, std::strerror(errno));
      if (r == 0) break;
      done += static_cast<size_t>(r);
    }
    return done;
  }

  // Between members (Note [gzip members and trailing bytes]): skips zero padding; returns false
  // at the end of the file, true when another member starts (inflate is reset for it); throws
  // for anything else.
  bool next_member() {
    for (;;) {
      while (start_ < end_ && buf_[start_] == 0) ++start_;
      if (start_ < end_) break;
      if (fill() == 0) return false;
    }
    if (end_ - start_ < 2) fill();
    const uint64_t at = buf_offset_ + start_;
    if (end_ - start_ < 2 || buf_[start_] != 0x1f || buf_[start_ + 1] != 0x8b) {
      const std::string shown = end_ - start_ < 2 ? fmt::format("byte {:02x}", buf_[start_])
                                                  : fmt::format("bytes {:02x} {:02x}", buf_[start_], buf_[start_ + 1]);
      WICK_FAIL_T(FormatError,
                  "read_idx: {}: there are bytes after the end of the gzip data that are not another gzip member "
                  "({} at offset {}; a member starts with 1f 8b, and only zero bytes may pad the end); the "
                  "file is corrupt or has something appended (if the data ends there, keep the first {} bytes; "
                  "otherwise compress the IDX data again)",
                  path_, shown, at, at);
    }
    member_start_ = at;
    WICK_CHECK_IO(inflateReset(&z_) == Z_OK, "read_idx: {}: cannot reset zlib's inflate", path_);
    in_member_ = true;
    return true;
  }

  size_t read_gzip(uint8_t* out, size_t n) {
    size_t done = 0;
    while (done < n) {
      if (!in_member_ && !next_member()) break;
      if (start_ == end_ && fill() == 0)
        WICK_FAIL_T(FormatError,
                    "read_idx: {}: the file is damaged (unexpected end of file: the gzip member that starts at "
                    "offset {} is cut short)",
                    path_, member_start_);
      const unsigned want = static_cast<unsigned>(std::min<size_t>(n - done, size_t{1} << 30));
      z_.next_in = buf_.get() + start_;
      z_.avail_in = static_cast<unsigned>(end_ - start_);
      z_.next_out = out + done;
      z_.avail_out = want;
      const int r = inflate(&z_, Z_NO_FLUSH);
      start_ = end_ - z_.avail_in;
      done += want - z_.avail_out;
      if (r == Z_STREAM_END) {
        in_member_ = false;
      } else if (r == Z_MEM_ERROR) {
        WICK_FAIL_T(OutOfMemoryError, "read_idx: {}: out of memory in zlib's inflate", path_);
      } else if (r != Z_OK && !(r == Z_BUF_ERROR && z_.avail_in == 0)) {  // Z_BUF_ERROR: it wants more input
        WICK_FAIL_T(FormatError, "read_idx: {}: the file is damaged ({}, in the gzip member that starts at offset {})",
                    path_, z_.msg ? z_.msg : zError(r), member_start_);
      }
    }
    return done;
  }

  serialize::detail::Fd fd_;
  const std::string& path_;
  std::unique_ptr<uint8_t[]> buf_{new uint8_t[kBufBytes]};
  size_t start_ = 0, end_ = 0;  // the unread input: buf_[start_, end_)
  uint64_t buf_offset_ = 0;     // the file offset of buf_[0]
  bool gzip_ = false, inflating_ = false, in_member_ = false;
  uint64_t member_start_ = 0;  // the file offset of the current (or last) member
  z_stream z_{};
};

// Grows the data buffer; a failed allocation is an OutOfMemoryError naming the file.
void resize_or_fail(std::vector<uint8_t>& bytes, uint64_t n, const std::string& path) {
  try {
    bytes.resize(static_cast<size_t>(n));
  } catch (const std::bad_alloc&) {
    WICK_FAIL_T(OutOfMemoryError, "read_idx: {}: out of memory holding {} bytes of data", path, n);
  }
}

// The tensor a loader builds from `a`, of `elem_bytes` per element, checked against
// kMaxIdxTensorBytes before it is allocated (Note [Loader limits]).
Tensor empty_for(const IdxArray& a, IntArrayRef shape, DType dtype, const char* op, const std::string& path) {
  const uint64_t bytes = static_cast<uint64_t>(a.numel()) * element_size(dtype);  // a.numel() <= 2^30
  WICK_CHECK_FORMAT(bytes <= serialize::kMaxIdxTensorBytes,
                    "{}: {}: dimensions [{}] give a tensor of {} bytes, more than the limit of {} bytes", op, path,
                    fmt::join(a.dims, ", "), bytes, serialize::kMaxIdxTensorBytes);
  return wick::empty(shape, dtype);
}

std::string missing_file_message(const std::string& path) {
  return fmt::format(
      "{}: no such file. The Fashion-MNIST files come with Debian's dataset-fashion-mnist package; install it with\n"
      "  sudo apt-get install dataset-fashion-mnist\n"
      "(it puts {{train,t10k}}-{{images-idx3,labels-idx1}}-ubyte.gz under {}), or point the data path at a directory "
      "holding those four files",
      path, kFashionMnistDir);
}

}  // namespace

int64_t IdxArray::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

IdxArray read_idx(const std::string& path) {
  serialize::detail::OpenedFile file = serialize::detail::open_for_reading(path);  // never blocks on a FIFO
  WICK_CHECK_IO(!file.not_regular, "read_idx: {} is not a regular file (a directory, FIFO, socket or device)", path);
  if (file.fd.fd < 0) {
    if (file.error == ENOENT) WICK_FAIL_T(IOError, "read_idx: {}", missing_file_message(path));
    WICK_FAIL_T(IOError, "read_idx: cannot open {}: {}", path, std::strerror(file.error));
  }
  const struct stat st = file.st;
  std::optional<IdxStream> f;
  try {
    f.emplace(std::move(file.fd), path);
  } catch (const std::bad_alloc&) {
    WICK_FAIL_T(OutOfMemoryError, "read_idx: {}: out of memory allocating the read buffer", path);
  }

  uint8_t magic[4];
  WICK_CHECK_FORMAT(f->read(magic, 4) == 4, "read_idx: {}: the file is shorter than the 4-byte magic number", path);
  WICK_CHECK_FORMAT(
      magic[0] == 0 && magic[1] == 0,
      "read_idx: {}: not an IDX file (magic number {:02x} {:02x} {:02x} {:02x}; expected 00 00 <type> <dims>)", path,
      magic[0], magic[1], magic[2], magic[3]);
  IdxArray a;
  a.type = magic[2];
  const size_t esize = idx_element_size(a.type);
  WICK_CHECK_FORMAT(esize != 0, "read_idx: {}: unknown element type 0x{:02x} (expected 08, 09, 0b, 0c, 0d or 0e)", path,
                    a.type);
  const int ndims = magic[3];
  WICK_CHECK_FORMAT(ndims >= 1, "read_idx: {}: the header declares 0 dimensions", path);
  std::vector<uint8_t> dimbytes(static_cast<size_t>(ndims) * 4);
  WICK_CHECK_FORMAT(f->read(dimbytes.data(), dimbytes.size()) == dimbytes.size(),
                    "read_idx: {}: the file ends inside the header ({} dimensions declared)", path, ndims);
  // Note [Loader limits]: the declared size is checked (overflow, kMaxIdxDataBytes) and, for a
  // plain file, compared with the bytes actually there before anything is allocated; a gzip
  // stream's buffer grows only as data really decompresses.
  // A dimension of 0 counts as 1 in the limit (`bound`), so that [0, 2^32-1, 2^32-1] is refused
  // here rather than by the strides' overflow check of the tensor built from it.
  uint64_t total = esize, bound = esize;
  for (int i = 0; i < ndims; ++i) {
    const uint8_t* b = &dimbytes[static_cast<size_t>(i) * 4];
    const uint64_t d = (uint64_t{b[0]} << 24) | (uint64_t{b[1]} << 16) | (uint64_t{b[2]} << 8) | b[3];
    a.dims.push_back(static_cast<int64_t>(d));
    total *= d;  // cannot overflow: total <= bound, checked below
    WICK_CHECK_FORMAT(!mul_overflow(bound, std::max<uint64_t>(d, 1), &bound) && bound <= serialize::kMaxIdxDataBytes,
                      "read_idx: {}: the dimensions [{}...] declare more than the limit of {} bytes of data", path,
                      fmt::join(a.dims, ", "), serialize::kMaxIdxDataBytes);
  }
  const uint64_t header = 4 + dimbytes.size();
  if (!f->gzip()) {  // a plain file: its size is the truth
    const uint64_t present = static_cast<uint64_t>(st.st_size) - header;
    WICK_CHECK_FORMAT(present >= total,
                      "read_idx: {}: the file is truncated: dimensions [{}] need {} bytes of data but "
                      "only {} are present",
                      path, fmt::join(a.dims, ", "), total, present);
    WICK_CHECK_FORMAT(present == total,
                      "read_idx: {}: there are bytes after the {} bytes of data that dimensions [{}] "
                      "declare",
                      path, total, fmt::join(a.dims, ", "));
    resize_or_fail(a.bytes, total, path);
    const size_t got = f->read(a.bytes.data(), total);
    WICK_CHECK_FORMAT(got == total,
                      "read_idx: {}: the file is truncated: dimensions [{}] need {} bytes of data but only {} "
                      "could be read",
                      path, fmt::join(a.dims, ", "), total, got);
  } else {  // gzip: grow geometrically with what really decompresses
    size_t got = 0;
    while (got < total) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(total - got, std::max<size_t>(got, 1u << 20)));
      resize_or_fail(a.bytes, got + want, path);
      const size_t r = f->read(a.bytes.data() + got, want);
      got += r;
      if (r < want) break;
    }
    a.bytes.resize(got);
    a.bytes.shrink_to_fit();
    WICK_CHECK_FORMAT(got == total,
                      "read_idx: {}: the file is truncated: dimensions [{}] need {} bytes of data but only {} "
                      "are present",
                      path, fmt::join(a.dims, ", "), total, got);
  }
  uint8_t extra;
  WICK_CHECK_FORMAT(f->read(&extra, 1) == 0,
                    "read_idx: {}: there are bytes after the {} bytes of data that dimensions [{}] declare", path,
                    total, fmt::join(a.dims, ", "));
  if (esize > 1) {  // big-endian -> host (little-endian hosts only in practice)
    for (size_t i = 0; i < total; i += esize)
      for (size_t k = 0; k < esize / 2; ++k) std::swap(a.bytes[i + k], a.bytes[i + esize - 1 - k]);
  }
  return a;
}

Tensor load_idx_images(const std::string& path, double mean, double std) {
  IdxArray a = read_idx(path);
  WICK_CHECK_FORMAT(a.type == 0x08 && a.dims.size() == 3,
                    "load_idx_images: {}: expected unsigned bytes with 3 dimensions "
                    "(images x rows x cols), got type 0x{:02x} with dimensions [{}]",
                    path, a.type, fmt::join(a.dims, ", "));
  WICK_CHECK(std > 0, "load_idx_images: std must be > 0, got {}", std);
  NoGradGuard no_grad;
  Tensor out = empty_for(a, {a.dims[0], 1, a.dims[1], a.dims[2]}, kFloat32, "load_idx_images", path);
  float* o = out.data_ptr<float>();
  const float scale = static_cast<float>(1.0 / (255.0 * std)), shift = static_cast<float>(mean / std);
  for (size_t i = 0; i < a.bytes.size(); ++i) o[i] = static_cast<float>(a.bytes[i]) * scale - shift;
  return out;
}

Tensor load_idx_labels(const std::string& path) {
  IdxArray a = read_idx(path);
  WICK_CHECK_FORMAT(a.type == 0x08 && a.dims.size() == 1,
                    "load_idx_labels: {}: expected unsigned bytes with 1 dimension, got "
                    "type 0x{:02x} with dimensions [{}]",
                    path, a.type, fmt::join(a.dims, ", "));
  NoGradGuard no_grad;
  Tensor out = empty_for(a, {a.dims[0]}, kInt64, "load_idx_labels", path);
  int64_t* o = out.data_ptr<int64_t>();
  for (size_t i = 0; i < a.bytes.size(); ++i) o[i] = a.bytes[i];
  return out;
}

namespace {
// `<base><name>.gz`, or `<base><name>` when only that one exists (LibTorch's uncompressed names).
std::string mnist_file(const std::string& base, const std::string& name) {
  const std::string gz = base + name + ".gz", plain = base + name;
  struct stat st;
  if (::stat(gz.c_str(), &st) != 0 && ::stat(plain.c_str(), &st) == 0) return plain;
  return gz;
}
}  // namespace

Split load_mnist_split(const std::string& dir, const std::string& split, double mean, double std) {
  WICK_CHECK(split == "train" || split == "t10k", "load_mnist_split: split must be \"train\" or \"t10k\", got \"{}\"",
             split);
  const std::string base = dir.empty() || dir.back() == '/' ? dir : dir + "/";
  Split s;
  const std::string images = mnist_file(base, split + "-images-idx3-ubyte");
  s.images = load_idx_images(images, mean, std);
  WICK_CHECK_FORMAT(s.images.size(2) == 28 && s.images.size(3) == 28,
                    "load_mnist_split: {}: the images are {}x{} (rows x cols) but MNIST-format images are 28x28; "
                    "read other sizes with load_idx_images",
                    images, s.images.size(2), s.images.size(3));
  s.labels = load_idx_labels(mnist_file(base, split + "-labels-idx1-ubyte"));
  WICK_CHECK_FORMAT(s.images.size(0) == s.labels.size(0), "load_mnist_split: {}: {} images but {} labels", base + split,
                    s.images.size(0), s.labels.size(0));
  const int64_t* l = s.labels.data_ptr<int64_t>();
  for (int64_t i = 0; i < s.labels.numel(); ++i)
    WICK_CHECK_FORMAT(l[i] < 10, "load_mnist_split: {}: label {} of sample {} is not in [0, 10)", base + split, l[i],
                      i);
  return s;
}

}  // namespace wick::data
