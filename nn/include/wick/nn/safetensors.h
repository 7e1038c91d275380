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
// object, missing or mistyped fields, negative or overflowing sizes, duplicate names), dtype
// that is not one of the format's, offset that does not match the shape, data range outside the
// file, overlapping ranges, holes in the data section, or truncated file raises a
// wick::FormatError (IOError for a file that cannot be opened) that names the file and the
// problem; a tensor of one of the format's dtypes that wick cannot hold is checked in full too
// (Note [Unsupported safetensors dtypes]). Nothing is read out of bounds and no size is trusted before it is checked
// against the file size, so a corrupt file can never crash the process or make it allocate absurd amounts. The header
// is read by a SAX handler straight into a list of entries, each value checked as it arrives (Note [Loader limits]): an
// entry holds exactly dtype, shape and data_offsets (the reference reader ignores other fields; wick refuses them, so
// that no value goes unchecked), and the header may hold no NUL byte or leading byte-order mark.
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
// Note [Unsupported safetensors dtypes]
// The format has 20 dtypes; wick holds 4 (BOOL, I64, F32, F64). Files written by PyTorch often
// hold others (F16 or BF16 weights, I32 or U8 buffers) under keys a wick model may not even have,
// so such a tensor is not an error in itself:
// - every entry's dtype is looked up in the format's table (bits per element: F4 4; F6_E2M3,
//   F6_E3M2 6; BOOL, U8, I8, F8_E5M2, F8_E4M3, F8_E8M0 8; I16, U16, F16, BF16 16; I32, U32, F32
//   32; I64, U64, F64, C64 64), so the size, offset and tiling checks run on every entry,
//   whatever its dtype (a sub-byte dtype's shape must fill whole bytes); a name outside the
//   table ("F17") is a FormatError for the whole file, as before;
// - such a tensor fails only when it would be materialized. load_safetensors and
//   parse_safetensors materialize every tensor, so by default (UnsupportedDtypes::Refuse) they
//   raise a NotImplementedError naming each such tensor, its dtype and wick's dtypes, after the
//   whole header was checked and before any data is read. With UnsupportedDtypes::Skip they
//   list them in SafetensorsData::unsupported, unread; at(name) then raises that error;
// - the checkpoint loaders (nn::load of a module or an optimizer, load_checkpoint:
//   checkpoint.h) read with Skip and decide per key, as PyTorch's load_state_dict does: a key
//   the module does not have is an unexpected key (skipped and returned in unexpected_keys with
//   strict = false; with strict = true an IndexError that names it and its dtype); a key the
//   module has is a dtype mismatch, a TypeError naming the key, the dtype and wick's dtypes, and
//   so is an optimizer's state tensor of such a dtype. Nothing is loaded then.
//
// Note [Widening safetensors dtypes]
// Most of the format's other dtypes hold only values that one of wick's holds exactly: every
// float16, bfloat16 and 8-bit float is a float32 (infinities, NaNs, signed zeros and subnormals
// included: float16's subnormals are m * 2^-24, E8M0's smallest scale 2^-127 is a float32
// subnormal), and every I8, U8, I16, U16, I32 and U32 value an int64. UnsupportedDtypes::Widen
// reads such tensors into float32 or int64, as PyTorch's `t.float()` / `t.long()` would, and
// lists each in SafetensorsData::widened with its file dtype, so nothing is converted silently:
// the caller asked for it and can see what was. U64 values above 2^63 - 1 have no int64 and are
// a ValueError naming the tensor, the element and the value; F4, F6_E2M3, F6_E3M2 (sub-byte
// packings) and C64 (complex) have no exact wick dtype and are refused as with Refuse. The data
// is read in 64 KiB pieces, so a widened tensor costs its own size and no second copy. This is
// how a wick model takes weights saved in half precision: load with Widen, then
// load_state_dict the float32 tensors (the module loaders, which keep dtypes exactly as
// load_state_dict does, name this in their dtype-mismatch message). Saving writes wick's dtypes
// only. tests/nn/safetensors_widen_test.cpp checks every value against PyTorch's own
// conversion (tests/data/widen.safetensors, made by tests/data/make_widen_file.py) and the 8-bit
// floats' 256 codes against hand-computed values.
//
// Used by the oracle tests (tests/support/oracle.h) and by checkpoints (module and optimizer
// state dicts). Dtypes held: those of wick (F32, F64, I64, BOOL).
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

