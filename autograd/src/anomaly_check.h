#pragma once
// Internal: the anomaly-mode hooks in Node's constructor and in the engine (Note [Anomaly mode]).
#include "wick/autograd/node.h"

namespace wick::autograd::detail {

/// Stores where `node` is being created (called from Node's constructor in anomaly mode).
void record_anomaly_metadata(Node& node);
/// Raises a ValueError naming `node` and its forward site when a gradient in `grads` (what the
/// node's apply returned, one per input) holds a NaN.
void check_anomaly(const Node& node, const variable_list& grads);

}  // namespace wick::autograd::detail
