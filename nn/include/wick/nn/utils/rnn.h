#pragma once
// wick::nn::utils::rnn: variable-length sequences for the recurrent layers, as LibTorch's
// torch::nn::utils::rnn (torch/nn/utils/rnn.h) with PyTorch 1.13's semantics: PackedSequence,
// pack_padded_sequence, pad_packed_sequence, pad_sequence and pack_sequence. Every function is a
// composite of differentiable ops (index_select, narrow, cat, stack), so gradients flow back to
// the padded input or the sequences on every device, double backward included.
// LSTM/GRU/RNN::forward_with_packed_input run on a PackedSequence (rnn.h). docs/attention.md,
// "Packed sequences".
#include <optional>
#include <tuple>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::nn::utils::rnn {

/// A batch of sequences of decreasing lengths, packed time step by time step: `data` holds step
/// 0 of every sequence, then step 1 of every sequence at least 2 long, and so on
/// ([sum(batch_sizes), *]); `batch_sizes` (a CPU int64 [T_max]) says how many sequences each step
/// holds. When the sequences were sorted by length to pack them, `sorted_indices` is the
/// permutation that sorted them (sorted position -> original batch index, int64 on data's device)
/// and `unsorted_indices` its inverse; both are undefined otherwise. Build one with
/// pack_padded_sequence or pack_sequence.
class PackedSequence {
 public:
  /// As LibTorch's constructor: unsorted_indices defaults to the inverse of sorted_indices.
  /// ValueError unless data is defined with at least one dim, batch_sizes is a 1-d CPU int64
  /// tensor of positive, non-increasing sizes summing to data.size(0), and sorted_indices (if
  /// given) is a permutation of [0, batch_sizes[0]) as a 1-d int64 tensor, as unsorted_indices
  /// (if given). LibTorch checks only that batch_sizes is on the CPU. The index tensors are
  /// copied (LibTorch keeps the caller's), so changing the caller's in place changes nothing
  /// here; the readers (pad_packed_sequence, the RNN layers) check them again.
  explicit PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices = {}, Tensor unsorted_indices = {});

  const Tensor& data() const { return data_; }
  const Tensor& batch_sizes() const { return batch_sizes_; }
  const Tensor& sorted_indices() const { return sorted_indices_; }
  const Tensor& unsorted_indices() const { return unsorted_indices_; }

  /// data (differentiably) and the index tensors moved to `device`; batch_sizes stays on the
  /// CPU, as LibTorch's to(). *this when data is already there.
  PackedSequence to(Device device) const;
  /// data converted to `dtype` (differentiably); the rest unchanged, as LibTorch's to().
  PackedSequence to(DType dtype) const;
  bool is_cuda() const { return data_.is_cuda(); }

 private:
  Tensor data_, batch_sizes_, sorted_indices_, unsorted_indices_;
};

/// Packs a padded batch: input [T, B, *] ([B, T, *] with batch_first), where sequence b is
/// input[:lengths[b], b] and the rest is padding, which is left out. lengths is a 1-d int64
/// tensor on a CPU device (or, in the overload below, a list) of B entries, each in [1, T]. With
/// enforce_sorted the lengths must not increase (PyTorch's ONNX-exportable form, no
/// sorted_indices); otherwise the batch is sorted by decreasing length first (a stable sort:
/// equal lengths keep their order) and the PackedSequence records the permutation. The result's
/// data is differentiable in input. ValueError for input of fewer than 2 dims or no elements, a
/// length count other than B, a length below 1 or above T, or increasing lengths with
/// enforce_sorted; TypeError for lengths that are not int64, ValueError for lengths not on a
/// CPU device (PyTorch refuses both in its kernel; LibTorch converts the dtype).
PackedSequence pack_padded_sequence(const Tensor& input, const Tensor& lengths, bool batch_first = false,
                                    bool enforce_sorted = true);
PackedSequence pack_padded_sequence(const Tensor& input, const std::vector<int64_t>& lengths, bool batch_first = false,
                                    bool enforce_sorted = true);

/// The inverse of pack_padded_sequence: (padded [T, B, *] ([B, T, *] with batch_first), lengths,
/// a CPU int64 [B]) with padding_value after each sequence's end, in the original batch order
/// when the sequence records one (unsorted_indices). T is the longest length, or total_length
/// when given (ValueError if it is shorter than the longest sequence). Differentiable in
/// sequence.data(); the padding gets no gradient.
std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence, bool batch_first = false,
                                               double padding_value = 0.0,
                                               std::optional<int64_t> total_length = std::nullopt);

/// Stacks sequences of shapes [L_i, *] (equal * , one dtype and device) into [max L_i, B, *]
/// ([B, max L_i, *] with batch_first), filling the rest with padding_value. Differentiable in
/// every sequence. Lengths of 0 are allowed, as PyTorch's. ValueError for an empty list, an
/// undefined or 0-d sequence, or sequences whose trailing shapes, dtypes or devices differ
/// (PyTorch broadcasts a smaller trailing shape; wick refuses it).
Tensor pad_sequence(const std::vector<Tensor>& sequences, bool batch_first = false, double padding_value = 0.0);

/// Packs sequences of shapes [L_i, *] directly: pack_padded_sequence(pad_sequence(sequences),
/// their lengths, false, enforce_sorted), as LibTorch's. Differentiable in every sequence.
/// ValueError for a sequence of length 0, increasing lengths with enforce_sorted, and
/// pad_sequence's errors.
PackedSequence pack_sequence(const std::vector<Tensor>& sequences, bool enforce_sorted = true);

}  // namespace wick::nn::utils::rnn
