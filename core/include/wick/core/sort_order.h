#pragma once
// The order sort, argsort and topk use, written once for the CPU and CUDA kernels
// (Note [Math written once]).
//
// Note [Sort order]
// As PyTorch's sort: NaN compares greater than every number, so ascending puts NaNs last and
// descending puts them first. Kernels sort stably with this strict weak order, so equal values
// (and NaNs among themselves) keep their input order, as torch.sort(stable=True); topk takes the
// first k of that order, so its ties resolve to the lowest index.
#include "wick/core/host_device.h"

namespace wick::math {

/// True when `a` goes strictly before `b` in an ascending (or descending) sort.
template <typename T>
WICK_HOST_DEVICE bool sorts_before(T a, T b, bool descending) {
  const bool a_nan = a != a, b_nan = b != b;
  if (descending) return a_nan ? !b_nan : (!b_nan && a > b);
  return b_nan ? !a_nan : (!a_nan && a < b);
}

}  // namespace wick::math
