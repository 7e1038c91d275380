// Every op of functions.h, one test body on every test device (tests/support/devices.h), compared
// with the same call on cpu:0: forward values and, for differentiable ops, the gradient of every
// input under a random upstream gradient. Two CPU devices run the same kernels, so they must
// agree bit for bit; another device type agrees to rtol 1e-12 in float64 (reductions may sum in
// another order). A last case reads functions.h (and the functions_*.h it includes) and fails on any function that is
// neither in the table nor exempted with a reason, so a new op cannot skip this test silently. The table
// (support/every_device_ops.h) is filled by the every_device_*_test.cpp files, one group of ops each.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/every_device_ops.h"

using namespace wick;
using namespace wick::test::every_device;

namespace {

// Functions of functions.h this test does not call, each with the reason.
const std::map<std::string, std::string>& exempt() {
  static const std::map<std::string, std::string> e = {
      {"empty", "uninitialised memory: no value to compare"},
      {"empty_like", "uninitialised memory: no value to compare"},
      {"from_blob", "wraps host memory: CPU only by definition"},
  };
  return e;
}

// Forward value and input gradients of `c` on `d`.
std::vector<Tensor> run(const OpCase& c, Device d) {
  if (c.make) return {c.make(d)};
  std::vector<Tensor> in = c.inputs(d);
  for (size_t j = 0; j < in.size(); ++j)
    if (j < c.diff.size() && c.diff[j]) in[j] = in[j].detach().requires_grad_(true);
  Tensor out = c.call(in);
  std::vector<Tensor> result = {out};
  std::vector<Tensor> wrt;
  for (size_t j = 0; j < in.size(); ++j)
    if (j < c.diff.size() && c.diff[j]) wrt.push_back(in[j]);
  if (wrt.empty()) return result;
  REQUIRE(out.requires_grad());
  manual_seed(99);
  Tensor upstream = randn(out.sizes(), on(kCPU, out.dtype())).to(d);
  for (Tensor& g : autograd::grad({out}, wrt, {upstream})) result.push_back(g);
  return result;
}

}  // namespace

TEST_CASE("every device: each op of functions.h agrees with cpu:0, forward and backward") {
  for (const auto& [name, c] : every_device_ops()) {
    INFO(name << " on cpu:0");
    const std::vector<Tensor> reference = run(c, kCPU);
    for (const Device& d : test::test_devices()) {
      if (d == kCPU) continue;
      INFO(name << " on " << d);
      const std::vector<Tensor> got = run(c, d);
      REQUIRE(got.size() == reference.size());
      for (size_t k = 0; k < got.size(); ++k) {
        INFO((k == 0 ? std::string("forward") : "gradient " + std::to_string(k - 1)));
        CHECK(got[k].device() == d);
        CHECK(got[k].dtype() == reference[k].dtype());
        if (d.is_cpu()) {
          CHECK_ALLCLOSE(got[k], reference[k], 0.0, 0.0);  // the same kernels: bit for bit
        } else {
          CHECK_ALLCLOSE(got[k], reference[k], 1e-12, 1e-14);
        }
      }
    }
  }
}

TEST_CASE("every device: every function of functions.h is in the table or exempted with a reason") {
  const std::filesystem::path dir =
      std::filesystem::path(WICK_TEST_DATA_DIR) / ".." / ".." / "autograd" / "include" / "wick" / "autograd";
  const auto read = [](const std::filesystem::path& path) {
    std::ifstream in(path);
    REQUIRE(in.good());
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  // functions.h and the parts of the op API it includes (functions_*.h).
  std::string text = read(dir / "functions.h");
  const std::regex part(R"re(#include "wick/autograd/(functions_[a-z_0-9]+\.h)")re");
  const std::string head = text;
  int parts = 0;
  for (auto it = std::sregex_iterator(head.begin(), head.end(), part); it != std::sregex_iterator(); ++it, ++parts)
    text += read(dir / (*it)[1].str());
  CHECK(parts >= 2);
  // A declaration at the start of a line: a return type, then the function's name and '('.
  const std::regex decl(
      R"(\n(?:inline |template <[^>]*>\s*)?(?:Tensor&?|std::vector<Tensor>|std::tuple<[^>]*>|bool) ([a-z_0-9]+)\()");
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), decl); it != std::sregex_iterator(); ++it)
    names.insert((*it)[1].str());
  CHECK(names.size() > 90);
  for (const std::string& n : every_device_duplicate_ops()) FAIL("two every_device_*_test.cpp files add '" << n << "'");
  for (const std::string& n : names) {
    INFO(n);
    if (!every_device_ops().count(n) && !exempt().count(n))
      FAIL("functions.h declares '" << n << "', which tests/autograd/every_device_*_test.cpp neither run nor exempt");
  }
}
