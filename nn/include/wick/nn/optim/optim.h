#pragma once
// wick::optim: optimizers (SGD, Adam, AdamW, RMSprop, Adagrad) and learning-rate schedulers
// (StepLR, CosineAnnealingLR, ExponentialLR, MultiStepLR, LinearLR, LambdaLR, ReduceLROnPlateau;
// lr_scheduler.h). SGD, Adam and AdamW run one fused pass per device where the
// backend has the kernel; RMSprop and Adagrad always run as tensor ops. See docs/training.md.
#include "wick/nn/optim/adagrad.h"
#include "wick/nn/optim/adam.h"
#include "wick/nn/optim/lr_scheduler.h"
#include "wick/nn/optim/optimizer.h"
#include "wick/nn/optim/rmsprop.h"
#include "wick/nn/optim/sgd.h"
