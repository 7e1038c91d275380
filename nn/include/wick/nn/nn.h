#pragma once
// Everything in wick::nn except optimizers, data and checkpoint files: Module, Value, the
// layers, nn::functional (alias nn::F) and nn::init.
#include "wick/core/generator.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/dot.h"
#include "wick/nn/functional.h"
#include "wick/nn/init.h"
#include "wick/nn/module.h"
#include "wick/nn/modules/activation.h"
#include "wick/nn/modules/batchnorm.h"
#include "wick/nn/modules/container.h"
#include "wick/nn/modules/conv.h"
#include "wick/nn/modules/dropout.h"
#include "wick/nn/modules/embedding.h"
#include "wick/nn/modules/linear.h"
#include "wick/nn/modules/normalization.h"
#include "wick/nn/modules/pooling.h"
#include "wick/nn/value.h"
