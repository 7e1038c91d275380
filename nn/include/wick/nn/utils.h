#pragma once
// wick::nn::utils (LibTorch's torch/nn/utils.h): gradient clipping and parameter vectors.
#include "wick/nn/utils/clip_grad.h"
#include "wick/nn/utils/convert_parameters.h"
