#pragma once
// TensorImpl: the state behind a Tensor handle. Storage + offset + sizes + strides + dtype, a
// version counter shared with views, and an opaque slot for autograd's per-tensor metadata.
#include <memory>

#include "wick/core/dim_vector.h"
#include "wick/core/dtype.h"
#include "wick/core/storage.h"

namespace wick {

/// Autograd's per-tensor state. Core only owns and destroys it (autograd/ defines it).
struct AutogradMetaBase {
  virtual ~AutogradMetaBase() = default;
};

struct TensorImpl {
  // User-provided, so that make_shared<TensorImpl>() (value-initialisation) does not zero-fill
  // the whole object, the DimVectors' inline arrays included, before the members' own
  // initialisers run: that fill was 60% of native::empty in a 1-element add's profile.
  TensorImpl() {}  // NOLINT(modernize-use-equals-default): `= default` would bring the fill back

  std::shared_ptr<Storage> storage;
  int64_t offset = 0;  ///< in elements
  DimVector sizes;
  DimVector strides;  ///< in elements
  DType dtype = DType::Float32;
  /// Shared by a tensor and its views. For a fresh tensor it aliases storage->default_version()
  /// (no extra allocation); comm outputs get counters of their own.
  std::shared_ptr<VersionCounter> version;
  std::unique_ptr<AutogradMetaBase> autograd_meta;

  Device device() const { return storage->device(); }
  int64_t numel() const {
    int64_t n = 1;
    for (auto s : sizes) n *= s;
    return n;
  }
  bool is_contiguous() const;
  char* data() const {
    return static_cast<char*>(storage->data()) + offset * static_cast<int64_t>(element_size(dtype));
  }
};

}  // namespace wick
