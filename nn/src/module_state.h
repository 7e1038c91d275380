#pragma once
// Internal: Module::load_state_dict with the tensors of a file that wick cannot hold (Note
// [Unsupported safetensors dtypes] in wick/nn/safetensors.h), for the checkpoint loaders.
#include <vector>

#include "wick/nn/module.h"
#include "wick/nn/safetensors.h"

namespace wick::nn::detail {

/// m.load_state_dict(dict, strict), where `unsupported` are more keys of the file whose tensors
/// wick cannot hold (their names differ from dict's): a key `m` has is a dtype mismatch (a
/// TypeError naming the key, its dtype and wick's dtypes, unless a worse problem makes it a
/// ValueError); a key it lacks is an unexpected key (returned with strict = false; named with
/// its dtype in the IndexError with strict = true). All checks run before anything is copied.
LoadStateDictResult load_state_dict_with_unsupported(Module& m, const StateDict& dict, bool strict,
                                                     const std::vector<serialize::UnsupportedTensor>& unsupported);

}  // namespace wick::nn::detail
