#pragma once
// Shared checks of the statistics ops (ops_nan_stats.cpp, ops_quantile.cpp, ops_stats_cov.cpp).
#include "wick/core/tensor.h"

namespace wick::detail {

/// Throws unless `a` is defined and every dim of `dims` is in range (IndexError) and named once
/// (ValueError), naming `op` (a reduction over `dims`, empty meaning every dim).
void check_reduce_dims(const char* op, const Tensor& a, IntArrayRef dims);

}  // namespace wick::detail
