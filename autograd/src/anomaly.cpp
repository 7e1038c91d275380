// Anomaly mode (Note [Anomaly mode] in anomaly.h).
#include "wick/autograd/anomaly.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <fmt/format.h>

#include <atomic>
#include <cstdlib>

#include "anomaly_check.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"

namespace wick::autograd {

namespace {
std::atomic<bool> g_enabled{false};

std::string demangle(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string r = status == 0 && d ? d : name;
  std::free(d);
  return r;
}

// "function" when the symbol is known, "binary(+0xoffset)" otherwise.
std::string symbolize(void* frame, bool* known) {
  Dl_info info{};
  *known = false;
  if (dladdr(frame, &info) == 0) return fmt::format("{}", frame);
  if (info.dli_sname) {
    *known = true;
    return demangle(info.dli_sname);
  }
  const auto base = reinterpret_cast<uintptr_t>(info.dli_fbase);
  return fmt::format("{}(+{:#x})", info.dli_fname ? info.dli_fname : "?", reinterpret_cast<uintptr_t>(frame) - base);
}

bool inside_wick(const std::string& fn) {
  return fn.rfind("wick::", 0) == 0 || fn.rfind("std::", 0) == 0 || fn.rfind("void std::", 0) == 0 ||
         fn.find(" wick::") != std::string::npos;
}

bool recording_frame(const std::string& fn) {
  return fn.rfind("wick::autograd::", 0) == 0 || fn.rfind("std::", 0) == 0 || fn.rfind("void std::", 0) == 0;
}
}  // namespace

bool AnomalyMode::is_enabled() { return g_enabled.load(std::memory_order_relaxed); }
void AnomalyMode::set_enabled(bool enabled) { g_enabled.store(enabled, std::memory_order_relaxed); }

DetectAnomalyGuard::DetectAnomalyGuard() : prev_(AnomalyMode::is_enabled()) { AnomalyMode::set_enabled(true); }
DetectAnomalyGuard::~DetectAnomalyGuard() { AnomalyMode::set_enabled(prev_); }

std::shared_ptr<const AnomalyMetadata> AnomalyMetadata::capture() {
  auto m = std::make_shared<AnomalyMetadata>();
  void* frames[48];
  const int n = ::backtrace(frames, 48);
  m->frames_.assign(frames + (n > 1 ? 1 : 0), frames + n);  // drop capture() itself
  return m;
}

std::string AnomalyMetadata::forward_site() const {
  for (void* f : frames_) {
    bool known = false;
    std::string s = symbolize(f, &known);
    if (known && !inside_wick(s)) return s;
  }
  return "unknown (no function names: link the program with ENABLE_EXPORTS / -rdynamic; see the backtrace)";
}

std::string AnomalyMetadata::backtrace(size_t max_frames) const {
  // Leave out the frames of the recording itself (Node's constructor, make_shared).
  size_t first = 0;
  for (; first < frames_.size(); ++first) {
    bool known = false;
    const std::string s = symbolize(frames_[first], &known);
    if (!known || !recording_frame(s)) break;
  }
  std::string out;
  for (size_t i = first; i < frames_.size() && i - first < max_frames; ++i) {
    bool known = false;
    out += fmt::format("  #{} {}\n", i - first, symbolize(frames_[i], &known));
  }
  return out;
}

namespace detail {

void record_anomaly_metadata(Node& node) { node.set_anomaly_metadata(AnomalyMetadata::capture()); }

void check_anomaly(const Node& node, const variable_list& grads) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < grads.size(); ++i) {
    const Tensor& g = grads[i];
    if (!g.defined() || !is_floating(g.dtype())) continue;
    if (sum(ne(g, g)).item<double>() == 0) continue;
    const auto meta = node.anomaly_metadata();
    WICK_FAIL(
        "anomaly mode: {} (node {}) returned NaN values in its gradient for input {} ([{}] {} on {}). The forward op "
        "that created this node was called from {}.\nIts backtrace when the node was created:\n{}",
        node.name(), node.sequence_nr(), i, fmt::join(g.sizes(), ", "), g.dtype(), g.device(),
        meta ? meta->forward_site() : std::string("(not recorded: the node was created before anomaly mode was on)"),
        meta ? meta->backtrace() : std::string());
  }
}

}  // namespace detail
}  // namespace wick::autograd
