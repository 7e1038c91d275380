#pragma once
// Flushing denormal (subnormal) floats to zero on the CPU, as torch.set_flush_denormal.
//
// Note [Denormals]
// Arithmetic on denormal floats (|x| < 1.2e-38 in float32) takes microcode assists that make an
// operation 10-100x slower on x86. Training produces them: Adam's first moment of a parameter
// whose gradient stays zero (a dead ReLU unit) decays by beta1 = 0.9 per step and is denormal
// after about 800 steps, and from then on every optimizer step and every kernel reading it
// crawls (the Fashion-MNIST demo's second epoch ran at 3,300 images/s instead of 6,100). Flushing
// treats denormal inputs as zero and rounds denormal results to zero, which changes no
// result a model depends on. PyTorch leaves it off by default, and so does wick; the demo turns
// it on.
//
// The mode is per thread (the x86 MXCSR register, AArch64's FPCR): it applies to the calling
// thread and to threads it creates afterwards; threads that already run (OpenBLAS's pool) keep
// theirs. Work queued to the device threads (Note [Device threads]: parallel_apply's replicas,
// backward nodes) runs with the mode of the thread that queued it.

namespace wick {

/// Sets (on = true) or clears flush-to-zero and denormals-are-zero for the calling thread.
/// Returns false, changing nothing, where the CPU has no such mode (e.g. x86 without SSE).
bool set_flush_denormal(bool on);

/// Whether the calling thread flushes denormals.
bool flush_denormal();

/// Runs the rest of a scope under `mode` on the calling thread and restores its own mode at the
/// end: how queued work runs with the mode of the thread that queued it.
class FlushDenormalScope {
 public:
  explicit FlushDenormalScope(bool mode) : prev_(flush_denormal()), mode_(mode) {
    if (prev_ != mode_) set_flush_denormal(mode_);
  }
  ~FlushDenormalScope() {
    if (prev_ != mode_) set_flush_denormal(prev_);
  }
  FlushDenormalScope(const FlushDenormalScope&) = delete;
  FlushDenormalScope& operator=(const FlushDenormalScope&) = delete;

 private:
  bool prev_, mode_;
};

}  // namespace wick
