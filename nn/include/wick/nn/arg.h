#pragma once
// WICK_ARG: one field of a layer's options struct with a chained setter, as LibTorch's TORCH_ARG.
//
//   struct LinearOptions {
//     LinearOptions(int64_t in_features, int64_t out_features);
//     WICK_ARG(int64_t, in_features);
//     WICK_ARG(bool, bias) = true;
//   };
//   LinearOptions(3, 4).bias(false).bias()  // false
//
// `name(value)` sets the field and returns the options (so setters chain); `name()` reads it.

#define WICK_ARG(T, name)                                         \
 public:                                                          \
  inline auto name(T new_##name)->decltype(*this) {               \
    this->name##_ = std::move(new_##name);                        \
    return *this;                                                 \
  }                                                               \
  inline const T& name() const noexcept { return this->name##_; } \
                                                                  \
 private:                                                         \
  T name##_ /* NOLINT */
