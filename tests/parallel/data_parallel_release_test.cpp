// Replicas are released when a DataParallel call returns: the C++ counterpart of PyTorch's
// test_data_parallel_model_no_refcycles, which no case checked (helper29 review, minor gaps).
// Nothing but replicate's pool may keep a replica's modules after the call (so once the pool is
// cleared every module that ran forward is gone, even while the output's graph is alive), no
// replica tensor outlives the call and its backward (device memory in use on the second device
// returns to its level before the call), and the use counts of the wrapped modules are as before.
#include <wick/nn/nn.h>

#include <catch2/catch.hpp>
#include <memory>
#include <mutex>

#include "parallel/parallel_test_util.h"
#include "wick/parallel/data_parallel.h"
#include "wick/parallel/replicate.h"

using namespace wick;
using namespace wick::parallel;
using wick::test::cpu;
using wick::test::f64;

namespace {

// Runs its Linear child after noting (weakly) the replica's modules that run.
class NotesReplicas : public nn::Cloneable<NotesReplicas> {
 public:
  struct Log {
    std::mutex mutex;
    std::vector<std::weak_ptr<nn::Module>> modules;
  };
  explicit NotesReplicas(std::shared_ptr<nn::LinearImpl> inner) { inner_ = register_module("inner", std::move(inner)); }
  Tensor forward(const Tensor& x) {
    {
      std::lock_guard<std::mutex> lock(log->mutex);
      log->modules.push_back(weak_from_this());
      log->modules.push_back(child_ptr(inner_));
    }
    return child(inner_).forward(x);
  }
  nn::ChildSlot<nn::LinearImpl> inner_;
  std::shared_ptr<Log> log = std::make_shared<Log>();
};

std::vector<Tensor> grads_of(const nn::Module& m) {
  std::vector<Tensor> g;
  for (const Tensor& p : m.parameters()) g.push_back(p.grad().defined() ? p.grad().clone() : Tensor());
  return g;
}

}  // namespace

TEST_CASE(
    "DataParallel: no replica module or replica tensor outlives the call (test_data_parallel_model_no_refcycles)") {
  manual_seed(0);
  const Device second = cpu(3);
  auto lin = std::make_shared<nn::LinearImpl>(10, 5, f64());
  auto m = std::make_shared<NotesReplicas>(lin);
  const Tensor x = randn({8, 10}, f64());
  const Tensor expected = lin->forward(x);
  expected.sum().backward();
  const auto expected_grads = grads_of(*lin);
  lin->zero_grad();

  DataParallel dp(m, {cpu(0), second});
  const long m_uses = m.use_count(), lin_uses = lin.use_count();
  const int64_t in_use_before = memory_stats(second).in_use;

  {
    Tensor out = dp.forward(x);
    CHECK_ALLCLOSE(out, expected, 1e-12, 1e-13);
    CHECK(m.use_count() == m_uses);
    CHECK(lin.use_count() == lin_uses);
    // The output and its graph are alive; the replicas' modules may only sit in the pool.
    clear_replicate_cache();
    {
      std::lock_guard<std::mutex> lock(m->log->mutex);
      REQUIRE(m->log->modules.size() == 4);  // root and child, for each of the two replicas
      for (size_t k = 0; k < m->log->modules.size(); ++k) {
        INFO("module " << k);
        CHECK(m->log->modules[k].expired());
      }
    }
    // The graph still works without them.
    out.sum().backward();
    const auto g = grads_of(*lin);
    REQUIRE(g.size() == expected_grads.size());
    for (size_t k = 0; k < g.size(); ++k) CHECK_ALLCLOSE(g[k], expected_grads[k], 1e-12, 1e-13);
  }
  CHECK(memory_stats(second).in_use == in_use_before);

  // Again without clearing the pool: released replicas keep no tensor, so the memory the copies on
  // the second device took is back once the output and its graph are gone.
  for (int call = 0; call < 3; ++call) {
    INFO("call " << call);
    {
      Tensor out = dp.forward(x);
      CHECK(memory_stats(second).in_use > in_use_before);  // the output's graph holds the replica's copies
      out.sum().backward();
    }
    CHECK(memory_stats(second).in_use == in_use_before);
    CHECK(m.use_count() == m_uses);
    CHECK(lin.use_count() == lin_uses);
  }
}
