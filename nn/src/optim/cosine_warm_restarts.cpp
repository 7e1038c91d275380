// CosineAnnealingWarmRestarts: PyTorch 1.13's get_lr and step(epoch), in its order of operations.
#include "wick/nn/optim/cosine_warm_restarts.h"

#include <cmath>
#include <numbers>

#include "wick/core/checked_math.h"
#include "wick/core/error.h"

namespace wick::optim {

CosineAnnealingWarmRestarts::CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t T_0, int64_t T_mult,
                                                         double eta_min)
    : LRScheduler(optimizer), t_0_(T_0), t_mult_(T_mult), eta_min_(eta_min), t_i_(T_0) {
  WICK_CHECK(T_0 >= 1, "CosineAnnealingWarmRestarts: T_0 must be >= 1 (the epochs of the first cycle), got {}", T_0);
  WICK_CHECK(T_mult >= 1,
             "CosineAnnealingWarmRestarts: T_mult must be >= 1 (each cycle is T_mult times the one before), got {}",
             T_mult);
  WICK_CHECK(std::isfinite(eta_min) && eta_min >= 0,
             "CosineAnnealingWarmRestarts: eta_min must be finite and >= 0 (the lowest lr; optimizers refuse a "
             "negative one), got {}",
             eta_min);
  initial_step();
}

double CosineAnnealingWarmRestarts::lr_for(double base, double t_cur, int64_t t_i) const {
  // PyTorch: eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * T_cur / T_i)) / 2
  return eta_min_ + (base - eta_min_) * (1 + std::cos(std::numbers::pi * t_cur / static_cast<double>(t_i))) / 2;
}

std::vector<double> CosineAnnealingWarmRestarts::get_lr() const {
  std::vector<double> out;
  for (const double base : base_lrs_) out.push_back(lr_for(base, t_cur_, t_i_));
  return out;
}

void CosineAnnealingWarmRestarts::commit_cycle(int64_t last_epoch, double t_cur, int64_t t_i) {
  std::vector<double> lrs;
  for (const double base : base_lrs_) lrs.push_back(lr_for(base, t_cur, t_i));
  commit(last_epoch, std::move(lrs));
  t_cur_ = t_cur;
  t_i_ = t_i;
}

void CosineAnnealingWarmRestarts::step() {
  if (last_epoch_ < 0) {  // the initial step, as PyTorch's: step(0)
    step(0.0);
    return;
  }
  check_groups("step");
  double t_cur = t_cur_ + 1;
  int64_t t_i = t_i_;
  if (t_cur >= static_cast<double>(t_i)) {
    t_cur = t_cur - static_cast<double>(t_i);
    WICK_CHECK(!mul_overflow(t_i, t_mult_, &t_i),
               "CosineAnnealingWarmRestarts.step: the next cycle, T_i {} * T_mult {}, overflows int64", t_i_, t_mult_);
  }
  commit_cycle(last_epoch_ + 1, t_cur, t_i);
}

void CosineAnnealingWarmRestarts::step(double epoch) {
  WICK_CHECK(std::isfinite(epoch) && epoch >= 0 && double_fits_int64(epoch),
             "CosineAnnealingWarmRestarts.step: epoch must be finite, >= 0 and below 2^63, got {}", epoch);
  check_groups("step");
  double t_cur = epoch;
  int64_t t_i = t_0_;
  const double t_0 = static_cast<double>(t_0_);
  if (epoch >= t_0) {
    if (t_mult_ == 1) {
      t_cur = std::fmod(epoch, t_0);  // Python's float % for epoch >= 0
    } else {
      // PyTorch: n = int(math.log(epoch / T_0 * (T_mult - 1) + 1, T_mult)), math.log(x, b) being
      // log(x) / log(b); T_0 * (T_mult ** n - 1) / (T_mult - 1) is an integer, which Python's true
      // division rounds to the nearest double as the conversion below does.
      const double m = static_cast<double>(t_mult_);
      const auto n = static_cast<int64_t>(std::log(epoch / t_0 * (m - 1) + 1) / std::log(m));
      int64_t power = 1;
      bool overflow = false;
      for (int64_t k = 0; k < n && !overflow; ++k) overflow = mul_overflow(power, t_mult_, &power);
      int64_t done = 0;
      overflow = overflow || mul_overflow(t_0_, power - 1, &done) || mul_overflow(t_0_, power, &t_i);
      WICK_CHECK(!overflow,
                 "CosineAnnealingWarmRestarts.step: epoch {} is in cycle {}, whose length T_0 {} * T_mult {}^{} "
                 "overflows int64",
                 epoch, n, t_0_, t_mult_, n);
      t_cur = epoch - static_cast<double>(done / (t_mult_ - 1));
    }
  }
  commit_cycle(static_cast<int64_t>(std::floor(epoch)), t_cur, t_i);
}

void CosineAnnealingWarmRestarts::restart() { step(0.0); }

void CosineAnnealingWarmRestarts::cycle_at(int64_t epoch, double& t_cur, int64_t& t_i) const {
  WICK_CHECK(epoch >= 0, "{}: epoch must be >= 0, got {}", name(), epoch);
  t_i = t_0_;
  if (t_mult_ == 1) {
    t_cur = static_cast<double>(epoch % t_0_);
    return;
  }
  // What epoch steps of T_cur += 1 give: whole cycles of T_0, T_0 T_mult, ... are taken off.
  int64_t left = epoch;
  while (left >= t_i) {
    left -= t_i;
    WICK_CHECK(!mul_overflow(t_i, t_mult_, &t_i), "{}: the cycle after epoch {} overflows int64 (T_0 {}, T_mult {})",
               name(), epoch, t_0_, t_mult_);
  }
  t_cur = static_cast<double>(left);
}

double CosineAnnealingWarmRestarts::closed_form_lr(size_t group, int64_t epoch) const {
  const double base = base_lr(group);
  double t_cur = 0;
  int64_t t_i = 0;
  cycle_at(epoch, t_cur, t_i);
  return lr_for(base, t_cur, t_i);
}

void CosineAnnealingWarmRestarts::resume(int64_t last_epoch, const std::vector<double>& base_lrs) {
  check_resume(last_epoch, base_lrs);
  double t_cur = 0;
  int64_t t_i = 0;
  cycle_at(last_epoch, t_cur, t_i);
  LRScheduler::resume(last_epoch, base_lrs);
  t_cur_ = t_cur;
  t_i_ = t_i;
}

}  // namespace wick::optim
