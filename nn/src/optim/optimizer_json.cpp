// OptimizerStateDict's parameter groups as JSON text (what a checkpoint stores in the safetensors
// metadata; Note [Optimizer state dicts]).
#include <nlohmann/json.hpp>

#include "../json_limits.h"
#include "wick/core/error.h"
#include "wick/nn/loader_limits.h"
#include "wick/nn/optim/optimizer.h"

namespace wick::optim {

std::string OptimizerStateDict::groups_json() const {
  nlohmann::ordered_json j;
  j["optimizer"] = optimizer;
  j["param_groups"] = nlohmann::ordered_json::array();
  for (const auto& g : param_groups) {
    nlohmann::ordered_json gj;
    gj["params"] = g.params;
    for (const auto& [k, v] : g.options) gj[k] = v;
    j["param_groups"].push_back(gj);
  }
  return j.dump();
}

void OptimizerStateDict::set_groups_json(const std::string& text) {
  // Depth-limited: this JSON comes from a file (Note [Loader limits]).
  const nlohmann::ordered_json j = serialize::detail::parse_json_limited(text, "optimizer state: the parameter groups");
  WICK_CHECK_FORMAT(j.is_object() && j.contains("optimizer") && j["optimizer"].is_string() &&
                        j.contains("param_groups") && j["param_groups"].is_array(),
                    "optimizer state: expected {{\"optimizer\": <name>, \"param_groups\": [...]}}, got {}",
                    serialize::detail::json_preview(j));
  std::vector<ParamGroupState> groups;
  for (const auto& gj : j["param_groups"]) {
    WICK_CHECK_FORMAT(gj.is_object() && gj.contains("params") && gj["params"].is_array(),
                      "optimizer state: each parameter group must be an object with a \"params\" list");
    ParamGroupState g;
    for (const auto& id : gj["params"]) {
      WICK_CHECK_FORMAT(
          id.is_number_integer() && !(id.is_number_unsigned() && id.get<uint64_t>() > uint64_t{INT64_MAX}),
          "optimizer state: parameter numbers must be integers that fit in int64");
      g.params.push_back(id.get<int64_t>());
    }
    for (const auto& [k, v] : gj.items()) {
      if (k == "params") continue;
      WICK_CHECK_FORMAT(v.is_number() || v.is_boolean(), "optimizer state: option \"{}\" must be a number, got {}",
                        serialize::detail::quote_prefix(k, serialize::kMaxQuotedChars),
                        serialize::detail::json_preview(v));
      g.options.emplace_back(k, v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>());
    }
    groups.push_back(std::move(g));
  }
  optimizer = j["optimizer"].get<std::string>();
  param_groups = std::move(groups);
}

}  // namespace wick::optim
