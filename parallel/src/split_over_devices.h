#pragma once
// Splits one collective's host memory work over the worker threads of the CPU devices taking part.
//
// Note [Local collectives use every device's thread]
// The local communicator's collectives over host memory (the broadcast of a module's parameters
// into its replicas, the sum of the replicas' gradients in DataParallel's backward) are
// memory-bound loops that one thread used to run alone while the other devices' threads sat
// idle: on DataParallel over cpu:0 and cpu:1 they were a fifth of an MLP step, all of it serial.
// As NCCL's collectives run on every GPU taking part, a local collective over several distinct
// CPU devices splits its element range into one part per device and runs the parts on the
// calling thread and on the other devices' worker threads (Note [Device threads]) at once.
//  - Parts are claimed, not assigned (Note [Claimed parts]): the calling thread claims parts too, so a worker that is
//    busy with other work or slow to wake only loses its share, and nothing waits on a thread
//    that never comes (a worker that calls a collective cannot deadlock on its own queue).
//  - Only ranges of at least kMinPartElements per part are split: handing a part to a sleeping
//    thread costs a few microseconds.
//  - A sum cuts its range into one part per device; a broadcast into several, because a thread
//    that writes another device's replica runs far slower than that device's own thread where
//    the cores share no cache (communicator.cpp, kBroadcastPartsPerDevice).
//  - A coalesced reduce cuts the bucket's whole range, not each tensor's: the caller then sums
//    the front of the bucket, as it copies the front in the next broadcast and updates the front
//    in the optimizer step (Note [Claimed parts]), and that memory stays in its core's cache.
//  - Every element is computed by the same code whichever thread runs it, so results are
//    identical, bit for bit, for any split (tests/parallel/comm_test.cpp compares).
// docs/parallel.md ("Choosing a communicator") restates the rule.
#include <cstdint>
#include <functional>
#include <vector>

#include "wick/core/device.h"

namespace wick::parallel::detail {

/// The smallest part worth handing to another thread (elements).
inline constexpr int64_t kMinPartElements = int64_t{1} << 15;

/// Calls fn(begin, end) on disjoint ranges that cover [0, n), each a multiple of `align` long
/// but the last, on the calling thread and on the worker threads of the other distinct CPU
/// devices in `devices`; returns when every range is done. The range is cut into
/// `parts_per_device` parts per device (fewer where parts would fall under kMinPartElements);
/// the caller claims them from the front, the workers from the back (Note [Claimed parts]). The
/// first exception thrown by fn is rethrown here, after every range has finished.
void split_over_cpu_devices(const std::vector<Device>& devices, int64_t n, int64_t align,
                            const std::function<void(int64_t begin, int64_t end)>& fn, int64_t parts_per_device = 1);

}  // namespace wick::parallel::detail
