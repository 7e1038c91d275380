// nn::utils::rnn (PyTorch 1.13's torch/nn/utils/rnn.py and ATen's PackedSequence.cpp, LibTorch's
// torch/nn/utils/rnn.h): packing and padding as composites of differentiable ops. The index
// bookkeeping (lengths, batch sizes, permutations) runs on the host, as PyTorch's, where it
// lives in CPU int64 tensors.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <string>

#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/nn/utils/rnn.h"

namespace wick::nn::utils::rnn {

namespace {

using nn::detail::shape_str;

std::string list_str(const std::vector<int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

// The values of a 1-d int64 tensor on a CPU device (`what` names it in errors).
std::vector<int64_t> host_int64(const char* op, const char* what, const Tensor& t) {
  WICK_CHECK(t.defined(), "{}: {} is undefined; pass a 1-d int64 tensor", op, what);
  WICK_CHECK_TYPE(t.dtype() == kInt64, "{}: {} must be int64, got {} (shape {}); convert it with .to(wick::kInt64)", op,
                  what, t.dtype(), shape_str(t));
  WICK_CHECK(t.device().is_cpu(),
             "{}: {} must be on a CPU device, got {} (shape {}); move it with .to(wick::kCPU) (PyTorch keeps "
             "lengths and batch sizes in 1-d CPU int64 tensors)",
             op, what, t.device(), shape_str(t));
  WICK_CHECK(t.dim() == 1, "{}: {} must be 1-d, got shape {}", op, what, shape_str(t));
  const Tensor c = t.contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

// The values of an index tensor on any device (a copy to the host when it is elsewhere).
std::vector<int64_t> index_values(const char* what, const Tensor& t) {
  WICK_CHECK_TYPE(t.dtype() == kInt64, "PackedSequence: {} must be int64, got {}", what, t.dtype());
  WICK_CHECK(t.dim() == 1, "PackedSequence: {} must be 1-d, got shape {}", what, shape_str(t));
  return host_int64("PackedSequence", what, t.device().is_cpu() ? t : t.to(kCPU));
}

// Checks that batch_sizes describe `rows` packed rows: positive, non-increasing, summing to rows.
void check_batch_sizes(const char* op, const std::vector<int64_t>& bs, int64_t rows) {
  WICK_CHECK(!bs.empty(), "{}: batch_sizes is empty; a PackedSequence holds at least one step", op);
  int64_t sum = 0;
  for (size_t t = 0; t < bs.size(); ++t) {
    WICK_CHECK(bs[t] > 0 && (t == 0 || bs[t] <= bs[t - 1]),
               "{}: batch_sizes {} must be positive and non-increasing (entry {} is {}); build the PackedSequence "
               "with pack_padded_sequence or pack_sequence",
               op, list_str(bs), t, bs[t]);
    WICK_CHECK(!add_overflow(sum, bs[t], &sum), "{}: batch_sizes {} sum past int64 at entry {} ({}); data has {} rows",
               op, list_str(bs), t, bs[t], rows);
  }
  WICK_CHECK(sum == rows, "{}: batch_sizes {} sum to {} but data has {} rows", op, list_str(bs), sum, rows);
}

// Checks that `perm` is a permutation of [0, n).
void check_permutation(const char* what, const std::vector<int64_t>& perm, int64_t n) {
  bool ok = static_cast<int64_t>(perm.size()) == n;  // before allocating n flags
  std::vector<bool> seen(ok ? static_cast<size_t>(n) : 0, false);
  for (int64_t i : perm) {
    ok = ok && i >= 0 && i < n && !seen[static_cast<size_t>(i)];
    if (ok) seen[static_cast<size_t>(i)] = true;
  }
  WICK_CHECK(ok, "PackedSequence: {} {} must be a permutation of [0, {}) (batch_sizes[0] = {} sequences)", what,
             list_str(perm), n, n);
}

std::vector<int64_t> inverse(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

Tensor int64_tensor(const std::vector<int64_t>& v, Device device) {
  return wick::tensor(v, {static_cast<int64_t>(v.size())}, TensorOptions(kInt64).device(device));
}

// A block of padding: `shape` filled with value, of `like`'s dtype and device (no gradient).
Tensor padding(IntArrayRef shape, double value, const Tensor& like) {
  return wick::full(shape, value, TensorOptions(like.dtype()).device(like.device()));
}

// [lead..., *rest]: lead dims followed by t's dims from `from` on.
std::vector<int64_t> with_lead(std::vector<int64_t> lead, const Tensor& t, int64_t from) {
  for (int64_t d = from; d < t.dim(); ++d) lead.push_back(t.size(d));
  return lead;
}

}  // namespace

PackedSequence::PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices, Tensor unsorted_indices) {
  WICK_CHECK(data.defined() && data.dim() >= 1, "PackedSequence: data must have at least one dim, got {}",
             shape_str(data));
  const std::vector<int64_t> bs = host_int64("PackedSequence", "batch_sizes", batch_sizes);
  check_batch_sizes("PackedSequence", bs, data.size(0));
  const int64_t n = bs[0];
  if (sorted_indices.defined()) {
    const std::vector<int64_t> perm = index_values("sorted_indices", sorted_indices);
    check_permutation("sorted_indices", perm, n);
    if (!unsorted_indices.defined()) unsorted_indices = int64_tensor(inverse(perm), sorted_indices.device());
  }
  if (unsorted_indices.defined())
    check_permutation("unsorted_indices", index_values("unsorted_indices", unsorted_indices), n);
  // The index tensors are copied: an in-place change of the caller's tensors cannot make them
  // disagree with data (the readers check them again all the same).
  auto own = [](const Tensor& t) { return t.defined() ? t.clone() : t; };
  data_ = std::move(data);
  batch_sizes_ = own(batch_sizes);
  sorted_indices_ = own(sorted_indices);
  unsorted_indices_ = own(unsorted_indices);
}

PackedSequence PackedSequence::to(Device device) const {
  if (data_.device() == device) return *this;
  auto move = [&](const Tensor& t) { return t.defined() ? t.to(device) : t; };
  return PackedSequence(data_.to(device), batch_sizes_, move(sorted_indices_), move(unsorted_indices_));
}

PackedSequence PackedSequence::to(DType dtype) const {
  if (data_.dtype() == dtype) return *this;
  return PackedSequence(data_.to(dtype), batch_sizes_, sorted_indices_, unsorted_indices_);
}

PackedSequence pack_padded_sequence(const Tensor& input, const Tensor& lengths, bool batch_first, bool enforce_sorted) {
  return pack_padded_sequence(input, host_int64("pack_padded_sequence", "lengths", lengths), batch_first,
                              enforce_sorted);
}

PackedSequence pack_padded_sequence(const Tensor& input, const std::vector<int64_t>& lengths, bool batch_first,
                                    bool enforce_sorted) {
  WICK_CHECK(input.defined() && input.dim() >= 2 && input.numel() > 0,
             "pack_padded_sequence: input must be {} with at least one element, got {} (PyTorch: \"Cannot pack "
             "empty tensors\")",
             batch_first ? "[B, T, *]" : "[T, B, *]", shape_str(input));
  const int64_t batch_dim = batch_first ? 0 : 1, B = input.size(batch_dim), T = input.size(1 - batch_dim);
  WICK_CHECK(static_cast<int64_t>(lengths.size()) == B,
             "pack_padded_sequence: lengths {} has {} entries but input {} holds a batch of {} ({}); give one "
             "length per sequence",
             list_str(lengths), lengths.size(), shape_str(input), B, batch_first ? "batch_first" : "dim 1");
  for (size_t b = 0; b < lengths.size(); ++b)
    WICK_CHECK(lengths[b] >= 1 && lengths[b] <= T,
               "pack_padded_sequence: lengths {} has {} at index {}, but every length must be in [1, {}] for input {} "
               "({} time steps); drop empty sequences or pad the input further",
               list_str(lengths), lengths[b], b, T, shape_str(input), T);
  std::vector<int64_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  Tensor x = input, sorted_indices, unsorted_indices;
  if (enforce_sorted) {
    for (size_t b = 1; b < lengths.size(); ++b)
      WICK_CHECK(lengths[b] <= lengths[b - 1],
                 "pack_padded_sequence: lengths {} must be sorted in decreasing order with enforce_sorted (lengths[{}] "
                 "= {} > lengths[{}] = {}); pass enforce_sorted = false to have the batch sorted",
                 list_str(lengths), b, lengths[b], b - 1, lengths[b - 1]);
  } else {
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return lengths[static_cast<size_t>(a)] > lengths[static_cast<size_t>(b)];
    });
    sorted_indices = int64_tensor(order, input.device());
    unsorted_indices = int64_tensor(inverse(order), input.device());
    x = index_select(input, batch_dim, sorted_indices);
  }
  if (batch_first) x = x.transpose(0, 1);  // [T, B, *]
  // ATen's loop: scan the sorted lengths from the shortest; each rise in length adds the block of
  // steps [prev, l) of the sequences still running, as one narrow.
  std::vector<Tensor> blocks;
  std::vector<int64_t> batch_sizes;
  int64_t prev = 0;
  for (int64_t i = 0; i < B; ++i) {
    const int64_t l = lengths[static_cast<size_t>(order[static_cast<size_t>(B - 1 - i)])];
    if (l <= prev) continue;
    const int64_t running = B - i;
    blocks.push_back(x.narrow(0, prev, l - prev).narrow(1, 0, running).reshape(with_lead({-1}, x, 2)));
    batch_sizes.insert(batch_sizes.end(), static_cast<size_t>(l - prev), running);
    prev = l;
  }
  // cat copies even one block: data never aliases input, as PyTorch's.
  return PackedSequence(cat(blocks, 0), int64_tensor(batch_sizes, kCPU), sorted_indices, unsorted_indices);
}

std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence, bool batch_first, double padding_value,
                                               std::optional<int64_t> total_length) {
  const Tensor& data = sequence.data();
  const std::vector<int64_t> bs = host_int64("pad_packed_sequence", "batch_sizes", sequence.batch_sizes());
  check_batch_sizes("pad_packed_sequence", bs, data.size(0));
  const int64_t steps = static_cast<int64_t>(bs.size()), B = bs[0];
  WICK_CHECK(!total_length || *total_length >= steps,
             "pad_packed_sequence: total_length = {} is shorter than the longest sequence ({} steps); pass at least "
             "{} or std::nullopt",
             total_length.value_or(0), steps, steps);
  // Runs of equal batch size are one block each: [run, b, *] padded to [run, B, *].
  std::vector<Tensor> blocks;
  int64_t offset = 0;
  for (int64_t t = 0; t < steps;) {
    int64_t end = t;
    while (end < steps && bs[static_cast<size_t>(end)] == bs[static_cast<size_t>(t)]) ++end;
    const int64_t b = bs[static_cast<size_t>(t)], run = end - t;
    Tensor block = data.narrow(0, offset, run * b).reshape(with_lead({run, b}, data, 1));
    if (b < B) block = cat({block, padding(with_lead({run, B - b}, data, 1), padding_value, data)}, 1);
    blocks.push_back(block);
    offset += run * b;
    t = end;
  }
  if (total_length && *total_length > steps)
    blocks.push_back(padding(with_lead({*total_length - steps, B}, data, 1), padding_value, data));
  Tensor padded = cat(blocks, 0);  // a copy even of one block, as PyTorch's
  // Sequence j (sorted order) runs for as many steps as hold more than j sequences.
  std::vector<int64_t> lengths(static_cast<size_t>(B), 0);
  for (int64_t b : bs)
    for (int64_t j = 0; j < b; ++j) ++lengths[static_cast<size_t>(j)];
  if (batch_first) padded = padded.transpose(0, 1);
  const Tensor& unsorted = sequence.unsorted_indices();
  if (!unsorted.defined()) return {padded, int64_tensor(lengths, kCPU)};
  const std::vector<int64_t> perm = index_values("unsorted_indices", unsorted);
  check_permutation("unsorted_indices", perm, B);
  std::vector<int64_t> original(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) original[k] = lengths[static_cast<size_t>(perm[k])];
  return {index_select(padded, batch_first ? 0 : 1, unsorted), int64_tensor(original, kCPU)};
}

