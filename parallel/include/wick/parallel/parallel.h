#pragma once
// The parallel layer (docs/parallel.md): comm and its Communicator, the
// differentiable Broadcast / ReduceAddCoalesced / Scatter / Gather, replicate, parallel_apply,
// scatter/gather of argument trees, DataParallel.
#include "wick/parallel/comm.h"
#include "wick/parallel/communicator.h"
#include "wick/parallel/data_parallel.h"
#include "wick/parallel/explain.h"
#include "wick/parallel/functions.h"
#include "wick/parallel/parallel_apply.h"
#include "wick/parallel/replicate.h"
#include "wick/parallel/scatter_gather.h"
