#pragma once
// The slowest rank's figure, for the benchmarks that run under mpirun (bench_ddp,
// bench_sync_batch_norm): a step of a job whose ranks synchronise ends when every rank's does.
#include <algorithm>
#include <vector>

#include "wick/autograd/functions.h"
#include "wick/distributed/process_group.h"

namespace wick_bench {

/// The largest `v` over the ranks of `g` (a collective: every rank calls it).
inline double max_over_ranks(wick::distributed::ProcessGroup& g, double v) {
  std::vector<wick::Tensor> all;
  for (int r = 0; r < g.size(); ++r) all.push_back(wick::empty({1}, wick::kFloat64));
  g.all_gather(all, wick::full({1}, v, wick::kFloat64))->wait();
  double m = v;
  for (const auto& t : all) m = std::max(m, t.item<double>());
  return m;
}

}  // namespace wick_bench
