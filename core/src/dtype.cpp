#include "wick/core/dtype.h"

namespace wick {

std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::Bool:
      return "bool";
    case DType::Int64:
      return "int64";
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
  }
  return "unknown";
}

std::string_view dtype_safetensors_name(DType d) {
  switch (d) {
    case DType::Bool:
      return "BOOL";
    case DType::Int64:
      return "I64";
    case DType::Float32:
      return "F32";
    case DType::Float64:
      return "F64";
  }
  return "unknown";
}

DType dtype_from_safetensors_name(std::string_view s) {
  if (s == "BOOL") return DType::Bool;
  if (s == "I64") return DType::Int64;
  if (s == "F32") return DType::Float32;
  if (s == "F64") return DType::Float64;
  // The other dtypes of the safetensors format are well-formed files that wick cannot hold yet.
  constexpr std::string_view kOtherSafetensorsDtypes[] = {"F16",     "BF16", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F6_E2M3",
                                                          "F6_E3M2", "F4",   "I8",      "I16",     "I32",     "U8",
                                                          "U16",     "U32",  "U64",     "C64"};
  for (std::string_view known : kOtherSafetensorsDtypes)
    if (s == known)
      WICK_FAIL_T(NotImplementedError,
                  "safetensors: dtype \"{}\" is not supported by wick (supported: BOOL, I64, F32, F64)", s);
  // Quote a bounded prefix: the name comes from a file (Note [Loader limits] in wick/nn/loader_limits.h).
  const std::string_view shown = s.substr(0, 64);
  WICK_FAIL_T(FormatError, "safetensors: \"{}{}\" is not a safetensors dtype (wick reads BOOL, I64, F32, F64)", shown,
              s.size() > shown.size() ? "..." : "");
}

}  // namespace wick
