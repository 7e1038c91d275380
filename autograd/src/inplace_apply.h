#pragma once
// The in-place write of Note [In-place ops] (tensor_inplace.cpp) for ops defined in other files.
#include <functional>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::detail {

/// `fn(self, operands)` written into self, as the in-place ops of tensor_inplace.cpp: recorded
/// (on a snapshot, with self's history rebased) when grad mode is on and self or an operand
/// requires grad, an operand sharing self's memory replaced by a clone first. Refused before
/// anything is written: a result of another shape than self's (ValueError naming `op`: the
/// operands would broadcast self) or of a dtype self cannot hold (TypeError), and the cases of
/// Note [In-place ops] (a leaf that requires grad, ...).
Tensor& inplace_apply(Tensor& self, const std::vector<Tensor>& operands, const char* op,
                      const std::function<Tensor(const Tensor&, const std::vector<Tensor>&)>& fn);

}  // namespace wick::detail
