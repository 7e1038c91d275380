#pragma once
// WICK_HOST_DEVICE marks functions compiled for both the CPU and CUDA (see docs/cuda.md).
#if defined(__CUDACC__)
#define WICK_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define WICK_HOST_DEVICE inline
#endif
