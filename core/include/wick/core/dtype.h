#pragma once
// DType: the element types wick supports, their sizes and names, and PyTorch's promotion rules.
#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "wick/core/error.h"

namespace wick {

enum class DType : int8_t { Bool = 0, Int64 = 1, Float32 = 2, Float64 = 3 };

inline constexpr DType kBool = DType::Bool;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;

/// Bytes per element.
constexpr size_t element_size(DType d) {
  switch (d) {
    case DType::Bool:
      return 1;
    case DType::Int64:
      return 8;
    case DType::Float32:
      return 4;
    case DType::Float64:
      return 8;
  }
  return 0;
}

/// PyTorch's name ("float32", "int64", ...).
std::string_view dtype_name(DType d);
/// safetensors' name ("F32", "I64", "BOOL", ...).
std::string_view dtype_safetensors_name(DType d);
/// Parses a safetensors dtype name; throws wick::NotImplementedError for the format's other dtypes
/// (F16, BF16, I32, ...) and wick::FormatError for a name that is no safetensors dtype.
DType dtype_from_safetensors_name(std::string_view s);

constexpr bool is_floating(DType d) { return d == DType::Float32 || d == DType::Float64; }
constexpr bool is_integral(DType d, bool include_bool) {
  return d == DType::Int64 || (include_bool && d == DType::Bool);
}

/// The smallest type both operands convert to without losing their category
/// (bool < int64 < float32 < float64), as torch.promote_types.
constexpr DType promote_types(DType a, DType b) { return static_cast<int>(a) > static_cast<int>(b) ? a : b; }

/// True when a result of type `from` may be written into a tensor of type `to`, as
/// torch.can_cast: never floating -> integral or bool, never non-bool -> bool; narrowing within
/// a category (float64 -> float32) is allowed. In-place ops and copies into outputs use it.
constexpr bool can_cast(DType from, DType to) {
  if (is_floating(from) && !is_floating(to)) return false;
  if (from != DType::Bool && to == DType::Bool) return false;
  return true;
}

template <typename T>
struct dtype_of;
template <>
struct dtype_of<bool> {
  static constexpr DType value = DType::Bool;
};
template <>
struct dtype_of<int64_t> {
  static constexpr DType value = DType::Int64;
};
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::Float32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = DType::Float64;
};
template <typename T>
inline constexpr DType dtype_v = dtype_of<T>::value;

/// Calls `f.template operator()<T>()` with T the C++ type of `d` (C++20 template lambdas:
/// `dispatch(d, "op", [&]<typename T>() { ... })`).
template <typename F>
decltype(auto) dispatch(DType d, const char* op, F&& f) {
  switch (d) {
    case DType::Bool:
      return f.template operator()<bool>();
    case DType::Int64:
      return f.template operator()<int64_t>();
    case DType::Float32:
      return f.template operator()<float>();
    case DType::Float64:
      return f.template operator()<double>();
  }
  WICK_FAIL_T(TypeError, "{}: unknown dtype {}", op, static_cast<int>(d));
}

/// As dispatch, but only float32 and float64; other dtypes raise an error naming the op.
template <typename F>
decltype(auto) dispatch_floating(DType d, const char* op, F&& f) {
  switch (d) {
    case DType::Float32:
      return f.template operator()<float>();
    case DType::Float64:
      return f.template operator()<double>();
    default:
      break;
  }
  WICK_FAIL_T(TypeError, "{}: expected a floating-point tensor (float32 or float64) but got {}", op, dtype_name(d));
}

}  // namespace wick

template <>
struct fmt::formatter<wick::DType> : fmt::formatter<std::string_view> {
  auto format(wick::DType d, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(wick::dtype_name(d), ctx);
  }
};
