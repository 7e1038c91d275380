// Checked sizes (Note [Checked sizes] in wick/core/checked_math.h).
#include "wick/core/checked_math.h"

#include <fmt/format.h>

#include <algorithm>

#include "wick/core/error.h"

namespace wick {

int64_t checked_numel(IntArrayRef shape, const char* op) {
  int64_t n = 1, stride = 1;
  bool overflow = false;
  for (size_t i = shape.size(); i-- > 0;) {
    const int64_t s = shape[i];
    WICK_CHECK(s >= 0, "{}: negative size {} in dim {} of shape [{}]", op, s, i, fmt::join(shape, ", "));
    overflow = overflow || mul_overflow(n, s, &n) || mul_overflow(stride, std::max<int64_t>(s, 1), &stride);
  }
  WICK_CHECK(!overflow, "{}: shape [{}] is too large: its element count or strides overflow int64", op,
             fmt::join(shape, ", "));
  return n;
}

size_t checked_nbytes(IntArrayRef shape, size_t element_size, const char* op) {
  const int64_t n = checked_numel(shape, op);
  int64_t bytes = 0;
  WICK_CHECK(!mul_overflow(n, static_cast<int64_t>(element_size), &bytes),
             "{}: shape [{}] is too large: {} elements of {} bytes overflow int64", op, fmt::join(shape, ", "), n,
             element_size);
  return static_cast<size_t>(bytes);
}

}  // namespace wick
