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
  /// Owned by autograd: this tensor is a view made while gradients were not recorded, or a view
  /// of one (a custom function's output sharing memory with its input is one too), so a recorded
  /// in-place op on it is refused (Note [Views and in-place ops]). A flag here rather than in the
  /// autograd meta, so that such a view allocates nothing extra.
  bool view_made_without_grad = false;
  /// The version counter's owner when it is not storage->default_version(): comm outputs, an
  /// alias_with_new_version, a tensor after set_data. Null for a fresh tensor and its views, which
  /// count on their storage's counter; so creating and freeing a tensor touches no reference
  /// count for its counter (docs/tensors.md, Note [Version counters]).
  std::shared_ptr<VersionCounter> own_version;
  std::unique_ptr<AutogradMetaBase> autograd_meta;

  /// Shared by a tensor and its views; bumped by every in-place write.
  VersionCounter& version() const { return own_version ? *own_version : storage->default_version(); }
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
