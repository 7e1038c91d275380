#pragma once
// Where a training step's time goes, thread by thread, read from a trace of a few steps (Note
// [Tracer], core/include/wick/core/trace.h). bench_data_parallel prints it for DataParallel and
// for its ceiling, two separate models, so a reader sees what sharing one model costs and on which
// thread, not only the ratio.
//
// Each thread's outermost events (those no other event of the same thread contains) are put in one
// phase each:
//   forward and loss   a replica's forward (parallel), and every op run outside the phases below
//                      (a plain model's forward, the loss)
//   replicate          replicate: the broadcast of the parameters and the replicas' shells
//   scatter / gather   the forward transfers of the inputs and outputs, and the backward nodes
//                      that move their gradients back (Gather, Scatter)
//   backward           every other backward node
//   gradient sum       the Broadcast node: the replicas' gradients summed into the parameters'
//   optimizer          the optimizer's step
// A part of a split collective ("collective part") or a piece of another thread's op lent to this
// one ("lent piece") counts in the phase of what the other thread was doing at the piece's middle
// (its outermost event there); "other" when it was doing nothing traced. What remains of the
// traced wall time is between events: idle, or work no event covers (an op's setup, the autograd
// bookkeeping between kernels). Tracing costs a little per event, so the figures are for comparing
// phases and configurations, not absolute speeds.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace wick_bench {

enum Phase : size_t { kForward, kReplicate, kScatterGather, kBackward, kGradientSum, kOptimizer, kOther, kPhases };

inline const std::array<const char*, kPhases>& phase_names() {
  static const std::array<const char*, kPhases> names{
      "forward and loss", "replicate", "scatter / gather", "backward", "gradient sum", "optimizer", "other"};
  return names;
}

struct ThreadTimes {
  std::string name;                        // the trace's thread name
  std::array<double, kPhases> phase_us{};  // per step
  double idle_us = 0;                      // per step: the wall time outside every event
};

struct StepBreakdown {
  double step_us = 0;                // the traced wall time per step
  std::vector<ThreadTimes> threads;  // the thread that started the trace first, then by name
};

/// The name the tracer gives the thread that started the trace (core/src/trace.cpp).
inline constexpr const char* kTracingThread = "thread that started the trace";

namespace detail {

struct Event {
  double ts, dur;
  std::string cat, name;
};

// The phase of an outermost event; none for a piece of another thread's work (its phase is what
// that thread was doing, resolved later).
inline std::optional<Phase> own_phase(const Event& e) {
  if (e.cat == "replicate") return kReplicate;
  if (e.cat == "parallel") return kForward;
  if (e.cat == "optimizer") return kOptimizer;
  if (e.cat == "backward") {
    if (e.name == "Broadcast") return kGradientSum;
    if (e.name == "Gather" || e.name == "Scatter") return kScatterGather;
    return kBackward;
  }
  if (e.name == "collective part" || e.name == "lent piece") return std::nullopt;
  if (e.cat == "comm") return kScatterGather;  // scatter, gather
  return kForward;                             // ops outside every phase above
}

}  // namespace detail

