#pragma once
// CosineAnnealingWarmRestarts: PyTorch 1.13's torch.optim.lr_scheduler.CosineAnnealingWarmRestarts
// (SGDR). Within a cycle of T_i epochs the lr follows a cosine from the base lr down towards
// eta_min; then it restarts at the base lr and the next cycle is T_mult times longer:
//
//   lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2
//   step():        T_cur += 1; if T_cur >= T_i: T_cur -= T_i, T_i *= T_mult
//   step(epoch):   epoch < T_0: T_i = T_0, T_cur = epoch
//                  T_mult == 1: T_cur = fmod(epoch, T_0)
//                  else: n = int(log(epoch / T_0 * (T_mult - 1) + 1) / log(T_mult)),
//                        T_cur = epoch - T_0 * (T_mult^n - 1) / (T_mult - 1), T_i = T_0 * T_mult^n
//
// Not recursive: the lr comes from the base lr, T_cur and T_i. step(epoch) takes a fractional
// epoch (epoch + batch / batches, stepped after every batch) as PyTorch's, formula and all: where
// the logarithm rounds down at a restart (T_0 1, T_mult 10, epoch 111: log(1000) / log(10) is
// 2.9999999999999996) it gives the end of the previous cycle (eta_min) where step() gives the
// restart, as PyTorch does.
#include <cstdint>
#include <string>
#include <vector>

#include "wick/nn/optim/lr_scheduler.h"

namespace wick::optim {

class CosineAnnealingWarmRestarts : public LRScheduler {
 public:
  /// wick::ValueError unless T_0 >= 1, T_mult >= 1 and eta_min is finite and >= 0.
  CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t T_0, int64_t T_mult = 1, double eta_min = 0);
  std::string name() const override { return "CosineAnnealingWarmRestarts"; }
  /// One epoch on: T_cur += 1, restarting when it reaches T_i.
  void step() override;
  /// PyTorch's step(epoch): T_cur and T_i from `epoch` alone (a fractional epoch anneals within
  /// an epoch), last_epoch = floor(epoch). wick::ValueError, changing nothing, for an epoch that is
  /// negative or not finite; wick::ValueError when T_i = T_0 * T_mult^n would overflow int64.
  void step(double epoch);
  /// The lr that step() gives at `epoch` (T_cur and T_i by integer arithmetic).
  double closed_form_lr(size_t group, int64_t epoch) const override;
  /// As LRScheduler::resume, and T_cur and T_i become those of `last_epoch` reached by step(). A
  /// run stepped by step(epoch) continues exactly with its next step(epoch), which does not read
  /// them.
  void resume(int64_t last_epoch, const std::vector<double>& base_lrs) override;
  /// The epochs since the last restart (fractional after a fractional step(epoch)).
  double t_cur() const { return t_cur_; }
  /// The length of the current cycle.
  int64_t t_i() const { return t_i_; }

 protected:
  std::vector<double> get_lr() const override;
  void restart() override;

 private:
  /// Sets T_cur, T_i and the lrs of epoch `last_epoch` (nothing when the groups changed).
  void commit_cycle(int64_t last_epoch, double t_cur, int64_t t_i);
  /// T_cur and T_i after `epoch` steps.
  void cycle_at(int64_t epoch, double& t_cur, int64_t& t_i) const;
  double lr_for(double base, double t_cur, int64_t t_i) const;

  int64_t t_0_;
  int64_t t_mult_;
  double eta_min_;
  double t_cur_ = 0;
  int64_t t_i_;
};

}  // namespace wick::optim
