#pragma once
// fill_value: the kernel half of full() and fill_() (private to core).
#include "wick/core/scalar.h"
#include "wick/core/tensor.h"

namespace wick::native {

/// Writes `v`, converted to t's dtype, into every element of `t`. No checks and no version bump:
/// the callers do both. Exact for every int64 (Note [Integer overflow and conversions]).
void fill_value(const Tensor& t, Scalar v);

}  // namespace wick::native
