#pragma once
// Helpers shared by the benchmarks that alternate configurations in rounds and report the
// median round (bench_data_parallel, bench_ddp).
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

namespace wick_bench {

/// The median of `v` (the upper one for an even count); `v` must not be empty.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// The 1-minute load average from /proc/loadavg, or "?" where it cannot be read.
inline std::string loadavg() {
  std::ifstream f("/proc/loadavg");
  std::string a;
  f >> a;
  return a.empty() ? "?" : a;
}

}  // namespace wick_bench
