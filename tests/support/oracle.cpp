#include "support/oracle.h"

#include <cstdlib>

#include "wick/autograd/grad.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/nn/safetensors.h"

namespace wick::test {

std::string OracleCase::label() const { return fmt::format("case {} ({}, kwargs {})", id, op, kwargs.dump()); }

std::vector<Tensor> OracleCase::leaves(Device device) const {
  std::vector<Tensor> out;
  for (size_t j = 0; j < inputs.size(); ++j) {
    Tensor t = native::clone(native::to(inputs[j], device, inputs[j].dtype()));
    if (differentiable[j]) t.requires_grad_(true);
    out.push_back(t);
  }
  return out;
}

std::vector<Tensor> OracleCase::backward(const Tensor& out, const std::vector<Tensor>& leaves) const {
  std::vector<Tensor> wrt;
  for (size_t j = 0; j < leaves.size(); ++j)
    if (differentiable[j]) wrt.push_back(leaves[j]);
  std::vector<Tensor> result(leaves.size());
  if (wrt.empty()) return result;
  Tensor g = native::to(gout, out.device(), out.dtype());
  auto gs = autograd::grad({out}, wrt, {g}, std::nullopt, false, /*allow_unused=*/true);
  size_t k = 0;
  for (size_t j = 0; j < leaves.size(); ++j)
    if (differentiable[j]) result[j] = gs[k++];
  return result;
}

std::string oracle_path() {
  if (const char* p = std::getenv("WICK_ORACLE_FILE"); p && *p) return p;
  return std::string(WICK_TEST_DATA_DIR) + "/ops.safetensors";
}

std::vector<OracleCase> load_oracle(const std::string& path) {
  const serialize::SafetensorsData file = serialize::load_safetensors(path);
  auto it = file.metadata.find("cases");
  WICK_CHECK(it != file.metadata.end(), "oracle: {} has no \"cases\" entry in its __metadata__", path);
  const nlohmann::json manifest = nlohmann::json::parse(it->second);
  std::vector<OracleCase> cases;
  for (const auto& m : manifest) {
    OracleCase c;
    c.id = m.at("id").get<int>();
    c.op = m.at("op").get<std::string>();
    c.kwargs = m.value("kwargs", nlohmann::json::object());
    const int n = m.at("inputs").get<int>();
    c.differentiable = m.at("differentiable").get<std::vector<bool>>();
    WICK_CHECK(static_cast<int>(c.differentiable.size()) == n,
               "oracle: case {} lists {} differentiable flags for {} "
               "inputs",
               c.id, c.differentiable.size(), n);
    const std::string p = fmt::format("c{}.", c.id);
    for (int j = 0; j < n; ++j) {
      c.inputs.push_back(file.at(p + fmt::format("in{}", j)));
      c.gin.push_back(c.differentiable[j] ? file.at(p + fmt::format("gin{}", j)) : Tensor());
    }
    c.out = file.at(p + "out");
    c.gout = file.at(p + "gout");
    cases.push_back(std::move(c));
  }
  return cases;
}

const std::vector<OracleCase>& oracle_cases() {
  static const std::vector<OracleCase> cases = load_oracle(oracle_path());
  return cases;
}

}  // namespace wick::test
