#pragma once
// The backward engine: iterative (no recursion, so graphs of any depth work), dependency
// counted, one node at a time, each on its own device.
#include <vector>

#include "wick/autograd/node.h"

namespace wick::autograd {

/// Back-propagates `grad_roots` from `roots`. When `inputs` is non-empty, returns the gradients
/// of those inputs (and does not touch any .grad); otherwise accumulates into leaves' .grad.
/// `keep_graph` keeps saved tensors for another backward; `create_graph` records the backward
/// computation itself (for double backward).
variable_list run_backward(const variable_list& roots, const variable_list& grad_roots, bool keep_graph,
                           bool create_graph, const variable_list& inputs, bool allow_unused);

}  // namespace wick::autograd
