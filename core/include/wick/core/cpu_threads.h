#pragma once
// Intra-op thread budgets of CPU devices.
//
// Note [CPU thread budgets]
// A CPU device's kernels run on the thread that calls them (a device worker, Note [Device
// threads], or the caller of a backward or parallel_apply), plus up to budget - 1 helper
// threads of wick's pool: elementwise and row kernels past a size threshold (Note [Intra-op
// threads], core/src/cpu/parallel_for.h), and GEMMs, which wick cuts into blocks around a
// single-threaded OpenBLAS (Note [GEMMs on wick's threads], core/src/cpu/cpu_gemm.cpp), so one
// pool serves both. Each CPU device has a budget: set explicitly
// (set_intra_op_threads), else its share of the cores from share_cpu_cores (DataParallel calls it with its device list:
// N CPU devices on C cores get max(1, C / N) each, so N devices working at once never ask for more than C threads),
// else 0, meaning "not managed": wick's kernels run on the caller alone, and a GEMM is one OpenBLAS call with whatever
// thread count OPENBLAS_NUM_THREADS or openblas_set_num_threads gave it. A GEMM on a device with a budget sets
// OpenBLAS's (process-wide) thread count to 1 first, and so does each wick::linalg LAPACK call
// (its blocked routines call OpenBLAS's BLAS; core/src/lapack/lapack_host.h, lapack_on_budget).
// While a budgeted device's worker waits with nothing to do, its thread may run pieces of another
// budgeted device's kernels (Note [Idle device threads lend a hand], core/src/cpu/parallel_for.h).
// docs/autograd.md ("Threads") has the picture.
#include <vector>

#include "wick/core/device.h"

namespace wick {

/// The cores wick shares out (default std::thread::hardware_concurrency(), at least 1).
int cpu_core_count();
/// Overrides cpu_core_count() (n >= 1; 0 restores the default).
void set_cpu_core_count(int n);

/// Sets CPU device d's budget (n >= 1; 0 clears it, so the shared-out value applies again).
void set_intra_op_threads(Device d, int n);
/// d's budget: the explicit one, else its share from share_cpu_cores, else 0 (not managed).
int intra_op_threads(Device d);
/// Gives each distinct CPU device in `devices` max(1, cpu_core_count() / count) threads.
void share_cpu_cores(const std::vector<Device>& devices);
/// Forgets every budget (explicit and shared).
void reset_intra_op_threads();

/// How many intra-op helper threads the process has started (Note [Intra-op threads]): grows to
/// the largest budget - 1 that a large enough kernel has used; they live until exit.
int intra_op_helper_threads();

/// The CPU device the calling thread works for (DeviceGuard sets it; cpu:0 by default).
Device current_cpu_device();
/// The current CPU device's budget; when it has one, OpenBLAS is made single-threaded first,
/// since wick cuts that device's GEMMs into blocks itself (Note [GEMMs on wick's threads],
/// core/src/cpu/cpu_gemm.cpp). With none (0), OpenBLAS's thread count is left as it is.
int blas_on_budget();

namespace detail {
/// Sets the calling thread's current CPU device, returning the previous one (DeviceGuard).
Device exchange_current_cpu_device(Device d);
}  // namespace detail

}  // namespace wick
