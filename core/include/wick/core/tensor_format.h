#pragma once
// fmt's formatter for Tensor (tensor.h includes this file, so every Tensor formats).
#include <fmt/format.h>

#include <string_view>

#include "wick/core/tensor.h"

/// fmt::format("{}", t): values (elided beyond 1000 elements), shape, dtype and device.
template <>
struct fmt::formatter<wick::Tensor> : fmt::formatter<std::string_view> {
  auto format(const wick::Tensor& t, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(t.to_string(), ctx);
  }
};
