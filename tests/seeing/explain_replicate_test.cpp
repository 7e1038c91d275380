// explain_replicate and the DataParallel step picture: the step's DOT against a golden file,
// the tables checked against the index maps worked out by hand for the docs/parallel.md model.
#include <catch2/catch.hpp>

#include "../../examples/every_entry_net.h"
#include "golden.h"

using namespace wick;

namespace {
std::vector<Device> two_cpus() { return {Device(DeviceType::CPU, 0), Device(DeviceType::CPU, 1)}; }
}  // namespace

TEST_CASE("explain_replicate: DataParallel step over cpu:0,cpu:1 equals the golden file") {
  auto mlp = examples::small_mlp();
  Tensor x = ones({4, 3}, TensorOptions().requires_grad(true));
  const std::string dot = parallel::data_parallel_step_dot(mlp, x, two_cpus());
  wick::test::check_golden("data_parallel_step.dot", dot);
  CHECK(dot.find("Scatter") != std::string::npos);
  CHECK(dot.find("Gather") != std::string::npos);
  CHECK(dot.find("Broadcast\\nbackward: ReduceAddCoalesced onto cpu:0") != std::string::npos);
  CHECK(dot.find("subgraph \"cluster_cpu_1\"") != std::string::npos);
  CHECK(dot.find("label=\"fc1.weight\\n[4, 3] float32\"") != std::string::npos);
}

TEST_CASE("explain_replicate: the step picture with no devices named uses DataParallel's defaults") {
  // It used to index devices[0] and throw std::out_of_range after the forward had run.
  auto mlp = examples::small_mlp();
  Tensor x = ones({4, 3}, TensorOptions().requires_grad(true));
  const std::string dot = parallel::data_parallel_step_dot(mlp, x, {});
  CHECK(dot.find("digraph") != std::string::npos);
  CHECK(dot.find("label=\"fc1.weight\\n[4, 3] float32\"") != std::string::npos);
  if (parallel::default_device_ids().empty())  // no GPU: a plain call, as DataParallel
    CHECK(dot.find("Broadcast") == std::string::npos);
}

TEST_CASE("explain_replicate: index maps, bucket plan and the replicas picture of the every-entry model") {
  auto net = std::make_shared<examples::EveryEntryNet>();
  const parallel::ReplicateExplanation ex = parallel::explain_replicate(net, two_cpus());
  const std::string& t = ex.tables;
  // Modules in pre-order, each once.
  CHECK(t.find("| 0 | (root) | EveryEntryNet |") != std::string::npos);
  CHECK(t.find("| 1 | block | Sequential |") != std::string::npos);
  CHECK(t.find("| 4 | head | Linear |") != std::string::npos);
  // Entries: again maps to block's index, tied to head.weight's, the None buffer to -1.
  CHECK(t.find("block\u21921, head\u21924, again\u21921") != std::string::npos);
  CHECK(t.find("scale\u21920, tied\u21921") != std::string::npos);
  CHECK(t.find("mask\u2192-1") != std::string::npos);
  CHECK(t.find("| 4 head |  | weight\u21921, bias\u21926 |") != std::string::npos);
  CHECK(t.find("| 1 | tied = head.weight | [2, 4] float32 |") != std::string::npos);
  // Buckets: parameters 1 + 8 + 16 + 4 + 4 + 4 + 2 = 39 float32 elements = 156 bytes; buffers
  // running_mean and running_var (8 floats, 32 bytes) and num_batches_tracked (8 bytes).
  CHECK(t.find("| parameters (Broadcast) | 0 | float32 | 156 | 0 @0, 1 @1, 2 @9, 3 @25, 4 @29, 5 @33, 6 @37 |") !=
        std::string::npos);
  CHECK(t.find("| other buffers (broadcast_coalesced, detached) | 0 | float32 | 32 | 0 @0, 1 @4 |") !=
        std::string::npos);
  CHECK(t.find("| other buffers (broadcast_coalesced, detached) | 1 | int64 | 8 | 2 @0 |") != std::string::npos);
  CHECK(ex.profile.find("| first | miss |") != std::string::npos);
  CHECK(ex.profile.find("| second | hit |") != std::string::npos);
  // The picture: one Broadcast with 7 inputs and 14 outputs; replica 0's tensors marked.
  const std::string& d = ex.replicas_dot;
  wick::test::emit_dot("replicate.dot", d);
  size_t outs = 0, ins = 0, aliases = 0, originals = 0;
  for (size_t p = d.find("bcast0 -> "); p != std::string::npos; p = d.find("bcast0 -> ", p + 1)) ++outs;
  for (size_t p = d.find(" -> bcast0 "); p != std::string::npos; p = d.find(" -> bcast0 ", p + 1)) ++ins;
  for (size_t p = d.find("alias of the original"); p != std::string::npos; p = d.find("alias of the original", p + 1))
    ++aliases;
  for (size_t p = d.find("the original tensor"); p != std::string::npos; p = d.find("the original tensor", p + 1))
    ++originals;
  CHECK(ins == 7);
  CHECK(outs == 14);
  CHECK(aliases == 7);    // replica 0's parameters: Broadcast outputs viewing the originals' memory
  CHECK(originals == 3);  // replica 0's buffers: the original tensors themselves
  CHECK(d.find("bcast1") == std::string::npos);
  CHECK(d.find("subgraph \"cluster_cpu_1_r1\"") != std::string::npos);
}

TEST_CASE("explain_replicate: bad arguments raise typed errors") {
  CHECK_THROWS_AS(parallel::explain_replicate(nullptr, two_cpus()), ValueError);
  CHECK_THROWS_AS(parallel::explain_replicate(examples::small_mlp(), {}), ValueError);
}
