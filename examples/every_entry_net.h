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
  EveryEntryNet() {
    auto block = std::make_shared<nn::Sequential>();
    block->push_back("fc", std::make_shared<nn::Linear>(4, 4));
    block->push_back("bn", std::make_shared<nn::BatchNorm1d>(4));
    block_ = register_module("block", block);
    head_ = register_module("head", std::make_shared<nn::Linear>(4, 2));
    again_ = register_module("again", block);  // the same child a second time
    scale_ = register_parameter("scale", ones({1}));
    tied_ = register_parameter("tied", child(head_).weight());  // head.weight, registered again
    mask_ = register_buffer("mask", Tensor());                  // a None entry
  }
  /// x [N, 4] -> [N, 2]: block twice (the shared child), then head plus the tied weight scaled.
  Tensor forward(const Tensor& x) {
    Tensor h = child(again_).forward(child(block_).forward(x));
    return add(child(head_).forward(h), mul(nn::F::linear(h, param(tied_)), param(scale_)));
  }

 private:
  nn::ChildSlot<nn::Sequential> block_, again_;
  nn::ChildSlot<nn::Linear> head_;
  nn::ParamSlot scale_, tied_;
  nn::BufferSlot mask_;
};

/// The small MLP of the tour's DataParallel picture: Linear(3, 4), ReLU, Linear(4, 2).
inline std::shared_ptr<nn::Sequential> small_mlp() {
  auto net = std::make_shared<nn::Sequential>();
  net->push_back("fc1", std::make_shared<nn::Linear>(3, 4));
  net->push_back("act", std::make_shared<nn::ReLU>());
  net->push_back("fc2", std::make_shared<nn::Linear>(4, 2));
  return net;
}

}  // namespace wick::examples
