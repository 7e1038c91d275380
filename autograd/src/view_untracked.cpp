// The refusal of a recorded in-place change of a view autograd does not track (Note [Views and
// in-place ops] in view_tracking.h), shared by the in-place ops and a custom function's
// mark_dirty so that both say the same thing.
#include "view_tracking.h"
#include "wick/autograd/custom_function.h"
#include "wick/core/error.h"

namespace wick::autograd::detail {

namespace {
// The custom function whose output `t` is, or whose output t is a view of; null when neither.
const CustomFunctionNode* custom_origin(const Tensor& t, uint32_t* output_nr) {
  const AutogradMeta* m = get_meta(t);
  if (m && m->is_view && m->view_base.defined()) {
    if (const CustomFunctionNode* n = custom_origin(m->view_base, output_nr)) return n;
  }
  if (!m) return nullptr;
  const auto* n = dynamic_cast<const CustomFunctionNode*>(m->grad_fn.get());
  if (n) *output_nr = m->output_nr;
  return n;
}
}  // namespace

void check_untracked_view(const Tensor& t, std::string_view op) {
  if (!t.defined() || !t.impl()->view_made_without_grad) return;
  uint32_t nr = 0;
  if (const CustomFunctionNode* n = custom_origin(t, &nr)) {
    throw StateError(fmt::format(
        "{}: the tensor is output {} of the custom function {} (or a view of it), and a view autograd does not "
        "track (an input returned as it is, or a view made in forward); modifying it in place would bypass the "
        "function's backward and give wrong gradients. clone() the output of the custom function first",
        op, nr, n->name()));
  }
  throw StateError(fmt::format(
      "{}: the tensor is a view made under NoGradGuard (or a view of one), or an output of a custom function that "
      "shares memory with one of its inputs, and the in-place op would be recorded; its base would not see the "
      "history. Make the view and the in-place op both under NoGradGuard (not recorded) or both outside it "
      "(recorded), or clone() the tensor first",
      op));
}

}  // namespace wick::autograd::detail
