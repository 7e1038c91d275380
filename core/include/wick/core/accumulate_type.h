#pragma once
// The type a reduction accumulates in, shared by the CPU and CUDA reduce kernels: float32 sums
// in double (accuracy), bool counts in int64, everything else in itself.
#include <cstdint>

namespace wick::math {

template <typename T>
struct AccumulateType {
  using type = T;
};
template <>
struct AccumulateType<float> {
  using type = double;
};
template <>
struct AccumulateType<bool> {
  using type = int64_t;
};
template <typename T>
using acc_type = typename AccumulateType<T>::type;

}  // namespace wick::math
