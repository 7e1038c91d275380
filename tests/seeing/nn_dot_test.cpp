// nn::to_dot: the module tree of the docs/parallel.md model against a golden file; tied
// parameters and shared children drawn once with several incoming edges.
#include <algorithm>
#include <catch2/catch.hpp>

#include "../../examples/every_entry_net.h"
#include "golden.h"

using namespace wick;

namespace {
size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("nn to_dot: the every-entry model equals the golden file") {
  examples::EveryEntryNet net;
  wick::test::check_golden("every_entry_modules.dot", nn::to_dot(net));
}

TEST_CASE("nn to_dot: a tied parameter and a shared child are drawn once, with two incoming edges") {
  examples::EveryEntryNet net;
  const std::string dot = nn::to_dot(net);
  // Modules in pre-order, once each: root, block, block.fc, block.bn, head.
  CHECK(count(dot, "style=\"filled,rounded\"") == 5);
  CHECK(dot.find("m0 -> m1 [label=\"block\"") != std::string::npos);
  CHECK(dot.find("m0 -> m1 [label=\"again\"") != std::string::npos);
  // 7 distinct parameters (tied = head.weight), 3 buffers, one None.
  CHECK(count(dot, "fillcolor=lightblue") == 7);
  CHECK(count(dot, "fillcolor=khaki") == 3);
  CHECK(count(dot, "label=\"None\"") == 1);
  // head.weight's node is p6 (scale p0, tied p1 met first from the root), reached from the root
  // as "tied" and from head as "weight".
  CHECK(dot.find("p1 [label=\"tied\\n[2, 4] float32\"") != std::string::npos);
  CHECK(dot.find("m0 -> p1 [label=\"tied\"]") != std::string::npos);
  CHECK(dot.find("m4 -> p1 [label=\"weight\"]") != std::string::npos);
  CHECK(dot.find("running_mean\\n[4] float32") != std::string::npos);
  CHECK(dot.find("num_batches_tracked\\n[] int64") != std::string::npos);
}

TEST_CASE("nn dot_options names every parameter and buffer by its dotted name") {
  examples::EveryEntryNet net;
  const autograd::DotOptions o = nn::dot_options(net);
  std::vector<std::string> names;
  for (const auto& [n, t] : o.names) names.push_back(n);
  CHECK(std::find(names.begin(), names.end(), "block.fc.weight") != names.end());
  CHECK(std::find(names.begin(), names.end(), "block.bn.running_var") != names.end());
  CHECK(o.names.size() == 10);  // 7 distinct parameters (tied counted once) and 3 buffers
}
