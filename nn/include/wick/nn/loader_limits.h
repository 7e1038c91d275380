#pragma once
// The limits every wick loader enforces on its (untrusted) input.
//
// Note [Loader limits]
// A file handed to a loader may come from anywhere, so no loader trusts a size, a count or a
// nesting depth it reads before checking it:
// - sizes and counts are checked against the bytes actually present before anything is
//   allocated (a plain file against its size; a gzip stream is grown only as it really
//   decompresses, up to kMaxIdxDataBytes), and the tensor built from it is checked against
//   kMaxIdxTensorBytes; a gzip bomb stops at the limit, and a failed allocation is an
//   OutOfMemoryError naming the file, never a std::bad_alloc; nothing may follow a gzip file's
//   members but zero padding (Note [gzip members and trailing bytes] in nn/src/data/idx.cpp);
// - a path is opened without blocking, and anything but a regular file (a FIFO, a device, a
//   directory) is refused before any read, so no loader waits forever;
// - JSON (a safetensors header, the optimizer's metadata) has its nesting depth counted on the
//   raw bytes first (nlohmann's parser keeps state per level) and may hold no NUL byte or
//   leading byte-order mark (nlohmann's lexer would leave bytes unread); then nlohmann's
//   iterative SAX parser feeds a handler that refuses any array or object nested deeper than
//   kMaxJsonDepth (a second guard), so nothing recurses on unbounded input (copying, dumping or
//   destroying a value recurses once per level); a key repeated in one object, at any depth, is
//   refused. Parsing takes time linear in the text: the safetensors header's handler reads
//   entries straight into a list and fails at the first value of the wrong kind (no JSON tree,
//   so memory stays a small multiple of the header); the general one appends each key to its
//   object after a set lookup (nlohmann's callback parser and ordered_json's insert are
//   quadratic in an object's size);
// - sizes, element counts, byte counts and strides use checked arithmetic (Note [Checked sizes]);
// - an error message quotes at most kMaxQuotedChars characters of a bad value, and lists at most
//   kMaxListedItems keys or problems, then "and N more".
// Anything over a limit is a wick::FormatError naming the file, the limit and the value found.
// docs/hostile-input.md lists the limits and what each bad input gets.
#include <cstddef>
#include <cstdint>

namespace wick::serialize {

/// The largest safetensors header accepted, in bytes (the reference implementation's limit).
inline constexpr uint64_t kMaxHeaderBytes = 100u * 1000u * 1000u;
/// The deepest JSON nesting accepted (a safetensors header needs 3, the optimizer metadata 4).
inline constexpr int kMaxJsonDepth = 64;
/// The most characters of a bad value that an error message quotes.
inline constexpr size_t kMaxQuotedChars = 64;
/// The most items (keys, problems) that a loader's error message lists before "and N more".
inline constexpr size_t kMaxListedItems = 10;
/// The most dimensions a loaded tensor may have.
inline constexpr size_t kMaxLoadedDims = 64;
/// The most entries a safetensors "__metadata__" object may hold (wick writes a handful): each
/// costs a map node, so a header of tiny entries would otherwise take many times its size.
inline constexpr size_t kMaxMetadataEntries = 65536;
/// The largest data section an IDX file may declare, in bytes (Fashion-MNIST's largest is 47 MB,
/// EMNIST's 550 MB). A dimension of 0 counts as 1 here, so that no declared shape is absurd.
inline constexpr uint64_t kMaxIdxDataBytes = uint64_t{1} << 30;
/// The largest tensor load_idx_images / load_idx_labels build from an IDX file, in bytes (float32
/// images are 4 bytes per pixel, int64 labels 8 per label), checked before allocating it.
inline constexpr uint64_t kMaxIdxTensorBytes = uint64_t{1} << 32;

}  // namespace wick::serialize
