#pragma once
// scatter and gather of whole argument trees (nn::Value), as PyTorch's scatter_gather.py.
//
// Note [Scattering values]
// scatter splits every tensor leaf along `dim` with the differentiable Scatter (a chunk on the
// tensor's own device is a view), and rebuilds the tree around the chunks once per device:
// a List stays a List, a Tuple a Tuple, a Dict keeps its keys in order. Every other leaf (None,
// an undefined tensor, bool, int, double, string) and every *empty* List/Tuple/Dict is handed to
// each device as it is (an undefined tensor is wick's None for an optional tensor argument, as an
// attention mask not given). A dim of 0 rows splits into one empty chunk per device, as
// torch.chunk. The number of devices used is the number of chunks of the tensors (chunk() can give fewer
// chunks than devices when a dim is short), or all devices when there is no tensor. Tensors that
// split into different numbers of chunks (5 rows and 1 row over 2 devices: 2 chunks and 1) are a
// ValueError naming both shapes. PyTorch uses the smallest number and silently drops the other
// tensors' remaining chunks, so the output has fewer rows than the input; wick refuses instead.
//
// gather walks the replicas' outputs in step: tensors go through the differentiable Gather
// (0-dim tensors become a vector), None stays None and so does an undefined tensor returned by
// every replica (MultiheadAttention's weights without need_weights; undefined in some replicas
// only is a ValueError), Lists/Tuples must have the same length in
// every replica and Dicts the same number of keys (the result takes the first replica's keys
// and order). Other leaves must be equal in every replica and are returned once; differing ones
// are an error (PyTorch fails on them too).
#include <vector>

#include "wick/nn/value.h"
#include "wick/parallel/functions.h"

namespace wick::parallel {

/// One Value per device used (Note [Scattering values]).
std::vector<nn::Value> scatter(const nn::Value& value, const std::vector<Device>& devices, int64_t dim = 0);

/// A tensor split onto devices (Scatter::apply with even chunks).
std::vector<Tensor> scatter(const Tensor& tensor, const std::vector<Device>& devices, int64_t dim = 0);

/// Scatters an argument list: result[i] holds the arguments for replica i. An empty argument
/// list gives no replicas at all (the caller decides; DataParallel runs one).
std::vector<std::vector<nn::Value>> scatter_args(const std::vector<nn::Value>& args, const std::vector<Device>& devices,
                                                 int64_t dim = 0);

/// Gathers the replicas' outputs onto `destination` (Note [Scattering values]).
nn::Value gather(const std::vector<nn::Value>& outputs, Device destination, int64_t dim = 0);

/// Gathers tensors onto `destination` (Gather::apply).
Tensor gather(const std::vector<Tensor>& outputs, Device destination, int64_t dim = 0);

}  // namespace wick::parallel
