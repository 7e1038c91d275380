#pragma once
// Writing text with the character-level GPT (examples/char_gpt.cpp): one character at a time,
// each drawn from the model's distribution for the next character given the last block_size
// characters, sharpened by a temperature and cut to the k likeliest.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "char_gpt_model.h"
#include "char_gpt_text.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"

namespace char_gpt {

struct SampleOptions {
  double temperature = 0.8;  ///< > 0; logits are divided by it
  int64_t top_k = 0;         ///< 0: every character; else the k likeliest (k larger than the vocabulary: all)
};

/// `n` characters following `prompt` (empty: a new fortune, as after a "%" line), drawn with the
/// global generator (the same after the same manual_seed). The model runs on its own device,
/// in eval mode, without gradients. wick::ValueError when the prompt holds a character outside
/// the vocabulary or the temperature is not positive.
inline std::string sample(GptImpl& model, const Vocabulary& vocab, const std::string& prompt, int64_t n,
                          const SampleOptions& options) {
  if (!(options.temperature > 0))
    throw wick::ValueError(fmt::format("sample: the temperature must be positive, not {}", options.temperature));
  for (char c : prompt)
    if (!vocab.contains(c))
      throw wick::ValueError(
          fmt::format("sample: the prompt holds '{}' (byte {}), which is not among the {} characters the model knows",
                      c, static_cast<int>(static_cast<unsigned char>(c)), vocab.size()));
  const std::string start = prompt.empty() ? std::string(vocab.contains('%') ? "%\n" : "\n") : prompt;
  std::vector<int64_t> context = vocab.encode(start);
  if (context.empty()) context.push_back(0);
  const wick::Device device = model.parameters().front().device();
  const int64_t block = model.config.block_size;
  const int64_t k = options.top_k > 0 ? std::min(options.top_k, vocab.size()) : vocab.size();
  wick::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  std::string out;
  for (int64_t i = 0; i < n; ++i) {
    const auto len = std::min<int64_t>(block, static_cast<int64_t>(context.size()));
    const std::vector<int64_t> window(context.end() - len, context.end());
    wick::Tensor logits = model.forward(wick::tensor(window, {1, len}).to(device)).select(0, 0).select(0, len - 1);
    auto [top, index] = logits.div(options.temperature).topk(k);
    const int64_t pick = wick::multinomial(top.softmax(-1), 1).item<int64_t>();
    const int64_t token = index.select(0, pick).item<int64_t>();
    context.push_back(token);
    out.push_back(vocab.chars[static_cast<size_t>(token)]);
  }
  model.train(was_training);
  return out;
}

}  // namespace char_gpt
