#include "wick/distributed/comm_hook.h"

#include <utility>

#include "collective_args.h"
#include "wick/core/error.h"

namespace wick::distributed {

std::shared_ptr<Future> Future::completed(Tensor value) {
  std::shared_ptr<Future> f(new Future());
  f->value_ = std::move(value);
  f->done_ = true;
  return f;
}

std::shared_ptr<Future> Future::of(std::shared_ptr<Work> work, Tensor value) {
  WICK_CHECK(work != nullptr, "Future::of: the Work is null; pass the handle a collective returned");
  std::shared_ptr<Future> f(new Future());
  f->work_ = std::move(work);
  f->value_ = std::move(value);
  return f;
}

std::shared_ptr<Future> Future::then(std::function<Tensor(const Tensor&)> fn) {
  WICK_CHECK(static_cast<bool>(fn), "Future::then: the continuation is empty; pass a function of the value");
  std::shared_ptr<Future> f(new Future());
  f->parent_ = shared_from_this();
  f->fn_ = std::move(fn);
  return f;
}

Tensor Future::wait() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!done_) {
    try {
      if (work_) {
        work_->wait();
      } else {
        // A then() future: its parent first, then the continuation, here and once.
        value_ = fn_(parent_->wait());
      }
    } catch (...) {
      error_ = std::current_exception();
    }
    done_ = true;
    work_.reset();  // neither is needed again; drop what they hold
    parent_.reset();
    fn_ = nullptr;
  }
  if (error_) std::rethrow_exception(error_);
  return value_;
}

bool Future::is_completed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (done_) return true;
  return work_ != nullptr && work_->is_completed();
}

GradBucket::GradBucket(int64_t index, int64_t bucket_count, Tensor buffer, std::vector<Tensor> parameters,
                       std::vector<int64_t> offsets, CollectiveTag tag)
    : index_(index),
      bucket_count_(bucket_count),
      buffer_(std::move(buffer)),
      parameters_(std::move(parameters)),
      offsets_(std::move(offsets)),
      tag_(tag) {
  WICK_CHECK(index_ >= 0 && index_ < bucket_count_, "GradBucket: index {} is outside [0, {}) (the bucket count)",
             index_, bucket_count_);
  WICK_CHECK(buffer_.defined() && buffer_.dim() == 1 && buffer_.is_contiguous(),
             "GradBucket: the buffer must be a defined, contiguous 1-d tensor; got {}",
             buffer_.defined() ? "shape " + detail::shape_of(buffer_) : std::string("an undefined tensor"));
  WICK_CHECK(offsets_.size() == parameters_.size(), "GradBucket: {} offsets for {} parameters; pass one per parameter",
             offsets_.size(), parameters_.size());
  for (size_t k = 0; k < parameters_.size(); ++k) {
    const int64_t n = parameters_[k].numel();
    WICK_CHECK(offsets_[k] >= 0 && offsets_[k] <= buffer_.numel() && n <= buffer_.numel() - offsets_[k],
               "GradBucket: parameter {} ({} elements) at offset {} does not fit in the buffer of {} elements", k, n,
               offsets_[k], buffer_.numel());
  }
}

std::vector<Tensor> GradBucket::gradients() const {
  std::vector<Tensor> out;
  out.reserve(parameters_.size());
  for (size_t k = 0; k < parameters_.size(); ++k)
    out.push_back(buffer_.narrow(0, offsets_[k], parameters_[k].numel()).view(parameters_[k].sizes()));
  return out;
}

}  // namespace wick::distributed