/// The safetensors dtypes wick holds, as messages list them.
inline constexpr const char* kSupportedSafetensorsDtypes = "BOOL, I64, F32, F64";

/// A tensor of a file whose dtype is one of the format's that wick cannot hold (F16, BF16, I32,
/// U8, ...): its entry was checked like every other, its data was not read (Note [Unsupported
/// safetensors dtypes]).
struct UnsupportedTensor {
  std::string name;
  std::string dtype;           ///< the safetensors name: "F16"
  std::vector<int64_t> shape;  ///< as the header gives it
};

/// What load_safetensors / parse_safetensors do with tensors of dtypes wick cannot hold.
enum class UnsupportedDtypes {
  Refuse,  ///< a wick::NotImplementedError naming each one and its dtype (the file is not loaded)
  Skip,    ///< list them in SafetensorsData::unsupported, unread
  /// read each one into the wick dtype that holds its values exactly (float32 for F16, BF16 and
  /// the F8 dtypes; int64 for I8, U8, I16, U16, I32, U32, U64), listing it in
  /// SafetensorsData::widened; those no wick dtype holds exactly (F4, F6_*, C64) are refused as
  /// with Refuse (Note [Widening safetensors dtypes])
  Widen,
};

/// A tensor that UnsupportedDtypes::Widen read into a wider wick dtype.
struct WidenedTensor {
  std::string name;
  std::string dtype;  ///< the file's safetensors dtype: "BF16"
};

/// The contents of a safetensors file: tensors in the order of the header, and the metadata.
struct SafetensorsData {
  std::vector<NamedTensor> tensors;
  std::map<std::string, std::string> metadata;
  /// The tensors wick cannot hold, in header order (read with UnsupportedDtypes::Skip only).
  std::vector<UnsupportedTensor> unsupported;
  /// The tensors read into a wider dtype, in header order (UnsupportedDtypes::Widen only).
  std::vector<WidenedTensor> widened;

  /// The tensor called `name`, or nullptr (also for a tensor in `unsupported`).
  const Tensor* find(std::string_view name) const;
  /// The tensor called `name`; throws wick::NotImplementedError naming it and its dtype when it
  /// is in `unsupported`, wick::IndexError listing a few of the names present when it is absent.
  const Tensor& at(std::string_view name) const;
  bool contains(std::string_view name) const { return find(name) != nullptr; }
  /// The entry called `name` in `unsupported`, or nullptr.
  const UnsupportedTensor* find_unsupported(std::string_view name) const;
};

/// Reads a safetensors file into CPU tensors (cpu:0, contiguous, owning their memory).
/// Throws wick::IOError (missing, unreadable) or wick::FormatError (truncated, malformed) naming
/// `path` and the problem (Note [safetensors validation]); a tensor of a dtype wick cannot hold
/// is a wick::NotImplementedError naming it, or is listed in `unsupported` with
/// UnsupportedDtypes::Skip (Note [Unsupported safetensors dtypes]).
SafetensorsData load_safetensors(const std::string& path, UnsupportedDtypes unsupported = UnsupportedDtypes::Refuse);

/// Parses a safetensors image held in memory; `what` names it in error messages.
SafetensorsData parse_safetensors(const void* data, size_t size, const std::string& what = "<memory>",
                                  UnsupportedDtypes unsupported = UnsupportedDtypes::Refuse);

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
using serialize::UnsupportedDtypes;
using serialize::UnsupportedTensor;
using serialize::WidenedTensor;
}  // namespace wick::nn
