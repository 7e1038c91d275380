#pragma once
// Helpers of the ops computed on the host (Note [Host ops]).
//
// Note [Host ops]
// unique, unique_dim, unique_consecutive, bincount, histc, searchsorted and bucketize need a
// computation that no primitive of the Backend does: sizes that depend on the values (unique,
// bincount), runs of equal rows, binary searches, bins. Each is written once, as a loop over
// contiguous host memory (std::vector), and every device reaches it the same way: the operands
// are copied to the host (Tensor::to_vector, which converts and makes contiguous from any device),
// the loop runs, and the result is copied to the input's device (native::from_blob_copy). So a
// CUDA or mirror tensor gives a result on its own device, computed by the same code as on the
// CPU, at the cost of two transfers. Where the loop only finds positions (unique's first rows),
// the values are taken on the device by index_select, so they keep their dtype and bits. None of
// these ops is differentiable in PyTorch 1.13; their outputs have no grad_fn (PyTorch gives
// unique's a grad_fn whose backward raises, and bincount's a NotImplemented one).
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "wick/core/native.h"
#include "wick/core/tensor.h"

namespace wick::detail {

/// Calls f(T{}) with the host type that holds values of dtype `d` exactly: float, double, or
/// int64_t (for int64 and bool).
template <typename F>
decltype(auto) with_host_type(DType d, F&& f) {
  switch (d) {
    case DType::Float32:
      return f(float{});
    case DType::Float64:
      return f(double{});
    default:
      return f(int64_t{});
  }
}

/// An int64 tensor of `shape` holding `v`, written from the host straight to `device`.
inline Tensor host_int64(const std::vector<int64_t>& v, IntArrayRef shape, Device device) {
  return native::from_blob_copy(v.data(), shape, kInt64, device);
}

}  // namespace wick::detail
