#pragma once
// wick::optim: optimizers (SGD, Adam, AdamW, RMSprop, Adagrad, Adamax, NAdam, RAdam, Rprop, Adadelta, ASGD, LBFGS)
// and learning-rate schedulers (StepLR, CosineAnnealingLR, ExponentialLR, MultiStepLR, LinearLR, LambdaLR,
// MultiplicativeLR, ConstantLR, PolynomialLR, ReduceLROnPlateau: lr_scheduler.h; SequentialLR, ChainedScheduler,
// CosineAnnealingWarmRestarts, OneCycleLR, CyclicLR: their own headers). SGD, Adam and AdamW run one fused pass
// per device where the backend has the kernel; the others always run as tensor ops. See docs/training.md.
#include "wick/nn/optim/adadelta.h"
#include "wick/nn/optim/adagrad.h"
#include "wick/nn/optim/adam.h"
#include "wick/nn/optim/adamax.h"
#include "wick/nn/optim/asgd.h"
#include "wick/nn/optim/chained_scheduler.h"
#include "wick/nn/optim/cosine_warm_restarts.h"
#include "wick/nn/optim/cyclic_lr.h"
#include "wick/nn/optim/lbfgs.h"
#include "wick/nn/optim/lr_scheduler.h"
#include "wick/nn/optim/nadam.h"
#include "wick/nn/optim/one_cycle_lr.h"
#include "wick/nn/optim/optimizer.h"
#include "wick/nn/optim/radam.h"
#include "wick/nn/optim/rmsprop.h"
#include "wick/nn/optim/rprop.h"
#include "wick/nn/optim/sequential_lr.h"
#include "wick/nn/optim/sgd.h"
