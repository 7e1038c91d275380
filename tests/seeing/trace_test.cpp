// The tracer: Chrome trace-event JSON that parses (nlohmann-json), whose complete events nest
// properly on every thread, and that holds what a DataParallel training step did.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "../../examples/every_entry_net.h"
#include "support/temp_dir.h"
#include "wick/wick.h"

using namespace wick;
using json = nlohmann::json;

namespace {

int64_t ns(const json& us) { return std::llround(us.get<double>() * 1000.0); }

// Every thread's "X" events must nest: each one ends inside every event it starts in.
void check_nesting(const json& events) {
  std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> by_tid;
  for (const json& e : events) {
    if (e.at("ph") != "X") continue;
    REQUIRE(e.at("ts").is_number());
    REQUIRE(e.at("dur").is_number());
    REQUIRE(e.at("dur").get<double>() >= 0);
    REQUIRE(e.at("pid").is_number_integer());
    by_tid[e.at("tid").get<int64_t>()].push_back({ns(e.at("ts")), ns(e.at("ts")) + ns(e.at("dur"))});
  }
  for (auto& [tid, spans] : by_tid) {
    std::sort(spans.begin(), spans.end(),
              [](auto a, auto b) { return a.first < b.first || (a.first == b.first && a.second > b.second); });
    std::vector<std::pair<int64_t, int64_t>> stack;
    for (const auto& s : spans) {
      while (!stack.empty() && stack.back().second <= s.first) stack.pop_back();
      INFO("thread " << tid << ": event [" << s.first << ", " << s.second << "] ns overlaps its enclosing event");
      if (!stack.empty()) REQUIRE(s.second <= stack.back().second);
      stack.push_back(s);
    }
  }
}

std::vector<json> with(const json& events, const std::string& key, const std::string& value) {
  std::vector<json> r;
  for (const json& e : events)
    if (e.contains(key) && e.at(key).is_string() && e.at(key).get<std::string>() == value) r.push_back(e);
  return r;
}

}  // namespace

TEST_CASE(
    "trace: a DataParallel step over cpu:0,cpu:1 gives parseable, properly nested JSON with every kind of event") {
  auto mlp = examples::small_mlp();
  auto dp = std::make_shared<parallel::DataParallel>(
      mlp, std::vector<Device>{Device(DeviceType::CPU, 0), Device(DeviceType::CPU, 1)});
  optim::SGD sgd(mlp->parameters(), optim::SGDOptions(0.1));
  Tensor x = ones({4, 3});
  std::string text;
  {
    profiler::Trace trace;
    CHECK(profiler::enabled());
    Tensor loss = dp->forward(x).sum();
    loss.backward();
    sgd.step();
    text = trace.stop();
  }
  CHECK_FALSE(profiler::enabled());
  const json doc = json::parse(text);
  REQUIRE(doc.at("traceEvents").is_array());
  const json& ev = doc.at("traceEvents");
  check_nesting(ev);

  // Ops with shapes, backward nodes, replicate phases, comm with bytes, the optimizer step.
  const auto ops = with(ev, "cat", "op");
  REQUIRE(!ops.empty());
  bool gemm = false;
  for (const json& e : ops) gemm = gemm || (e.at("name") == "gemm" && e.at("args").contains("m"));
  CHECK(gemm);
  // Elementwise kernels carry their operands' shapes (which ones run depends on the fusions:
  // linear's bias goes through its GEMM and SGD's update is one fused pass).
  std::vector<json> elementwise;
  for (const json& e : ops) {
    const std::string name = e.at("name").get<std::string>();
    if (name.rfind("binary:", 0) == 0 || name.rfind("unary:", 0) == 0) elementwise.push_back(e);
  }
  REQUIRE(!elementwise.empty());
  for (const json& e : elementwise) CHECK(e.at("args").at("shapes").is_string());
  CHECK(!with(ev, "cat", "backward").empty());
  CHECK(!with(ev, "name", "Broadcast").empty());
  CHECK(!with(ev, "name", "Gather").empty());
  for (const char* phase : {"replicate", "replicate: index maps", "replicate: broadcast", "replicate: shells"})
    CHECK(with(ev, "name", phase).size() == 1);
  const auto bc = with(ev, "name", "broadcast_coalesced");
  REQUIRE(!bc.empty());
  CHECK(bc[0].at("args").at("bytes").get<int64_t>() == (4 * 3 + 4 + 2 * 4 + 2) * 4);
  CHECK(with(ev, "name", "SGD.step").size() == 1);

  // Each replica's forward on its own thread; the threads are named.
  const auto r0 = with(ev, "name", "replica 0 forward on cpu:0");
  const auto r1 = with(ev, "name", "replica 1 forward on cpu:1");
  REQUIRE(r0.size() == 1);
  REQUIRE(r1.size() == 1);
  CHECK(r0[0].at("tid") != r1[0].at("tid"));
  std::map<int64_t, std::string> thread_names;
  for (const json& e : with(ev, "name", "thread_name")) thread_names[e.at("tid")] = e.at("args").at("name");
  CHECK(thread_names[r1[0].at("tid").get<int64_t>()] == "device thread cpu:1");

  // Flow arrows: one per replica, from its forward to a backward node.
  const auto starts = with(ev, "ph", "s");
  const auto finishes = with(ev, "ph", "f");
  CHECK(starts.size() == 2);
  REQUIRE(finishes.size() == 2);
  std::set<int64_t> ids;
  for (const json& s : starts) ids.insert(s.at("id").get<int64_t>());
  for (const json& f : finishes) CHECK(ids.count(f.at("id").get<int64_t>()) == 1);
  std::set<int64_t> start_tids;
  for (const json& s : starts) start_tids.insert(s.at("tid").get<int64_t>());
  CHECK(start_tids.count(r0[0].at("tid").get<int64_t>()) == 1);
  CHECK(start_tids.count(r1[0].at("tid").get<int64_t>()) == 1);
}

TEST_CASE("trace: off, nothing is recorded, and a second Trace while one runs is refused") {
  {
    profiler::Trace t;
    CHECK_THROWS_AS(profiler::Trace(), StateError);
    (void)add(ones({2}), ones({2}));
    const json doc = json::parse(t.stop());
    CHECK(with(doc.at("traceEvents"), "name", "binary:Add").size() == 1);
  }
  (void)add(ones({2}), ones({2}));  // off: must not reach any trace
  profiler::Trace again;
  const json doc = json::parse(again.stop());
  CHECK(with(doc.at("traceEvents"), "cat", "op").empty());
}

TEST_CASE("trace: Trace(path) writes the file when it stops") {
  wick::test::TempDir dir("wick-trace");
  const std::string path = dir.file("trace.json");
  {
    profiler::Trace t(path);
    (void)mul(ones({3}), ones({3}));
  }
  std::ifstream in(path);
  REQUIRE(in.good());
  const json doc = json::parse(in);
  CHECK(with(doc.at("traceEvents"), "name", "binary:Mul").size() == 1);
  check_nesting(doc.at("traceEvents"));
}
