#pragma once
// NCCL's view of wick's dtypes, shared by the single-process collectives (nccl.cpp) and the
// rank-level communicator of a multi-process job (nccl_rank.cpp). Private to cuda/ (includes
// nccl.h).
#include <nccl.h>

#include "wick/core/dtype.h"
#include "wick/core/error.h"

namespace wick::cuda::detail {

/// NCCL's element type for `d`; bool travels as bytes (ncclUint8), so a max over it is a logical
/// or and a min a logical and. TypeError for a dtype NCCL has no type for.
inline ncclDataType_t nccl_type(DType d) {
  switch (d) {
    case DType::Float32:
      return ncclFloat32;
    case DType::Float64:
      return ncclFloat64;
    case DType::Int64:
      return ncclInt64;
    case DType::Bool:
      return ncclUint8;
  }
  WICK_FAIL_T(TypeError, "NCCL: no NCCL type for dtype {}", d);
}

}  // namespace wick::cuda::detail
