#include "wick/core/storage.h"

#include "wick/core/backend.h"

namespace wick {

Storage::Storage(size_t nbytes, Device device) : nbytes_(nbytes), device_(device) {
  allocator_ = &backend(device).allocator();
  data_ = allocator_->allocate(nbytes, device);
}

Storage::Storage(void* data, size_t nbytes, Device device, void (*deleter)(void*, void*), void* ctx)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(deleter), deleter_ctx_(ctx) {}

Storage::~Storage() {
  if (allocator_) {
    allocator_->deallocate(data_, nbytes_, device_);
  } else if (deleter_) {
    deleter_(deleter_ctx_, data_);
  }
}

}  // namespace wick
