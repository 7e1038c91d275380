#pragma once
// Argument checks both backends make on the calling thread, before a collective is queued.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::distributed::detail {

/// "[2, 3]": a tensor's shape as the error messages write it.
std::string shape_of(const Tensor& t);

/// The contiguous tensor a collective moves in place: `t` itself, or a staging copy of it.
Tensor staged(const Tensor& t);

/// all_gather's outputs: `size` tensors (one per rank) of the input's dtype and shape, each on a
/// device `accepts` takes. ValueError naming the first that is not; `where` says which devices
/// the group takes ("on the CPU", "on cuda:1").
void check_gather_outputs(const std::vector<Tensor>& outputs, const Tensor& input, int size, std::string_view where,
                          const std::function<bool(Device)>& accepts);

}  // namespace wick::distributed::detail
