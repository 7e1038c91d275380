#pragma once
// wick::data: the IDX reader (MNIST / Fashion-MNIST) and the batch loader.
#include "wick/nn/data/batches.h"
#include "wick/nn/data/idx.h"
// LibTorch's torch::data API: datasets, transforms, samplers, make_data_loader.
#include "wick/nn/data/data_loader.h"
#include "wick/nn/data/data_loader_options.h"
#include "wick/nn/data/dataset.h"
#include "wick/nn/data/distributed_sampler.h"
#include "wick/nn/data/example.h"
#include "wick/nn/data/map_dataset.h"
#include "wick/nn/data/mnist.h"
#include "wick/nn/data/normalize.h"
#include "wick/nn/data/random_sampler.h"
#include "wick/nn/data/sampler.h"
#include "wick/nn/data/sequential_sampler.h"
#include "wick/nn/data/stack.h"
#include "wick/nn/data/tensor_dataset.h"
#include "wick/nn/data/transform.h"
