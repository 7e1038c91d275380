#pragma once
// The tracer: what every thread did and when, as Chrome trace-event JSON (Perfetto and
// chrome://tracing open it).
//
// Note [Tracer]
// Turned on by a profiler::Trace scope object, or for a whole run by the environment variable
// WICK_TRACE=<path> (written when the process exits). While on, it records complete events
// (ph "X", ts/dur in microseconds, one tid per thread, pid 1):
//   op          every backend primitive an op runs (binary:Add, gemm, copy, reduce:Sum, ...),
//               with operand shapes, dtype and device in args; backend(), the one door to the
//               kernels, hands out a recording wrapper (core/src/trace_backend.cpp)
//   backward    every node the engine runs (name, sequence number)
//   replicate   replicate and its phases (index maps, broadcast, shells)
//   parallel    each replica's forward in parallel_apply, on the thread that runs it
//   comm        broadcast / reduce / scatter / gather transfers, with bytes
//   optimizer   every optimizer step
// plus metadata events naming the process and each thread (with the device it serves), and
// flow arrows (ph "s" / "f") from each replica's forward to the first backward node of the
// nodes that forward created. Off, each hook costs one relaxed atomic load and a branch
// (profiler::enabled()); nothing is allocated. Events are collected under one mutex: tracing
// is for looking, not for timing nanosecond ops.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace wick::profiler {

namespace detail {
extern std::atomic<bool> g_on;
}

/// True while a trace is being recorded.
inline bool enabled() { return detail::g_on.load(std::memory_order_relaxed); }

/// Records a trace while alive (nested Trace objects are refused with a StateError). The
/// destructor stops recording and, when constructed with a path, writes the JSON there.
class Trace {
 public:
  explicit Trace(std::string path = {});
  ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;
  /// Stops recording (idempotent) and returns the trace as JSON text.
  std::string stop();

 private:
  std::string path_;
  bool stopped_ = false;
  std::string json_;
};

/// Nanoseconds on the tracer's monotonic clock.
inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Records one complete event of the calling thread (args: a JSON object's members without the
/// braces, e.g. "\"bytes\": 64", or empty). No-op when tracing is off.
void record(const char* category, std::string name, int64_t start_ns, int64_t end_ns, std::string args = {});

/// RAII: a complete event from construction to destruction (or end()). Off, construction is one
/// branch; `args` is only called when tracing is on.
class RecordScope {
 public:
  RecordScope(const char* category, const char* name) {
    if (enabled()) [[unlikely]]
      begin(category, name, {});
  }
  RecordScope(const char* category, const char* name, const std::function<std::string()>& args) {
    if (enabled()) [[unlikely]]
      begin(category, name, args ? args() : std::string());
  }
  template <class NameFn>
  static RecordScope named(const char* category, NameFn&& name_fn) {
    RecordScope s;
    if (enabled()) [[unlikely]]
      s.begin(category, name_fn(), {});
    return s;
  }
  ~RecordScope() { end(); }
  RecordScope(RecordScope&& o) noexcept
      : category_(o.category_),
        name_(std::move(o.name_)),
        args_(std::move(o.args_)),
        start_(o.start_),
        active_(o.active_) {
    o.active_ = false;
  }
  RecordScope& operator=(RecordScope&&) = delete;
  /// Ends the event now (idempotent).
  void end() {
    if (active_) [[unlikely]]
      finish();
  }
  /// Replaces the args recorded with the event (when on).
  void set_args(std::string args) {
    if (active_) args_ = std::move(args);
  }
  bool active() const { return active_; }

 private:
  RecordScope() = default;
  void begin(const char* category, std::string name, std::string args);
  void finish();
  const char* category_ = nullptr;
  std::string name_, args_;
  int64_t start_ = 0;
  bool active_ = false;
};

/// Names the calling thread in the trace ("device thread cpu:1"); cheap and safe when off.
void set_thread_name(std::string name);

/// Flow arrows (Note [Tracer]): a forward scope opens a flow whose id the nodes created on
/// this thread meanwhile remember; the engine finishes it at the first such node it runs.
/// Returns 0 when tracing is off.
uint64_t begin_flow(const char* name);
/// The flow open on the calling thread (0: none).
uint64_t current_flow();
/// Closes the calling thread's flow (restores the previous one).
void end_flow(uint64_t previous);
/// Records the flow's finish inside the calling thread's current event (once per id).
void finish_flow(uint64_t id);

/// RAII: begin_flow / end_flow.
class FlowScope {
 public:
  explicit FlowScope(const char* name) {
    if (enabled()) [[unlikely]] {
      prev_ = current_flow();
      id_ = begin_flow(name);
    }
  }
  ~FlowScope() {
    if (id_) end_flow(prev_);
  }
  FlowScope(const FlowScope&) = delete;
  FlowScope& operator=(const FlowScope&) = delete;

 private:
  uint64_t prev_ = 0, id_ = 0;
};

}  // namespace wick::profiler
