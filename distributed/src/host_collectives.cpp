// Small collectives over host values (host_collectives.h).
#include "host_collectives.h"

#include "wick/autograd/functions.h"
#include "wick/core/native.h"

namespace wick::distributed::detail {

std::vector<Tensor> gather_on_cpu(ProcessGroup& group, const Tensor& mine) {
  const Device dev = group.device();
  std::vector<Tensor> all;
  for (int r = 0; r < group.size(); ++r) all.push_back(empty(mine.sizes(), TensorOptions(mine.dtype()).device(dev)));
  group.all_gather(all, mine.to(dev))->wait();
  for (auto& t : all) t = t.to(kCPU);
  return all;
}

namespace {
template <class T>
std::vector<T> sum_values(ProcessGroup& group, const std::vector<T>& mine, DType dtype, const CollectiveTag& tag) {
  // A copy that owns its memory: on the CPU, .to() below hands back the same tensor.
  Tensor t = native::from_blob_copy(mine.data(), {static_cast<int64_t>(mine.size())}, dtype, kCPU).to(group.device());
  group.all_reduce(t, ReduceOp::Sum, tag)->wait();
  return t.to(kCPU).to_vector<T>();
}
}  // namespace

std::vector<int64_t> sum_on_cpu(ProcessGroup& group, const std::vector<int64_t>& mine, const CollectiveTag& tag) {
  return sum_values(group, mine, kInt64, tag);
}

std::vector<double> sum_on_cpu(ProcessGroup& group, const std::vector<double>& mine, const CollectiveTag& tag) {
  return sum_values(group, mine, kFloat64, tag);
}

std::vector<int> flagged_ranks(ProcessGroup& group, bool flag) {
  std::vector<int64_t> mine(static_cast<size_t>(group.size()), 0);
  mine[static_cast<size_t>(group.rank())] = flag ? 1 : 0;
  const auto all = sum_on_cpu(group, mine);
  std::vector<int> out;
  for (size_t r = 0; r < all.size(); ++r)
    if (all[r] != 0) out.push_back(static_cast<int>(r));
  return out;
}

}  // namespace wick::distributed::detail
