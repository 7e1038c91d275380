#pragma once
// wick::nn::utils (LibTorch's torch/nn/utils.h): gradient clipping, parameter vectors
// and packed sequences (utils::rnn).
#include "wick/nn/utils/clip_grad.h"
#include "wick/nn/utils/convert_parameters.h"
#include "wick/nn/utils/rnn.h"
