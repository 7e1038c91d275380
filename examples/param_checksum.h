#pragma once
// The tour's DDP pages (examples/tour_07_ddp.cpp, tour_09_comm_hook.cpp): a checksum of a module's
// parameters, printed by every rank, so that equal lines mean bitwise equal models.
#include <wick/wick.h>

#include <cstdint>

namespace wick::examples {

/// FNV-1a over the bytes of every parameter, in registration order: equal on two ranks only
/// when every bit of every parameter is.
inline uint64_t param_checksum(nn::Module& m) {
  uint64_t h = 1469598103934665603ull;
  for (const Tensor& p : m.parameters()) {
    const Tensor c = p.contiguous();
    const auto* bytes = static_cast<const unsigned char*>(c.data_ptr());
    for (size_t i = 0; i < c.nbytes(); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  }
  return h;
}

}  // namespace wick::examples
