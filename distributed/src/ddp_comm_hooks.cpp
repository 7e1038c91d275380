#include "wick/distributed/ddp_comm_hooks.h"

#include <utility>

#include "wick/autograd/grad_mode.h"
#include "wick/core/native.h"
#include "wick/distributed/init.h"

namespace wick::distributed::ddp_comm_hooks {

CommHook allreduce_hook(std::shared_ptr<ProcessGroup> group) {
  return [group = std::move(group)](GradBucket& bucket) {
    ProcessGroup& g = group ? *group : default_group();
    const Tensor& buffer = bucket.buffer();
    {
      NoGradGuard no_grad;
      // 1/size times the sum, as DDP without a hook (Note [Communication hooks]).
      native::binary_(BinaryOp::Mul, buffer, Scalar(1.0 / static_cast<double>(g.size())));
    }
    return Future::of(g.all_reduce(buffer, ReduceOp::Sum, bucket.tag()), buffer);
  };
}

CommHook noop_hook() {
  return [](GradBucket& bucket) { return Future::completed(bucket.buffer()); };
}

}  // namespace wick::distributed::ddp_comm_hooks