Tensor pad_sequence(const std::vector<Tensor>& sequences, bool batch_first, double padding_value) {
  WICK_CHECK(!sequences.empty(), "pad_sequence: received an empty list of sequences; pass at least one");
  const Tensor& first = sequences[0];
  int64_t longest = 0;
  for (size_t i = 0; i < sequences.size(); ++i) {
    const Tensor& s = sequences[i];
    WICK_CHECK(s.defined() && s.dim() >= 1, "pad_sequence: sequence {} must be [L, *], got {}", i, shape_str(s));
    WICK_CHECK(with_lead({}, s, 1) == with_lead({}, first, 1),
               "pad_sequence: sequence {} is {} but sequence 0 is {}; every sequence needs the same trailing shape "
               "(only the length, dim 0, may differ)",
               i, shape_str(s), shape_str(first));
    WICK_CHECK_TYPE(s.dtype() == first.dtype(), "pad_sequence: sequence {} is {} but sequence 0 is {}", i, s.dtype(),
                    first.dtype());
    WICK_CHECK(s.device() == first.device(),
               "pad_sequence: sequence {} is on {} but sequence 0 is on {}; move them to one device", i, s.device(),
               first.device());
    longest = std::max(longest, s.size(0));
  }
  std::vector<Tensor> padded;
  padded.reserve(sequences.size());
  for (const Tensor& s : sequences) {
    const int64_t l = s.size(0);
    padded.push_back(l == longest ? s : cat({s, padding(with_lead({longest - l}, s, 1), padding_value, s)}, 0));
  }
  return stack(padded, batch_first ? 0 : 1);
}

PackedSequence pack_sequence(const std::vector<Tensor>& sequences, bool enforce_sorted) {
  std::vector<int64_t> lengths;
  for (size_t i = 0; i < sequences.size(); ++i) {
    const Tensor& s = sequences[i];
    WICK_CHECK(s.defined() && s.dim() >= 1, "pack_sequence: sequence {} must be [L, *], got {}", i, shape_str(s));
    lengths.push_back(s.size(0));
    WICK_CHECK(s.size(0) >= 1, "pack_sequence: sequence {} has length 0 (shape {}); every sequence needs a step", i,
               shape_str(s));
    WICK_CHECK(!enforce_sorted || i == 0 || lengths[i] <= lengths[i - 1],
               "pack_sequence: sequence {} is longer ({} steps) than sequence {} ({}); with enforce_sorted the "
               "lengths must not increase, pass enforce_sorted = false to have them sorted",
               i, lengths[i], i - 1, lengths[i - 1]);
  }
  try {
    return pack_padded_sequence(pad_sequence(sequences), lengths, false, enforce_sorted);
  } catch (const Error& e) {
    rethrow_with_context(e, "pack_sequence: ");
  }
}

}  // namespace wick::nn::utils::rnn
