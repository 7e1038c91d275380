#pragma once
// wick::optim: optimizers (SGD, Adam, AdamW) and learning-rate schedulers (StepLR,
// CosineAnnealingLR). See docs/training.md.
#include "wick/nn/optim/adam.h"
#include "wick/nn/optim/lr_scheduler.h"
#include "wick/nn/optim/optimizer.h"
#include "wick/nn/optim/sgd.h"
