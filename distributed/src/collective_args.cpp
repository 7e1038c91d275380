// Argument checks shared by the backends (collective_args.h).
#include "collective_args.h"

#include <fmt/format.h>

#include "wick/core/error.h"

namespace wick::distributed::detail {

std::string shape_of(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

Tensor staged(const Tensor& t) { return t.is_contiguous() ? t : t.contiguous(); }

void check_gather_outputs(const std::vector<Tensor>& outputs, const Tensor& input, int size, std::string_view where,
                          const std::function<bool(Device)>& accepts) {
  WICK_CHECK(outputs.size() == static_cast<size_t>(size),
             "all_gather: expected {} output tensors (one per rank), got {}", size, outputs.size());
  for (size_t r = 0; r < outputs.size(); ++r) {
    const Tensor& o = outputs[r];
    WICK_CHECK(o.defined() && o.sizes() == input.sizes() && o.dtype() == input.dtype() && accepts(o.device()),
               "all_gather: output {} must be a {} tensor of shape {} {} like the input, got {}", r, input.dtype(),
               shape_of(input), where,
               o.defined() ? fmt::format("{} {} on {}", o.dtype(), shape_of(o), o.device()) : "undefined");
  }
}

}  // namespace wick::distributed::detail
