#pragma once
// wick::data: the IDX reader (MNIST / Fashion-MNIST) and the batch loader.
#include "wick/nn/data/batches.h"
#include "wick/nn/data/idx.h"
