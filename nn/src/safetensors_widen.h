#pragma once
// Exact widening of the safetensors dtypes wick cannot hold (Note [Widening safetensors dtypes]
// in wick/nn/safetensors.h). Internal to nn/src/safetensors.cpp.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "wick/core/dtype.h"

namespace wick::serialize::detail {

/// The wick dtype that holds every value of the safetensors dtype `name` exactly: float32 for
/// F16, BF16, F8_E5M2, F8_E4M3 and F8_E8M0; int64 for I8, U8, I16, U16, I32, U32 and U64 (whose
/// values above 2^63 - 1 are refused when read); nullopt for the rest (F4, F6_*, C64) and for
/// wick's own dtypes.
std::optional<DType> widened_dtype(std::string_view name);

/// Converts `n` little-endian elements of the safetensors dtype `name` (one widened_dtype
/// accepts) from `src` into `dst` (float* for float32, int64_t* for int64). Returns n, or the
/// index of the first U64 element above 2^63 - 1 (nothing after it is written).
size_t widen_elements(std::string_view name, const unsigned char* src, size_t n, void* dst);

/// One float16 (IEEE binary16) as float32, exactly; a NaN keeps its sign and payload and is made
/// quiet, as PyTorch's conversion does.
float half_to_float(uint16_t h);
/// One OCP FP8 E4M3 ("FN": no infinities, S.1111.111 is NaN, largest 448) as float32.
float f8e4m3_to_float(uint8_t v);
/// One OCP E8M0 scale (2^(v - 127); 0xFF is NaN) as float32.
float f8e8m0_to_float(uint8_t v);

}  // namespace wick::serialize::detail
