#pragma once
// Ready-made communication hooks for DistributedDataParallel::register_comm_hook (PyTorch's
// torch.distributed.algorithms.ddp_comm_hooks.default_hooks and debugging_hooks; PowerSGD:
// powersgd_hook.h). Note [Communication hooks], comm_hook.h.
#include <memory>

#include "wick/distributed/comm_hook.h"

namespace wick::distributed::ddp_comm_hooks {

/// Divides the bucket by the group's size and all-reduces it (sum), tagged as DDP's own
/// all-reduce (GradBucket::tag): the gradients DDP gives without a hook, bit for bit (it
/// multiplies by 1/size as DDP does, where PyTorch's allreduce_hook divides). `group`: null
/// means the default group (init_process_group()); a StateError at the first bucket when none
/// is running.
CommHook allreduce_hook(std::shared_ptr<ProcessGroup> group = nullptr);

/// Communicates nothing: each rank keeps its own gradients, not divided (PyTorch's
/// debugging_hooks.noop_hook). For measuring what DDP costs without its communication; the
/// ranks' parameters drift apart.
CommHook noop_hook();

}  // namespace wick::distributed::ddp_comm_hooks
