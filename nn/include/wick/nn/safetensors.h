#pragma once
// safetensors: reading and writing the format of Hugging Face's safetensors
// (https://github.com/huggingface/safetensors), as tests/data/generate.py writes it:
//
//   8 bytes    N, the header length (unsigned 64-bit, little-endian)
//   N bytes    a JSON object: for each tensor name {"dtype": "F64", "shape": [2, 3],
//              "data_offsets": [begin, end]} (offsets relative to the data section), plus an
//              optional "__metadata__" object mapping strings to strings; padded with spaces
//              to a multiple of 8 bytes
//   the rest   the data section: every tensor's bytes, row-major, little-endian, back to back
//
// Note [safetensors validation]
// The reader treats the file as untrusted input: every malformed header (not JSON, not an
// object, missing or mistyped fields, negative or overflowing sizes, duplicate names), unknown
// dtype, offset that does not match the shape, data range outside the file, overlapping ranges,
// holes in the data section, or truncated file raises a wick::FormatError (NotImplementedError
// for a safetensors dtype wick cannot hold, IOError for a file that cannot be opened) that names
// the file and the problem. Nothing is read out of bounds and no size is trusted before it is checked against the
// file size, so a corrupt file can never crash the process or make it allocate absurd amounts.
// The header is read by a SAX handler straight into a list of entries, each value checked as
// it arrives (Note [Loader limits]): an entry holds exactly dtype, shape and data_offsets (the
// reference reader ignores other fields; wick refuses them, so that no value goes unchecked),
// and the header may hold no NUL byte or leading byte-order mark.
//
// Note [Atomic save]
// save_safetensors writes to a temporary file in the destination's directory, fsyncs it, then
// renames it over the destination (and fsyncs the directory). Readers see either the old file
// or the complete new one; a failed save (bad arguments, full disk, unwritable destination)
// leaves the old file untouched and removes the temporary.
// - A destination that is a symbolic link is resolved (realpath) first: the temporary goes next
//   to the link's target and replaces it, so the link stays a link (`latest -> runs/ckpt`), as
//   torch.save's open(path, "wb") writes through it. A link that cannot be resolved (to nothing,
//   a loop) is an IOError; nothing is created.
// - A replaced regular file keeps its permission bits: the temporary is created 0600 and given
//   the old file's mode (fchmod) before the rename, so a private checkpoint never becomes
//   readable, even for a moment. Owner and group are kept where the process may (fchown, best
//   effort: root, or a group it belongs to). A new file gets 0644 less the umask.
// - Hard links to the old file keep the old contents (rename makes a new inode).
// - The whole file is built in memory first (header and every tensor's bytes, after a host copy
//   of each tensor on another device); a failed allocation is an OutOfMemoryError naming the
//   file and the size.
//
// Used by the oracle tests (tests/support/oracle.h) and by checkpoints (module and optimizer
// state dicts). Supported dtypes: those of wick (F32, F64, I64, BOOL).
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::serialize {

/// One named tensor, in file order.
using NamedTensor = std::pair<std::string, Tensor>;

/// The contents of a safetensors file: tensors in the order of the header, and the metadata.
struct SafetensorsData {
  std::vector<NamedTensor> tensors;
  std::map<std::string, std::string> metadata;

  /// The tensor called `name`, or nullptr.
  const Tensor* find(std::string_view name) const;
  /// The tensor called `name`; throws wick::IndexError listing a few of the names present.
  const Tensor& at(std::string_view name) const;
  bool contains(std::string_view name) const { return find(name) != nullptr; }
};

/// Reads a safetensors file into CPU tensors (cpu:0, contiguous, owning their memory).
/// Throws wick::IOError (missing, unreadable) or wick::FormatError (truncated, malformed) naming
/// `path` and the problem (Note [safetensors validation]).
SafetensorsData load_safetensors(const std::string& path);

/// Parses a safetensors image held in memory; `what` names it in error messages.
SafetensorsData parse_safetensors(const void* data, size_t size, const std::string& what = "<memory>");

/// Writes `tensors` (any device, any layout; copied to the host as contiguous row-major data)
/// and `metadata` to `path` atomically (Note [Atomic save]). Names must be non-empty, unique and
/// not "__metadata__". Throws wick::ValueError (bad arguments) or wick::IOError naming `path`.
void save_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

/// The bytes save_safetensors would write (header length, padded header, data).
std::string serialize_safetensors(const std::vector<NamedTensor>& tensors,
                                  const std::map<std::string, std::string>& metadata = {});

}  // namespace wick::serialize

namespace wick::nn {
using serialize::load_safetensors;
using serialize::NamedTensor;
using serialize::parse_safetensors;
using serialize::SafetensorsData;
using serialize::save_safetensors;
using serialize::serialize_safetensors;
}  // namespace wick::nn
