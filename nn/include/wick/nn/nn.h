#pragma once
// Everything in wick::nn except optimizers, data and checkpoint files: Module, Value, the
// layers, nn::functional (alias nn::F), nn::init and nn::utils (gradient clipping, parameter
// vectors), checkpoint_sequential.
#include "wick/core/generator.h"
#include "wick/nn/checkpoint_sequential.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/dot.h"
#include "wick/nn/functional.h"
#include "wick/nn/init.h"
#include "wick/nn/module.h"
#include "wick/nn/modules/activation.h"
#include "wick/nn/modules/adaptive.h"       // AdaptiveLogSoftmaxWithLoss
#include "wick/nn/modules/alpha_dropout.h"  // AlphaDropout, FeatureAlphaDropout
#include "wick/nn/modules/attention.h"
#include "wick/nn/modules/batchnorm.h"
#include "wick/nn/modules/bilinear.h"
#include "wick/nn/modules/container.h"
#include "wick/nn/modules/conv.h"
#include "wick/nn/modules/conv1d.h"
#include "wick/nn/modules/conv3d.h"
#include "wick/nn/modules/conv_transpose.h"
#include "wick/nn/modules/cross_map_lrn2d.h"
#include "wick/nn/modules/distance.h"
#include "wick/nn/modules/dropout.h"
#include "wick/nn/modules/embedding.h"
#include "wick/nn/modules/embedding_bag.h"
#include "wick/nn/modules/fold.h"
#include "wick/nn/modules/fractional_max_pool.h"  // FractionalMaxPool2d, FractionalMaxPool3d
#include "wick/nn/modules/functional_module.h"    // Functional, ChannelShuffle
#include "wick/nn/modules/instancenorm.h"
#include "wick/nn/modules/linear.h"
#include "wick/nn/modules/loss.h"
#include "wick/nn/modules/loss_ctc.h"  // CTCLoss, TripletMarginWithDistanceLoss
#include "wick/nn/modules/loss_more.h"
#include "wick/nn/modules/norm_base.h"
#include "wick/nn/modules/normalization.h"
#include "wick/nn/modules/parameter_containers.h"  // ParameterList, ParameterDict
#include "wick/nn/modules/pooling.h"
#include "wick/nn/modules/pooling1d.h"
#include "wick/nn/modules/pooling3d.h"
#include "wick/nn/modules/pooling_lp_unpool.h"
#include "wick/nn/modules/resize.h"
#include "wick/nn/modules/rnn.h"
#include "wick/nn/modules/rnn_cell.h"
#include "wick/nn/modules/shrink.h"  // Hardshrink, Softshrink, RReLU
#include "wick/nn/modules/softmax2d.h"
#include "wick/nn/modules/transformer.h"
#include "wick/nn/modules/transformer_decoder.h"
#include "wick/nn/modules/transformer_model.h"
#include "wick/nn/utils.h"
#include "wick/nn/value.h"
