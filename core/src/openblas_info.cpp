// What OpenBLAS reports about itself (Note [OpenBLAS's kernels] in wick/core/openblas.h).
#include <cblas.h>

#include <cstdlib>
#include <string>

#include "wick/core/openblas.h"

namespace wick {

OpenblasInfo openblas_info() {
  const char* kernels = openblas_get_corename();
  const char* config = openblas_get_config();
  const char* env = std::getenv("OPENBLAS_CORETYPE");
  return OpenblasInfo{kernels ? kernels : "", env ? env : "", config ? config : ""};
}

std::string openblas_summary() {
  const OpenblasInfo info = openblas_info();
  return "OpenBLAS kernels: " + info.kernels +
         (info.coretype_env.empty() ? " (detected by OpenBLAS)" : " (OPENBLAS_CORETYPE=" + info.coretype_env + ")");
}

}  // namespace wick
