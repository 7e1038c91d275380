#pragma once
// The collectives two ranks run under a Join, side by side: a DOT picture for
// examples/tour_11_join.cpp (docs/tour/11-join.md). Each rank logs what its process group runs
// (examples::RecordingGroup) between phase markers the example adds ("batch 2", "join",
// "shadow 2", "end"); every rank's rows are gathered on rank 0, which draws them, the k-th
// collective of one rank beside the k-th of the other: collectives pair in the order they are
// called, so that is what met what.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ddp_step_log.h"

namespace wick::examples {

/// One row of a rank's column: what the collective was for, and a colour for its owner.
struct JoinRow {
  std::string label;
  std::string color;  // "join", "ddp", "zero"
};

/// Turns one rank's log into rows: consecutive broadcasts become one row, and each collective
/// is named from the phase it ran in and its place there (the example's order per batch: the
/// Narrator's notification, DDP's forward notification, its bucket, ZeRO's notification, ZeRO's
/// agreement, its broadcasts).
inline std::vector<JoinRow> join_rows(const std::vector<StepEvent>& events, int world) {
  std::vector<JoinRow> rows;
  std::string phase;
  int notifications = 0;  // int64 notification-sized all-reduces in this phase so far
  auto is_marker = [](const StepEvent& e) { return e.kind == StepEvent::Node; };
  for (size_t i = 0; i < events.size(); ++i) {
    const StepEvent& e = events[i];
    if (is_marker(e)) {
      phase = e.text;
      notifications = 0;
      continue;
    }
    const bool broadcast = e.text.rfind("broadcast", 0) == 0;
    const bool small = e.text.find("int64") != std::string::npos;
    const bool agreement = small && e.text.find("[" + std::to_string(world) + "]") != std::string::npos;
    const bool active = phase.rfind("batch", 0) == 0, shadow = phase.rfind("shadow", 0) == 0;
    if (broadcast) {
      size_t k = i;
      while (k + 1 < events.size() && events[k + 1].text.rfind("broadcast", 0) == 0) ++k;
      const std::string n = std::to_string(k - i + 1) + " x broadcast";
      if (phase == "end")
        rows.push_back({"DDP's post hook: " + n + "\nthe last joiner's parameters to every rank", "ddp"});
      else if (shadow)
        rows.push_back({"ZeRO's step, shadowed: " + n + "\n(its shard from it, the rest into it)", "zero"});
      else
        rows.push_back({"ZeRO's step: " + n + "\neach parameter from its owner", "zero"});
      i = k;
      continue;
    }
    if (small && !agreement) {  // a notification or, on a joined rank, an exchange of zeros
      ++notifications;
      if (active) {
        static const char* const kWho[] = {"the Narrator's", "DDP's forward", "ZeRO's step"};
        rows.push_back(
            {phase + ": notification (" + kWho[(notifications - 1) % 3] + ")\n[1, 0, one-hot, payload]", "join"});
        continue;
      }
      // On a rank in join(): zeros in. The sums said what follows: in a shadowed batch, DDP's
      // forward, then ZeRO's step, then the Narrator's next batch; an agreement right after
      // the third exchange (or after the first one of join()) is the last-joiner all-reduce:
      // no rank trained any more.
      bool last = false;
      if (i + 1 < events.size() && !is_marker(events[i + 1]))
        last = events[i + 1].text.find("[" + std::to_string(world) + "] int64") != std::string::npos &&
               (!shadow || notifications == 3);
      std::string sums = "the Narrator's batch follows";
      if (last)
        sums = "no rank trains any more";
      else if (shadow)
        sums = notifications == 1   ? "DDP's forward follows"
               : notifications == 2 ? "ZeRO's step follows"
                                    : "the Narrator's next batch";
      rows.push_back({"join(): exchange, zeros in\nsums: " + sums, "join"});
      continue;
    }
    if (agreement) {
      if (active)
        rows.push_back({"ZeRO's step: the ranks agree\n(every gradient fits)", "zero"});
      else if (shadow && notifications == 2)
        rows.push_back({"ZeRO's step, shadowed: agreement", "zero"});
      else
        rows.push_back({"the last joiners (one-hot)", "join"});
      continue;
    }
    rows.push_back(
        {shadow ? "DDP's backward, shadowed:\nthe bucket, all zeros" : "DDP's backward:\nthe bucket's all_reduce",
         "ddp"});
  }
  return rows;
}

/// Every rank's rows, gathered (collective): result[r] holds rank r's rows (sent as text, label
/// and colour separated by '\x1f', rows ended by '\x1e').
inline std::vector<std::vector<JoinRow>> gather_rows(distributed::ProcessGroup& group,
                                                     const std::vector<JoinRow>& mine) {
  std::string text;
  for (const JoinRow& r : mine) text += r.label + '\x1f' + r.color + '\x1e';
  Tensor size = full({1}, static_cast<int64_t>(text.size()), kInt64);
  std::vector<Tensor> sizes;
  for (int r = 0; r < group.size(); ++r) sizes.push_back(empty({1}, kInt64));
  group.all_gather(sizes, size)->wait();
  int64_t most = 0;  // bytes, carried in int64 words (wick's dtypes have no byte type)
  for (const Tensor& s : sizes) most = std::max(most, s.item<int64_t>());
  const int64_t words = (most + 7) / 8;
  Tensor bytes = zeros({words}, kInt64);
  if (!text.empty()) std::memcpy(bytes.data_ptr(), text.data(), text.size());
  std::vector<Tensor> all;
  for (int r = 0; r < group.size(); ++r) all.push_back(empty({words}, kInt64));
  group.all_gather(all, bytes)->wait();
  std::vector<std::vector<JoinRow>> out(static_cast<size_t>(group.size()));
  for (int r = 0; r < group.size(); ++r) {
    const std::string s(static_cast<const char*>(all[r].data_ptr()), static_cast<size_t>(sizes[r].item<int64_t>()));
    size_t at = 0;
    while (at < s.size()) {
      const size_t unit = s.find('\x1f', at), end = s.find('\x1e', at);
      if (unit == std::string::npos || end == std::string::npos || unit > end) break;
      out[static_cast<size_t>(r)].push_back({s.substr(at, unit - at), s.substr(unit + 1, end - unit - 1)});
      at = end + 1;
    }
  }
  return out;
}

/// The picture: one column per rank, the k-th rows side by side.
inline std::string join_timeline_dot(const std::vector<std::vector<JoinRow>>& columns,
                                     const std::vector<std::string>& headers) {
  auto q = [](const std::string& s) { return autograd::dot_quote(s); };
  auto fill = [](const std::string& c) { return c == "ddp" ? "lightblue" : c == "zero" ? "palegreen" : "lightyellow"; };
  std::string dot =
      "digraph join_timeline {\n  rankdir=TB;\n  nodesep=0.5;\n  ranksep=0.25;\n"
      "  node [shape=box, style=filled, fontname=\"Helvetica\", fontsize=10];\n  edge [arrowhead=none];\n";
  size_t rows = 0;
  for (size_t c = 0; c < columns.size(); ++c) {
    rows = std::max(rows, columns[c].size());
    dot += "  h" + std::to_string(c) + " [shape=plaintext, style=\"\", fontsize=12, label=" + q(headers[c]) + "];\n";
  }
  for (size_t k = 0; k < rows; ++k) {
    std::string same = "  { rank=same;";
    for (size_t c = 0; c < columns.size(); ++c) {
      if (k >= columns[c].size()) continue;
      const std::string id = "c" + std::to_string(c) + "_" + std::to_string(k);
      dot += "  " + id + " [fillcolor=" + fill(columns[c][k].color) + ", label=" + q(columns[c][k].label) + "];\n";
      dot += "  " + (k == 0 ? "h" + std::to_string(c) : "c" + std::to_string(c) + "_" + std::to_string(k - 1)) +
             " -> " + id + " [style=invis, weight=10];\n";
      same += " " + id + ";";
      if (c > 0 && k < columns[c - 1].size())
        dot += "  c" + std::to_string(c - 1) + "_" + std::to_string(k) + " -> " + id +
               " [style=dashed, color=gray40, constraint=false];\n";
    }
    dot += same + " }\n";
  }
  dot += "}\n";
  return dot;
}

}  // namespace wick::examples
