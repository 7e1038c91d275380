#pragma once
// The oracle's cases of the tensor API of issue 14 (tests/data/generate.py, tensor_api_cases),
// by op name; tests/autograd/oracle_test.cpp dispatches them with the Foundation ops.
#include <wick/wick.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "support/oracle.h"

namespace wick::test {

using OracleOpFn = std::function<Tensor(const std::vector<Tensor>&, const OracleCase&)>;

const std::map<std::string, OracleOpFn>& tensor_api_ops();

}  // namespace wick::test