/// The breakdown of a trace (Trace::stop()'s JSON) that covered `steps` training steps. Threads
/// with no event are left out. Throws nlohmann::json's exceptions on text that is not a trace.
inline StepBreakdown breakdown(const std::string& trace_json, int steps) {
  const nlohmann::json doc = nlohmann::json::parse(trace_json);
  std::map<int, std::string> names;
  std::map<int, std::vector<detail::Event>> events;
  double first = 0, last = 0;
  bool any = false;
  for (const auto& e : doc.at("traceEvents")) {
    const std::string ph = e.value("ph", "");
    const int tid = e.value("tid", 0);
    if (ph == "M" && e.value("name", "") == "thread_name") names[tid] = e.at("args").value("name", "");
    if (ph != "X") continue;
    detail::Event ev{e.at("ts").get<double>(), e.at("dur").get<double>(), e.value("cat", ""), e.value("name", "")};
    first = any ? std::min(first, ev.ts) : ev.ts;
    last = any ? std::max(last, ev.ts + ev.dur) : ev.ts + ev.dur;
    any = true;
    events[tid].push_back(std::move(ev));
  }
  // Each thread's outermost events, in time order.
  struct Outer {
    detail::Event e;
    std::optional<Phase> phase;  // none: a lent piece
  };
  std::map<int, std::vector<Outer>> outer;
  for (auto& [tid, list] : events) {
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.dur > b.dur;  // a parent before the children it starts with
    });
    double end = -1;
    for (const auto& e : list) {
      if (e.ts < end) continue;  // inside the last outermost event
      outer[tid].push_back({e, detail::own_phase(e)});
      end = e.ts + e.dur;
    }
  }
  // What any other thread was doing (in a phase of its own) at time t.
  const auto others_phase = [&](int self, double t) {
    for (const auto& [tid, list] : outer) {
      if (tid == self) continue;
      auto it = std::upper_bound(list.begin(), list.end(), t, [](double x, const Outer& o) { return x < o.e.ts; });
      if (it == list.begin()) continue;
      --it;
      if (it->phase && t <= it->e.ts + it->e.dur) return *it->phase;
    }
    return kOther;
  };
  StepBreakdown out;
  const double n = std::max(steps, 1);
  out.step_us = any ? (last - first) / n : 0;
  for (const auto& [tid, list] : outer) {
    ThreadTimes t;
    t.name = names.count(tid) ? names[tid] : "thread " + std::to_string(tid);
    double busy = 0;
    for (const auto& o : list) {
      const Phase p = o.phase ? *o.phase : others_phase(tid, o.e.ts + o.e.dur / 2);
      t.phase_us[p] += o.e.dur / n;
      busy += o.e.dur / n;
    }
    t.idle_us = std::max(0.0, out.step_us - busy);
    out.threads.push_back(std::move(t));
  }
  std::stable_sort(out.threads.begin(), out.threads.end(), [](const ThreadTimes& a, const ThreadTimes& b) {
    const bool a_first = a.name == kTracingThread, b_first = b.name == kTracingThread;
    return a_first != b_first ? a_first : a.name < b.name;
  });
  return out;
}

/// Prints breakdowns side by side: one column per thread of each, under the configuration's label.
/// `caller` names the column of the thread that started the trace (the device it worked for).
inline void print_breakdowns(const std::vector<std::pair<std::string, StepBreakdown>>& all, int steps,
                             const std::string& caller) {
  std::printf(
      "  Where a step's time goes (%d traced steps; us per step on each thread; tracing adds a little to\n"
      "  each event; a split collective's part or a lent piece counts in the phase of the thread it helps;\n"
      "  \"between events\" is idle time and the untraced work between ops):\n",
      steps);
  std::printf("  %-20s", "");
  for (const auto& [label, b] : all) {
    const int width = static_cast<int>(12 * b.threads.size());
    std::printf("  %*s", width, label.substr(0, static_cast<size_t>(width)).c_str());
  }
  std::printf("\n  %-20s", "");
  for (const auto& [label, b] : all) {
    std::printf("  ");
    for (const auto& t : b.threads) {
      // "device thread cpu:1" -> "cpu:1"
      const auto at = t.name.rfind("cpu:");
      const std::string column = t.name == kTracingThread  ? caller
                                 : at == std::string::npos ? t.name
                                                           : t.name.substr(at);
      std::printf("%12s", column.substr(0, 11).c_str());
    }
  }
  std::printf("\n");
  // One row: `value` of each thread of each breakdown.
  const auto row = [&](const char* name, const auto& value) {
    std::printf("  %-20s", name);
    for (const auto& [label, b] : all) {
      std::printf("  ");
      for (const auto& t : b.threads) std::printf("%12.0f", value(b, t));
    }
    std::printf("\n");
  };
  for (size_t p = 0; p < kPhases; ++p) {
    bool used = false;
    for (const auto& [label, b] : all)
      for (const auto& t : b.threads) used = used || t.phase_us[p] >= 0.5;
    if (used) row(phase_names()[p], [p](const StepBreakdown&, const ThreadTimes& t) { return t.phase_us[p]; });
  }
  row("between events", [](const StepBreakdown&, const ThreadTimes& t) { return t.idle_us; });
  row("step (wall)", [](const StepBreakdown& b, const ThreadTimes&) { return b.step_us; });
}

}  // namespace wick_bench
