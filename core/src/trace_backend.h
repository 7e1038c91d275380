#pragma once
// Internal: the recording backend that backend() hands out while a trace is on (Note [Tracer]).
#include "wick/core/backend.h"

namespace wick::profiler::detail {

/// The recording wrapper around `inner`, the backend of `type` (one per type, made once).
Backend& traced_backend(DeviceType type, Backend& inner);

}  // namespace wick::profiler::detail
