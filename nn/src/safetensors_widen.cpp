// Exact widening of safetensors dtypes (Note [Widening safetensors dtypes] in wick/nn/safetensors.h).
#include "safetensors_widen.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace wick::serialize::detail {

namespace {

template <class From>
From load_le(const unsigned char* p) {
  From v;
  std::memcpy(&v, p, sizeof(From));  // the host is little-endian (static_assert in safetensors.cpp)
  return v;
}

template <class From>
void widen_ints(const unsigned char* src, size_t n, int64_t* dst) {
  for (size_t i = 0; i < n; ++i) dst[i] = static_cast<int64_t>(load_le<From>(src + i * sizeof(From)));
}

template <class Decode>
void widen_bytes(const unsigned char* src, size_t n, float* dst, Decode decode) {
  for (size_t i = 0; i < n; ++i) dst[i] = decode(src[i]);
}

}  // namespace

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  float magnitude;
  if (exponent == 0x1f) {
    // Infinity keeps its bits; a NaN keeps its payload in float32's upper mantissa bits and is
    // made quiet, as PyTorch's (and the F16C instruction's) conversion does.
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13) | (mantissa ? 0x00400000u : 0u));
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // zero or subnormal: m * 2^-24, exact
  } else {
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));  // rebias 15 -> 127
  }
  return sign ? -magnitude : magnitude;
}

float f8e4m3_to_float(uint8_t v) {
  const bool negative = (v & 0x80u) != 0;
  const unsigned exponent = (v >> 3) & 0xfu;
  const unsigned mantissa = v & 0x7u;
  float magnitude;
  if (exponent == 0xf && mantissa == 0x7)
    magnitude = std::numeric_limits<float>::quiet_NaN();
  else if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(mantissa), -9);  // subnormal: m/8 * 2^-6
  else
    magnitude = std::ldexp(static_cast<float>(8 + mantissa), static_cast<int>(exponent) - 10);  // (1 + m/8) 2^(e-7)
  return negative ? -magnitude : magnitude;
}

float f8e8m0_to_float(uint8_t v) {
  if (v == 0xff) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(v) - 127);  // 2^-127 is a float32 subnormal: exact
}

std::optional<DType> widened_dtype(std::string_view name) {
  for (std::string_view f : {"F16", "BF16", "F8_E5M2", "F8_E4M3", "F8_E8M0"})
    if (name == f) return kFloat32;
  for (std::string_view i : {"I8", "U8", "I16", "U16", "I32", "U32", "U64"})
    if (name == i) return kInt64;
  return std::nullopt;
}

size_t widen_elements(std::string_view name, const unsigned char* src, size_t n, void* dst) {
  auto* f = static_cast<float*>(dst);
  auto* i = static_cast<int64_t*>(dst);
  if (name == "F16") {
    for (size_t k = 0; k < n; ++k) f[k] = half_to_float(load_le<uint16_t>(src + 2 * k));
  } else if (name == "BF16") {
    for (size_t k = 0; k < n; ++k)
      f[k] = std::bit_cast<float>(static_cast<uint32_t>(load_le<uint16_t>(src + 2 * k)) << 16);
  } else if (name == "F8_E5M2") {  // the upper byte of a float16
    widen_bytes(src, n, f, [](uint8_t v) { return half_to_float(static_cast<uint16_t>(v << 8)); });
  } else if (name == "F8_E4M3") {
    widen_bytes(src, n, f, f8e4m3_to_float);
  } else if (name == "F8_E8M0") {
    widen_bytes(src, n, f, f8e8m0_to_float);
  } else if (name == "I8") {
    widen_ints<int8_t>(src, n, i);
  } else if (name == "U8") {
    widen_ints<uint8_t>(src, n, i);
  } else if (name == "I16") {
    widen_ints<int16_t>(src, n, i);
  } else if (name == "U16") {
    widen_ints<uint16_t>(src, n, i);
  } else if (name == "I32") {
    widen_ints<int32_t>(src, n, i);
  } else if (name == "U32") {
    widen_ints<uint32_t>(src, n, i);
  } else if (name == "U64") {
    for (size_t k = 0; k < n; ++k) {
      const uint64_t v = load_le<uint64_t>(src + 8 * k);
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return k;
      i[k] = static_cast<int64_t>(v);
    }
  }
  return n;
}

}  // namespace wick::serialize::detail
