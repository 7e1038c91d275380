#include "oracle_tensor_api.h"

#include <catch2/catch.hpp>
#include <limits>
#include <optional>
#include <tuple>

namespace wick::test {

namespace {
std::vector<int64_t> ints(const OracleCase& c, const char* key) { return c.kwargs.at(key).get<std::vector<int64_t>>(); }
bool bool_kw(const OracleCase& c, const char* key) { return c.kwargs.at(key).get<bool>(); }
double p_kw(const OracleCase& c) {
  const auto& p = c.kwargs.at("p");
  return p.is_string() ? std::numeric_limits<double>::infinity() : p.get<double>();
}
Tensor positive(const Tensor& t, const OracleCase& c, const char* key) {
  REQUIRE(c.kwargs.at(key).get<std::string>().find("> 0") != std::string::npos);
  return t.gt(0);
}
}  // namespace

const std::map<std::string, OracleOpFn>& tensor_api_ops() {
  using X = std::vector<Tensor>;
  static const std::map<std::string, OracleOpFn> ops = {
      {"isnan", [](const X& x, const OracleCase&) { return isnan(x[0]); }},
      {"isinf", [](const X& x, const OracleCase&) { return isinf(x[0]); }},
      {"isfinite", [](const X& x, const OracleCase&) { return isfinite(x[0]); }},
      {"all",
       [](const X& x, const OracleCase& c) {
         return c.kwargs.contains("dim") ? all(x[0], ikw(c, "dim"), c.kw("keepdim", false)) : all(x[0]);
       }},
      {"any",
       [](const X& x, const OracleCase& c) {
         return c.kwargs.contains("dim") ? any(x[0], ikw(c, "dim"), c.kw("keepdim", false)) : any(x[0]);
       }},
      {"max_all", [](const X& x, const OracleCase&) { return max(x[0]); }},
      {"min_all", [](const X& x, const OracleCase&) { return x[0].min(); }},
      {"var_all", [](const X& x, const OracleCase&) { return x[0].var(); }},
      {"std_all", [](const X& x, const OracleCase&) { return wick::std(x[0]); }},
      {"std",
       [](const X& x, const OracleCase& c) {
         return wick::std(x[0], ints(c, "dim"), c.kw("unbiased", true), c.kw("keepdim", false));
       }},
      {"var_correction",
       [](const X& x, const OracleCase& c) {
         return var(x[0], ints(c, "dim"), std::optional<int64_t>(ikw(c, "correction")), c.kw("keepdim", false));
       }},
      {"std_correction",
       [](const X& x, const OracleCase& c) {
         return wick::std(x[0], ints(c, "dim"), std::optional<int64_t>(ikw(c, "correction")),
                          c.kw("keepdim", false));
       }},
      {"norm",
       [](const X& x, const OracleCase& c) {
         const auto d = ints(c, "dim");
         return d.empty() ? norm(x[0], p_kw(c)) : x[0].norm(p_kw(c), d, c.kw("keepdim", false));
       }},
      {"cumsum", [](const X& x, const OracleCase& c) { return cumsum(x[0], ikw(c, "dim")); }},
      {"where_scalar_other",
       [](const X& x, const OracleCase& c) { return where(positive(x[0], c, "cond"), x[1], dkw(c, "other")); }},
      {"where_scalar_input",
       [](const X& x, const OracleCase& c) { return where(positive(x[0], c, "cond"), dkw(c, "input"), x[1]); }},
      {"masked_fill",
       [](const X& x, const OracleCase& c) { return x[0].masked_fill(positive(x[1], c, "mask"), dkw(c, "value")); }},
      {"masked_fill_tensor",
       [](const X& x, const OracleCase& c) { return masked_fill(x[0], positive(x[1], c, "mask"), x[2]); }},
      {"tril", [](const X& x, const OracleCase& c) { return tril(x[0], ikw(c, "diagonal")); }},
      {"triu", [](const X& x, const OracleCase& c) { return x[0].triu(ikw(c, "diagonal")); }},
      {"bmm", [](const X& x, const OracleCase&) { return bmm(x[0], x[1]); }},
      {"baddbmm", [](const X& x,
                     const OracleCase& c) { return baddbmm(x[0], x[1], x[2], dkw(c, "beta"), dkw(c, "alpha")); }},
      {"addmm",
       [](const X& x, const OracleCase& c) { return addmm(x[0], x[1], x[2], dkw(c, "beta"), dkw(c, "alpha")); }},
      {"outer", [](const X& x, const OracleCase&) { return outer(x[0], x[1]); }},
      {"dot", [](const X& x, const OracleCase&) { return x[0].dot(x[1]); }},
      {"sort_values",
       [](const X& x, const OracleCase& c) {
         return std::get<0>(sort(x[0], ikw(c, "dim"), c.kw("descending", false)));
       }},
      {"sort_indices",
       [](const X& x, const OracleCase& c) {
         return std::get<1>(sort(x[0], true, ikw(c, "dim"), c.kw("descending", false)));
       }},
      {"argsort",
       [](const X& x, const OracleCase& c) { return argsort(x[0], ikw(c, "dim"), c.kw("descending", false)); }},
      {"topk_values",
       [](const X& x, const OracleCase& c) {
         return std::get<0>(topk(x[0], ikw(c, "k"), ikw(c, "dim"), c.kw("largest", true)));
       }},
      {"topk_indices",
       [](const X& x, const OracleCase& c) {
         return std::get<1>(x[0].topk(ikw(c, "k"), ikw(c, "dim"), c.kw("largest", true)));
       }},
      {"repeat", [](const X& x, const OracleCase& c) { return repeat(x[0], ints(c, "repeats")); }},
      {"flip", [](const X& x, const OracleCase& c) { return flip(x[0], ints(c, "dims")); }},
      {"roll", [](const X& x, const OracleCase& c) { return roll(x[0], ints(c, "shifts"), ints(c, "dims")); }},
      {"diag", [](const X& x, const OracleCase& c) { return diag(x[0], ikw(c, "diagonal")); }},
      {"unbind",
       [](const X& x, const OracleCase& c) {
         return unbind(x[0], ikw(c, "dim")).at(static_cast<size_t>(ikw(c, "index")));
       }},
      {"silu", [](const X& x, const OracleCase&) { return silu(x[0]); }},
      {"one_hot", [](const X& x, const OracleCase& c) { return one_hot(x[0], ikw(c, "num_classes")); }},
      {"isclose",
       [](const X& x, const OracleCase& c) {
         REQUIRE(c.kwargs.at("b").get<std::string>() == "in0 + in1");
         return isclose(x[0], x[0] + x[1], dkw(c, "rtol"), dkw(c, "atol"));
       }},
      // generate.py's remaining_ops_cases
      {"pow_tensor", [](const X& x, const OracleCase&) { return pow(x[0], x[1]); }},
      {"mm", [](const X& x, const OracleCase&) { return mm(x[0], x[1]); }},
      {"index_add", [](const X& x, const OracleCase& c) { return index_add(x[0], ikw(c, "dim"), x[1], x[2]); }},
      {"scatter_add",
       [](const X& x, const OracleCase& c) { return scatter_add(x[0], ikw(c, "dim"), x[1], x[2]); }},
      {"argmin", [](const X& x, const OracleCase& c) { return argmin(x[0], ikw(c, "dim"), bool_kw(c, "keepdim")); }},
      {"max_dim_values",
       [](const X& x, const OracleCase& c) { return std::get<0>(max(x[0], ikw(c, "dim"), bool_kw(c, "keepdim"))); }},
      {"max_dim_indices",
       [](const X& x, const OracleCase& c) { return std::get<1>(max(x[0], ikw(c, "dim"), bool_kw(c, "keepdim"))); }},
      {"min_dim_values",
       [](const X& x, const OracleCase& c) { return std::get<0>(min(x[0], ikw(c, "dim"), bool_kw(c, "keepdim"))); }},
      {"min_dim_indices",
       [](const X& x, const OracleCase& c) { return std::get<1>(min(x[0], ikw(c, "dim"), bool_kw(c, "keepdim"))); }},
      {"eq", [](const X& x, const OracleCase&) { return eq(x[0], x[1]); }},
      {"ne", [](const X& x, const OracleCase&) { return ne(x[0], x[1]); }},
      {"lt", [](const X& x, const OracleCase&) { return lt(x[0], x[1]); }},
      {"le", [](const X& x, const OracleCase&) { return le(x[0], x[1]); }},
      {"gt", [](const X& x, const OracleCase&) { return gt(x[0], x[1]); }},
      {"ge", [](const X& x, const OracleCase&) { return ge(x[0], x[1]); }},
      {"logical_or",
       [](const X& x, const OracleCase& c) { return logical_or(positive(x[0], c, "a"), positive(x[1], c, "b")); }},
      {"logical_not", [](const X& x, const OracleCase& c) { return logical_not(positive(x[0], c, "a")); }},
      {"select", [](const X& x, const OracleCase& c) { return select(x[0], ikw(c, "dim"), ikw(c, "index")); }},
      {"squeeze",
       [](const X& x, const OracleCase& c) {
         return c.kwargs.contains("all") ? squeeze(x[0]) : squeeze(x[0], ikw(c, "dim"));
       }},
      {"unsqueeze", [](const X& x, const OracleCase& c) { return unsqueeze(x[0], ikw(c, "dim")); }},
      {"flatten",
       [](const X& x, const OracleCase& c) { return flatten(x[0], ikw(c, "start_dim"), ikw(c, "end_dim")); }},
      {"slice",
       [](const X& x, const OracleCase& c) {
         const std::optional<int64_t> end =
             c.kwargs.contains("end") ? std::optional<int64_t>(ikw(c, "end")) : std::nullopt;
         return slice(x[0], ikw(c, "dim"), ikw(c, "start"), end, ikw(c, "step"));
       }},
  };
  return ops;
}

}  // namespace wick::test
