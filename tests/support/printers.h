#pragma once
// Catch2 printers for wick types, so CHECK(a.device() == b) and CHECK(t.dtype() == kFloat64)
// show readable values when they fail. Included by every support header.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "wick/core/device.h"
#include "wick/core/dtype.h"
#include "wick/core/tensor.h"

namespace Catch {
template <>
struct StringMaker<wick::Device> {
  static std::string convert(wick::Device d) { return d.str(); }
};
template <>
struct StringMaker<wick::DType> {
  static std::string convert(wick::DType d) { return std::string(wick::dtype_name(d)); }
};
template <>
struct StringMaker<wick::Tensor> {
  static std::string convert(const wick::Tensor& t) { return t.to_string(); }
};
}  // namespace Catch

namespace wick {
// Lets INFO(... << device << dtype) and Catch's decomposition stream wick values.
inline std::ostream& operator<<(std::ostream& os, Device d) { return os << d.str(); }
inline std::ostream& operator<<(std::ostream& os, DType d) { return os << dtype_name(d); }
}  // namespace wick
