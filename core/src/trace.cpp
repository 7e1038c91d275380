// The tracer (Note [Tracer] in trace.h): event collection and the Chrome trace-event JSON.
#include "wick/core/trace.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "wick/core/error.h"

namespace wick::profiler {

namespace detail {
std::atomic<bool> g_on{false};
}

namespace {

struct Event {
  char ph;  // 'X', 's', 'f'
  const char* category;
  std::string name;
  int64_t start_ns, end_ns;
  int tid;
  uint64_t flow_id;
  std::string args;
};

struct State {
  std::mutex mutex;
  bool active = false;
  int64_t origin_ns = 0;
  std::vector<Event> events;
  std::map<int, std::string> thread_names;  // every thread that ever named itself
  std::map<uint64_t, std::string> flow_names;
  std::set<uint64_t> finished_flows;
  uint64_t next_flow = 1;
};

State& state() {
  static State* s = new State;  // never destroyed: threads may record while the process exits
  return *s;
}

std::atomic<int> g_next_tid{1};
thread_local int t_tid = 0;
thread_local uint64_t t_flow = 0;

int tid() {
  if (t_tid == 0) t_tid = g_next_tid.fetch_add(1, std::memory_order_relaxed);
  return t_tid;
}

std::string json_string(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        r += "\\\"";
        break;
      case '\\':
        r += "\\\\";
        break;
      case '\n':
        r += "\\n";
        break;
      case '\t':
        r += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          r += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else
          r += c;
    }
  }
  return r + "\"";
}

// Microseconds with nanosecond digits, exact (so nesting is decided on exact integers).
std::string micros(int64_t ns) {
  const char* sign = ns < 0 ? "-" : "";
  if (ns < 0) ns = -ns;
  return fmt::format("{}{}.{:03}", sign, ns / 1000, ns % 1000);
}

void push(Event e) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.active) return;
  s.events.push_back(std::move(e));
}

std::string to_json(State& s) {
  std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  out += "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"tid\": 0, \"args\": {\"name\": \"wick\"}}";
  std::set<int> tids;
  for (const Event& e : s.events) tids.insert(e.tid);
  for (int t : tids) {
    auto it = s.thread_names.find(t);
    const std::string name = it != s.thread_names.end() ? it->second : fmt::format("thread {}", t);
    out += fmt::format(
        ",\n{{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": {}, \"args\": {{\"name\": {}}}}}", t,
        json_string(name));
    out += fmt::format(
        ",\n{{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": 1, \"tid\": {}, \"args\": "
        "{{\"sort_index\": {}}}}}",
        t, t);
  }
  for (const Event& e : s.events) {
    const std::string ts = micros(e.start_ns - s.origin_ns);
    if (e.ph == 'X') {
      out += fmt::format(
          ",\n{{\"ph\": \"X\", \"cat\": \"{}\", \"name\": {}, \"ts\": {}, \"dur\": {}, \"pid\": 1, \"tid\": {}, "
          "\"args\": {{{}}}}}",
          e.category, json_string(e.name), ts, micros(e.end_ns - e.start_ns), e.tid, e.args);
    } else {
      out += fmt::format(
          ",\n{{\"ph\": \"{}\", \"cat\": \"flow\", \"name\": {}, \"id\": {}, \"ts\": {}, \"pid\": 1, "
          "\"tid\": {}{}}}",
          e.ph, json_string(e.name), e.flow_id, ts, e.tid, e.ph == 'f' ? ", \"bp\": \"e\"" : "");
    }
  }
  return out + "\n]}\n";
}

// WICK_TRACE=<path>: a trace of the whole run, written at exit.
struct EnvTrace {
  Trace* trace = nullptr;
  EnvTrace() {
    const char* path = std::getenv("WICK_TRACE");
    if (path && *path) trace = new Trace(path);
  }
  ~EnvTrace() {
    try {
      delete trace;
    } catch (...) {
      // a destructor at exit must not throw; Trace's own destructor already reports
    }
  }
};
EnvTrace g_env_trace;

}  // namespace

Trace::Trace(std::string path) : path_(std::move(path)) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  WICK_CHECK_STATE(!s.active,
                   "profiler::Trace: a trace is already being recorded (a Trace object is alive, or "
                   "WICK_TRACE is set); stop it before starting another");
  s.events.clear();
  s.flow_names.clear();
  s.finished_flows.clear();
  s.origin_ns = now_ns();
  s.active = true;
  if (!s.thread_names.count(tid())) s.thread_names[tid()] = "thread that started the trace";
  detail::g_on.store(true, std::memory_order_relaxed);
}

Trace::~Trace() {
  try {
    stop();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wick: could not write the trace: %s\n", e.what());
  }
}

std::string Trace::stop() {
  if (stopped_) return json_;
  stopped_ = true;
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    detail::g_on.store(false, std::memory_order_relaxed);
    s.active = false;
    json_ = to_json(s);
    s.events.clear();
    s.events.shrink_to_fit();
  }
  if (!path_.empty()) {
    std::ofstream out(path_, std::ios::binary);
    out << json_;
    WICK_CHECK_IO(out.good(), "profiler::Trace: cannot write the trace to '{}'", path_);
  }
  return json_;
}

void record(const char* category, std::string name, int64_t start_ns, int64_t end_ns, std::string args) {
  if (!enabled()) return;
  push(Event{'X', category, std::move(name), start_ns, end_ns, tid(), 0, std::move(args)});
}

void RecordScope::begin(const char* category, std::string name, std::string args) {
  category_ = category;
  name_ = std::move(name);
  args_ = std::move(args);
  active_ = true;
  start_ = now_ns();
}

void RecordScope::finish() {
  active_ = false;
  const int64_t end = now_ns();
  push(Event{'X', category_, std::move(name_), start_, end, tid(), 0, std::move(args_)});
}

void set_thread_name(std::string name) {
  State& s = state();
  const int t = tid();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.thread_names[t] = std::move(name);
}

uint64_t begin_flow(const char* name) {
  if (!enabled()) return 0;
  State& s = state();
  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.active) return 0;
    id = s.next_flow++;
    s.flow_names[id] = name;
  }
  t_flow = id;
  push(Event{'s', "flow", name, now_ns(), 0, tid(), id, {}});
  return id;
}

uint64_t current_flow() { return t_flow; }

void end_flow(uint64_t previous) { t_flow = previous; }

void finish_flow(uint64_t id) {
  if (id == 0 || !enabled()) return;
  State& s = state();
  std::string name;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.active || !s.finished_flows.insert(id).second) return;
    auto it = s.flow_names.find(id);
    if (it == s.flow_names.end()) return;  // opened by an earlier trace
    name = it->second;
  }
  push(Event{'f', "flow", std::move(name), now_ns(), 0, tid(), id, {}});
}

}  // namespace wick::profiler
