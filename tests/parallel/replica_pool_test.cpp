// The pool of replica modules (Note [Replicas are fresh copies], replicate.cpp: Lease,
// reset_tables, acquire_shells), checked where the older cases could not fail (helper29 review,
// section 3, T1 and T2):
//  - a replica that only fills a None parameter entry keeps its tables' sizes, so its modules
//    ARE pooled and reset_tables must clear the entry. (replica_semantics_test's SelfEditing also
//    registers a buffer, which makes reset_tables refuse the set, so the clearing never ran.)
//  - a replica held through the module's own shared_ptr (shared_from_this, not the aliasing
//    pointer replicate returns, which keeps the replica's lease alive by construction) is never
//    handed out again, and a released one comes back from the pool with nothing left of its use.
#include <wick/nn/nn.h>

#include <catch2/catch.hpp>
#include <memory>
#include <mutex>
#include <type_traits>

#include "parallel/parallel_test_util.h"
#include "wick/parallel/data_parallel.h"
#include "wick/parallel/replicate.h"

using namespace wick;
using namespace wick::parallel;
using wick::test::cpu;
using wick::test::f64;

namespace {

// True when a and b point to the same object (same control block), even once expired.
bool same_object(const std::weak_ptr<nn::Module>& a, const std::weak_ptr<nn::Module>& b) {
  return !a.owner_before(b) && !b.owner_before(a);
}

// Fills its None parameter entry "extra" in forward and changes nothing else in its tables. A
// replica that sees the entry filled returns 10 x w instead of x w.
class FillsNoneSlot : public nn::Cloneable<FillsNoneSlot> {
 public:
  struct Log {
    std::mutex mutex;
    std::vector<bool> saw_extra;                 // has(extra_) at the start of each forward
    std::vector<std::weak_ptr<nn::Module>> who;  // the module that ran each forward
  };
  FillsNoneSlot() {
    w_ = register_parameter("w", ones({1}, f64()));
    extra_ = register_parameter("extra", Tensor());
  }
  Tensor forward(const Tensor& x) {
    const bool seen = has(extra_);
    {
      std::lock_guard<std::mutex> lock(log->mutex);
      log->saw_extra.push_back(seen);
      log->who.push_back(weak_from_this());
    }
    set_parameter_entry(static_cast<size_t>(extra_.index), full({1}, 5.0, param(w_).options()));
    return x * param(w_) * (seen ? 10.0 : 1.0);
  }
  nn::ParamSlot w_, extra_;
  std::shared_ptr<Log> log = std::make_shared<Log>();  // shared by the original and its replicas
};

// A parameter and a plain member.
class Scaled : public nn::Cloneable<Scaled> {
 public:
  Scaled() { w_ = register_parameter("w", tensor({1.0, 2.0}, f64())); }
  Tensor forward(const Tensor& x) { return x * param(w_) * gain; }
  nn::ParamSlot w_;
  double gain = 1.0;
};

}  // namespace

TEST_CASE("replicate: a None parameter a pooled replica filled in forward is None again in every later replica") {
  // Copy-assignable, so released replicas are pooled and reused (not copied afresh).
  static_assert(std::is_copy_assignable_v<FillsNoneSlot>);
  auto m = std::make_shared<FillsNoneSlot>();
  const std::vector<Device> two{cpu(0), cpu(1)};
  const Tensor x = ones({2, 1}, f64());  // one row per replica; w = 1, so 1 unless a replica saw "extra"
  for (int call = 0; call < 4; ++call) {
    INFO("call " << call);
    CHECK_VALUES(data_parallel(m, x, two), {1.0, 1.0});
  }
  {
    std::lock_guard<std::mutex> lock(m->log->mutex);
    REQUIRE(m->log->saw_extra.size() == 8);
    for (size_t k = 0; k < m->log->saw_extra.size(); ++k) {
      INFO("forward " << k);
      CHECK_FALSE(m->log->saw_extra[k]);
    }
    // The path under test ran: a later call's forward ran on modules of an earlier call (the
    // pool), not on new copies (which would start with the original's None anyway).
    bool reused = false;
    for (size_t a = 0; a < 2; ++a)
      for (size_t b = 2; b < m->log->who.size(); ++b) reused = reused || same_object(m->log->who[a], m->log->who[b]);
    INFO("no replica module was reused, so the None-entry clearing of released replicas was not exercised");
    CHECK(reused);
  }
  // replicate directly: the (pooled) replicas it returns have the entry empty, as the original.
  auto replicas = replicate(m, two);
  for (size_t i = 0; i < replicas.size(); ++i) {
    auto& r = static_cast<FillsNoneSlot&>(*replicas[i]);
    CHECK_FALSE(r.has(r.extra_));
    CHECK(r.parameter_table().size() == 2);
    CHECK(r.param(r.w_).device() == cpu(static_cast<int>(i)));
  }
  CHECK_FALSE(m->has(m->extra_));
  CHECK(m->parameter_table().size() == 2);
}

TEST_CASE(
    "replicate: a replica held through its own shared_ptr is never handed out again, a released one comes back clean") {
  static_assert(std::is_copy_assignable_v<Scaled>);
  auto m = std::make_shared<Scaled>();
  m->gain = 3.0;
  const std::vector<Device> two{cpu(0), cpu(1)};
  auto r = replicate(m, two);
  // r[1] is an aliasing pointer that owns r[1]'s lease. shared_from_this() shares the module's
  // own control block instead: holding it does NOT keep the lease alive, so the lease ends with
  // r below and its release path must notice that the module is still referenced.
  std::shared_ptr<nn::Module> kept = r[1]->shared_from_this();
  REQUIRE(kept.get() == r[1].get());
  auto& k = static_cast<Scaled&>(*kept);
  const Tensor kept_weight = k.param(k.w_);  // replica 1's own copy, on cpu:1
  k.gain = 7.0;
  // Leave state on replica 0 too, which nobody holds after r.clear().
  std::weak_ptr<nn::Module> released = r[0]->weak_from_this();
  auto& r0 = static_cast<Scaled&>(*r[0]);
  r0.gain = 9.0;
  r0.set_parameter_entry(0, zeros({2}, f64()));
  r.clear();
  REQUIRE_FALSE(released.expired());  // the pool holds it (doc: released replicas are pooled per root)

  for (int call = 0; call < 3; ++call) {
    INFO("call " << call);
    auto again = replicate(m, two);
    bool reused = false;
    for (size_t j = 0; j < again.size(); ++j) {
      CHECK(again[j].get() != kept.get());
      auto& s = static_cast<Scaled&>(*again[j]);
      CHECK(s.gain == 3.0);  // the original's, not 9 (released) or 7 (kept)
      CHECK(s.param(s.w_).device() == cpu(static_cast<int>(j)));
      CHECK_VALUES(s.param(s.w_), {1.0, 2.0});
      CHECK_VALUES(s.forward(ones({1}, f64(cpu(static_cast<int>(j))))), {3.0, 6.0});
      reused = reused || same_object(again[j]->weak_from_this(), released);
    }
    CHECK(reused);  // the released module is back in use, with nothing left of its earlier use
    // The kept module is left as its holder had it, while later calls run.
    CHECK(k.gain == 7.0);
    CHECK(k.param(k.w_).is_same(kept_weight));
  }
  CHECK(kept_weight.device() == cpu(1));
  CHECK_VALUES(kept_weight, {1.0, 2.0});
  CHECK(k.is_replica());
  // A module that was referenced when its lease ended is never pooled: dropping it destroys it.
  std::weak_ptr<nn::Module> kept_weak = kept;
  kept.reset();
  CHECK(kept_weak.expired());
}
