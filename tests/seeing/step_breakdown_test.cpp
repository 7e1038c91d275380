// benchmarks/step_breakdown.h: where a step's time goes, per thread, read from a trace. A
// hand-made trace with hand-computed phases, and a real DataParallel step whose events must land
// in the phases their names promise (so a renamed event cannot slip into another phase unseen).
#include "../../benchmarks/step_breakdown.h"

#include <catch2/catch.hpp>
#include <string>

#include "../../examples/every_entry_net.h"
#include "wick/wick.h"

using namespace wick;
using namespace wick_bench;

namespace {

std::string event(int tid, const char* cat, const char* name, double ts, double dur) {
  return "{\"ph\": \"X\", \"pid\": 1, \"tid\": " + std::to_string(tid) + ", \"cat\": \"" + cat + "\", \"name\": \"" +
         name + "\", \"ts\": " + std::to_string(ts) + ", \"dur\": " + std::to_string(dur) + "},";
}

const ThreadTimes& thread_named(const StepBreakdown& b, const std::string& name) {
  for (const auto& t : b.threads)
    if (t.name == name) return t;
  FAIL("no thread named " << name);
  return b.threads.front();
}

}  // namespace

TEST_CASE("step breakdown: a hand-made two-thread trace gives the hand-computed phases, nested events once") {
  // Two steps' worth, 960 us of wall time (480 per step). The worker's events come first in the
  // file: the caller must still be the first thread of the result.
  std::string events =
      "{\"ph\": \"M\", \"pid\": 1, \"tid\": 2, \"name\": \"thread_name\", \"args\": {\"name\": \"device thread "
      "cpu:1\"}},"
      "{\"ph\": \"M\", \"pid\": 1, \"tid\": 1, \"name\": \"thread_name\", \"args\": {\"name\": \"thread that started "
      "the trace\"}},";
  // Worker: a broadcast part while the caller replicates, its replica's forward, its backward
  // (a node holding a gemm), a reduce part during the caller's Broadcast node, a lent piece
  // during the optimizer step, and one more piece when the caller does nothing traced.
  events += event(2, "comm", "collective part", 10, 50);
  events += event(2, "parallel", "replica 1 forward on cpu:1", 100, 280);
  events += event(2, "backward", "LinearBackward", 430, 260);
  events += event(2, "op", "gemm", 440, 200);
  events += event(2, "comm", "collective part", 710, 50);
  events += event(2, "op", "lent piece", 810, 40);
  events += event(2, "op", "lent piece", 950, 10);
  // Caller: replicate (holding a broadcast), its forward, gather, a loss op, the Gather node,
  // a LinearBackward, the Broadcast node (holding its reduce), the optimizer step.
  events += event(1, "replicate", "replicate", 0, 100);
  events += event(1, "comm", "broadcast_coalesced", 5, 90);
  events += event(1, "parallel", "replica 0 forward on cpu:0", 100, 280);
  events += event(1, "comm", "gather", 380, 20);
  events += event(1, "op", "stub:log_softmax_rows", 400, 20);
  events += event(1, "backward", "Gather", 420, 10);
  events += event(1, "backward", "LinearBackward", 430, 270);
  events += event(1, "backward", "Broadcast", 700, 100);
  events += event(1, "comm", "reduce_add_coalesced", 705, 90);
  events += event(1, "optimizer", "Adam.step", 800, 100);
  events.pop_back();  // the last comma
  const StepBreakdown b = breakdown("{\"traceEvents\": [" + events + "]}", 2);

  CHECK(b.step_us == Approx(480));
  REQUIRE(b.threads.size() == 2);
  CHECK(b.threads[0].name == kTracingThread);
  CHECK(b.threads[1].name == "device thread cpu:1");

  const ThreadTimes& caller = thread_named(b, kTracingThread);
  CHECK(caller.phase_us[kReplicate] == Approx(50));
  CHECK(caller.phase_us[kForward] == Approx(150));       // (280 + 20) / 2
  CHECK(caller.phase_us[kScatterGather] == Approx(15));  // (20 + 10) / 2
  CHECK(caller.phase_us[kBackward] == Approx(135));
  CHECK(caller.phase_us[kGradientSum] == Approx(50));
  CHECK(caller.phase_us[kOptimizer] == Approx(50));
  CHECK(caller.phase_us[kOther] == Approx(0));
  CHECK(caller.idle_us == Approx(30));  // 480 - 900 / 2

  const ThreadTimes& worker = thread_named(b, "device thread cpu:1");
  CHECK(worker.phase_us[kReplicate] == Approx(25));  // the part inside the caller's replicate
  CHECK(worker.phase_us[kForward] == Approx(140));
  CHECK(worker.phase_us[kBackward] == Approx(130));  // the gemm inside counts once
  CHECK(worker.phase_us[kGradientSum] == Approx(25));
  CHECK(worker.phase_us[kOptimizer] == Approx(20));
  CHECK(worker.phase_us[kOther] == Approx(5));  // the piece at 950: the caller traced nothing then
  CHECK(worker.idle_us == Approx(135));         // 480 - 690 / 2
}

TEST_CASE("step breakdown: a traced DataParallel step over cpu:0,cpu:1 lands in the phases the names promise") {
  auto mlp = examples::small_mlp();
  const Device cpu0(DeviceType::CPU, 0), cpu1(DeviceType::CPU, 1);
  auto dp = std::make_shared<parallel::DataParallel>(mlp, std::vector<Device>{cpu0, cpu1});
  optim::SGD sgd(mlp->parameters(), optim::SGDOptions(0.1));
  const Tensor x = randn({8, 3});
  const Tensor y = randint(0, 2, {8});
  const int steps = 3;
  std::string json;
  {
    profiler::Trace trace;
    for (int i = 0; i < steps; ++i) {
      sgd.zero_grad();
      nn::F::cross_entropy(dp->forward_tensor(x), y).backward();
      sgd.step();
    }
    json = trace.stop();
  }
  const StepBreakdown b = breakdown(json, steps);
  REQUIRE(b.threads.size() >= 2);
  const ThreadTimes& caller = thread_named(b, kTracingThread);
  const ThreadTimes& worker = thread_named(b, "device thread cpu:1");
  CHECK(caller.phase_us[kReplicate] > 0);
  CHECK(caller.phase_us[kScatterGather] > 0);
  CHECK(caller.phase_us[kForward] > 0);
  CHECK(caller.phase_us[kBackward] > 0);
  CHECK(caller.phase_us[kGradientSum] > 0);
  CHECK(caller.phase_us[kOptimizer] > 0);
  CHECK(worker.phase_us[kForward] > 0);   // replica 1's forward runs on cpu:1's thread
  CHECK(worker.phase_us[kBackward] > 0);  // and so do its backward nodes
  for (const auto& t : b.threads) {
    double total = t.idle_us;
    for (double us : t.phase_us) total += us;
    CHECK(total == Approx(b.step_us).margin(1e-6));  // idle is what the events leave of the wall time
  }
}
