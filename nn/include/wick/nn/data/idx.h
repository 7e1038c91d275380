#pragma once
// The IDX file format of MNIST and Fashion-MNIST (http://yann.lecun.com/exdb/mnist/), plain or
// gzip-compressed (a file starting with 1f 8b; zlib's inflate decompresses it):
//
//   0x00 0x00 <type> <ndims>        magic: type 0x08 ubyte, 0x09 sbyte, 0x0B int16, 0x0C int32,
//                                   0x0D float32, 0x0E float64
//   ndims x uint32 (big-endian)     the dimensions
//   the data                        row-major, big-endian, exactly prod(dims) elements
//
// Every reader here treats the file as untrusted: a bad magic number, zero or too many dims, a
// size that overflows, a truncated or overlong data section, or a damaged gzip stream raises a
// wick::FormatError naming the file and the problem. A gzip file is read as Python's gzip module
// reads it (Note [gzip members and trailing bytes] in nn/src/data/idx.cpp): several members back
// to back and zero padding after a member are fine, any other bytes after a member are a
// FormatError naming their offset. A missing Fashion-MNIST file raises an IOError that says how
// to install the dataset.
#include <cstdint>
#include <string>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::data {

/// An IDX file's contents: element type code, dims, and the elements as bytes in host order.
struct IdxArray {
  uint8_t type = 0x08;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;  ///< prod(dims) * element size, converted to host byte order
  int64_t numel() const;
};

/// Reads an IDX file (gzip or plain).
IdxArray read_idx(const std::string& path);

/// The images of an idx3 ubyte file as float32 [N, 1, rows, cols], scaled to [0, 1] and then
/// normalized: (x / 255 - mean) / std.
Tensor load_idx_images(const std::string& path, double mean = 0.0, double std = 1.0);
/// The labels of an idx1 ubyte file as int64 [N].
Tensor load_idx_labels(const std::string& path);

/// One split of an MNIST-format dataset.
struct Split {
  Tensor images;  ///< float32 [N, 1, 28, 28]
  Tensor labels;  ///< int64 [N], in [0, 10)
};

/// Fashion-MNIST's pixel statistics over the training set (for normalization).
inline constexpr double kFashionMnistMean = 0.2860;
inline constexpr double kFashionMnistStd = 0.3530;

/// Loads `<dir>/<split>-images-idx3-ubyte.gz` and `<dir>/<split>-labels-idx1-ubyte.gz` (split
/// "train" or "t10k"; where a .gz file is missing but the name without .gz exists, that one),
/// normalized with mean/std; checks that the images are 28x28, that counts
/// match and that labels are in [0, 10) (FormatError naming the file otherwise). A missing file
/// raises an error that says to `sudo apt-get install dataset-fashion-mnist` (files under
/// /usr/share/datasets/fashion-mnist).
Split load_mnist_split(const std::string& dir, const std::string& split, double mean = kFashionMnistMean,
                       double std = kFashionMnistStd);

/// Debian's install location of dataset-fashion-mnist.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

}  // namespace wick::data
