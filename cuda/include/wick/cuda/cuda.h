#pragma once
// wick::cuda: the CUDA backend's public API (see docs/cuda.md). Tensors on "cuda:N" work
// through the ordinary wick API once the wick::cuda library is linked; this header adds device
// queries, streams, events, memory controls and NCCL collectives.
#include "wick/cuda/memory.h"
#include "wick/cuda/nccl.h"
#include "wick/cuda/runtime.h"
#include "wick/cuda/stream.h"
