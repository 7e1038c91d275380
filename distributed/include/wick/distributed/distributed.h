#pragma once
// wick::distributed: process groups and DistributedDataParallel (docs/distributed.md).
#include "wick/distributed/backend_choice.h"
#include "wick/distributed/bucketing.h"
#include "wick/distributed/comm_hook.h"
#include "wick/distributed/ddp_comm_hooks.h"
#include "wick/distributed/distributed_data_parallel.h"
#include "wick/distributed/init.h"
#include "wick/distributed/join.h"
#include "wick/distributed/powersgd_hook.h"
#include "wick/distributed/process_group.h"
#include "wick/distributed/sync_batch_norm.h"
#include "wick/distributed/zero_redundancy_optimizer.h"
