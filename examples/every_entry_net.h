#pragma once
// The model of docs/parallel.md section 1, with every kind of table entry replicate handles: a
// shared child (`again` is `block`), a tied parameter (`tied` is `head.weight`), a None buffer
// (`mask`), and buffers (BatchNorm's running statistics). Used by examples/explain_replicate
// and the picture tests (tests/seeing).
#include <memory>

#include "wick/wick.h"

namespace wick::examples {

class EveryEntryNet : public nn::Cloneable<EveryEntryNet> {
 public:
  EveryEntryNet()
      : block(register_module("block", nn::Sequential())),
        head(register_module("head", nn::Linear(4, 2))),
        again(register_module("again", block)) {  // the same child a second time
    block->push_back("fc", nn::Linear(4, 4));
    block->push_back("bn", nn::BatchNorm1d(4));
    scale_ = register_parameter("scale", ones({1}));
    tied_ = register_parameter("tied", head->weight());  // head.weight, registered again
    mask_ = register_buffer("mask", Tensor());           // a None entry
  }
  /// x [N, 4] -> [N, 2]: block twice (the shared child), then head plus the tied weight scaled.
  Tensor forward(const Tensor& x) {
    Tensor h = again(block(x));
    return add(head(h), mul(nn::F::linear(h, param(tied_)), param(scale_)));
  }

  nn::Sequential block;
  nn::Linear head;
  nn::Sequential again;

 private:
  nn::ParamSlot scale_, tied_;
  nn::BufferSlot mask_;
};

/// The small MLP of the tour's DataParallel picture: Linear(3, 4), ReLU, Linear(4, 2).
inline nn::Sequential small_mlp() {
  return nn::Sequential({{"fc1", nn::Linear(3, 4)}, {"act", nn::ReLU()}, {"fc2", nn::Linear(4, 2)}});
}

}  // namespace wick::examples
