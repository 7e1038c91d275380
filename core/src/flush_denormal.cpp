// set_flush_denormal (Note [Denormals] in flush_denormal.h): the FTZ and DAZ bits of MXCSR on
// x86-64, the FZ bit of FPCR on AArch64.
#include "wick/core/flush_denormal.h"

#include <cstdint>

#if defined(__x86_64__) || defined(_M_X64) || defined(__SSE2__)
#include <xmmintrin.h>
#define WICK_DENORMAL_X86 1
#elif defined(__aarch64__)
#define WICK_DENORMAL_ARM64 1
#endif

namespace wick {

namespace {
#if WICK_DENORMAL_X86
constexpr unsigned kFlushToZero = 0x8000;       // MXCSR.FTZ: denormal results become zero
constexpr unsigned kDenormalsAreZero = 0x0040;  // MXCSR.DAZ: denormal inputs read as zero
#elif WICK_DENORMAL_ARM64
constexpr uint64_t kFlushZero = uint64_t(1) << 24;  // FPCR.FZ
uint64_t read_fpcr() {
  uint64_t v;
  asm volatile("mrs %0, fpcr" : "=r"(v));
  return v;
}
void write_fpcr(uint64_t v) { asm volatile("msr fpcr, %0" : : "r"(v)); }
#endif
}  // namespace

bool set_flush_denormal(bool on) {
#if WICK_DENORMAL_X86
  const unsigned bits = kFlushToZero | kDenormalsAreZero;
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(on ? (csr | bits) : (csr & ~bits));
  return true;
#elif WICK_DENORMAL_ARM64
  const uint64_t fpcr = read_fpcr();
  write_fpcr(on ? (fpcr | kFlushZero) : (fpcr & ~kFlushZero));
  return true;
#else
  (void)on;
  return false;
#endif
}

bool flush_denormal() {
#if WICK_DENORMAL_X86
  return (_mm_getcsr() & (kFlushToZero | kDenormalsAreZero)) == (kFlushToZero | kDenormalsAreZero);
#elif WICK_DENORMAL_ARM64
  return (read_fpcr() & kFlushZero) != 0;
#else
  return false;
#endif
}

}  // namespace wick
