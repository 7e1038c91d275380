#include "wick/distributed/bucketing.h"

#include <algorithm>
#include <map>
#include <utility>

#include "wick/core/error.h"

namespace wick::distributed {

std::vector<std::vector<size_t>> compute_bucket_assignment_by_size(const std::vector<Tensor>& tensors,
                                                                   const std::vector<int64_t>& size_limits) {
  WICK_CHECK(!size_limits.empty(), "compute_bucket_assignment_by_size: size_limits is empty; give at least one limit");
  for (int64_t l : size_limits)
    WICK_CHECK(l > 0, "compute_bucket_assignment_by_size: limits must be positive byte counts, got {}", l);
  struct Open {
    std::vector<size_t> indices;
    int64_t bytes = 0;
    size_t limit = 0;  // position in size_limits
  };
  // Keyed by (dtype, device): std::map keeps the flush order independent of hashing.
  std::map<std::pair<int, std::pair<int, int>>, Open> open;
  std::vector<std::vector<size_t>> result;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    WICK_CHECK(t.defined(), "compute_bucket_assignment_by_size: tensor {} is undefined", i);
    const auto key = std::make_pair(static_cast<int>(t.dtype()), std::make_pair(static_cast<int>(t.device().type),
                                                                                static_cast<int>(t.device().index)));
    Open& b = open[key];
    b.indices.push_back(i);
    b.bytes += static_cast<int64_t>(t.nbytes());
    if (b.bytes >= size_limits[b.limit]) {
      result.push_back(std::move(b.indices));
      b.indices.clear();
      b.bytes = 0;
      b.limit = std::min(b.limit + 1, size_limits.size() - 1);
    }
  }
  for (auto& [key, b] : open)
    if (!b.indices.empty()) result.push_back(std::move(b.indices));
  std::sort(result.begin(), result.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return result;
}

}  // namespace wick::distributed
