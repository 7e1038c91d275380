// all_gather_rows (sync_batch_norm.h) and the all_reduce that is its backward: collectives
// recorded in the autograd graph (Note [SyncBatchNorm's collectives]).
#include <fmt/format.h>

#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/autograd/record.h"
#include "wick/distributed/sync_batch_norm.h"

namespace wick::distributed {

namespace {

void check_group(const std::shared_ptr<ProcessGroup>& group, const char* op) {
  WICK_CHECK_T(StateError, group != nullptr, "{}: no process group; call init_process_group() first", op);
}

// The sum over every rank of `g` (any shape), as a differentiable op: y = sum_r x_r on every
// rank, so dL/dx_s = sum_r dL/dy_r, the same all_reduce of the gradients.
Tensor all_reduce_sum_rows(const Tensor& g, const std::shared_ptr<ProcessGroup>& group) {
  Tensor y;
  {
    NoGradGuard no_grad;
    y = g.contiguous().clone();
    group->all_reduce(y, ReduceOp::Sum)->wait();
  }
  if (autograd::needs_grad({&g})) {
    autograd::record_function(
        "AllReduceSumBackward", {g}, {y},
        [group](const autograd::variable_list& grads, const autograd::variable_list&) -> autograd::variable_list {
          return {all_reduce_sum_rows(grads[0], group)};
        });
  }
  return y;
}

}  // namespace

Tensor all_gather_rows(const Tensor& input, const std::shared_ptr<ProcessGroup>& group) {
  check_group(group, "all_gather_rows");
  WICK_CHECK(input.defined(), "all_gather_rows: the input is undefined; pass the same shape and dtype on every rank");
  Tensor out;
  {
    NoGradGuard no_grad;
    const Tensor mine = input.contiguous();
    std::vector<Tensor> rows;
    for (int r = 0; r < group->size(); ++r) rows.push_back(wick::empty(mine.sizes(), mine.options()));
    group->all_gather(rows, mine)->wait();
    out = wick::stack(rows, 0);
  }
  if (autograd::needs_grad({&input})) {
    const int rank = group->rank();
    const std::vector<int64_t> out_shape(out.sizes().begin(), out.sizes().end());
    autograd::record_function(
        "AllGatherRowsBackward", {input}, {out},
        [group, rank, out_shape, opts = out.options()](const autograd::variable_list& grads,
                                                       const autograd::variable_list&) -> autograd::variable_list {
          // Every rank reaches this node (the same graph), so every rank makes the all_reduce,
          // also when its own gradient is zero.
          const Tensor g = grads[0].defined() ? grads[0] : wick::zeros(out_shape, opts);
          return {wick::select(all_reduce_sum_rows(g, group), 0, rank)};
        });
  }
  return out;
}

}  // namespace wick::distributed
