// index_select by whole-slice copies (Note [Slice copies for index_select],
// core/src/cpu/cpu_backend.cpp): the same values as the element-by-element walk that a
// non-contiguous input takes, along every dim, at every budget, with or without a lender.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <vector>

#include "support/allclose.h"
#include "support/idle_worker.h"

using namespace wick;
using wick::test::ResetBudgets;
using wick::test::values;

TEST_CASE("index_select slice copies: the values of the general walk, along every dim") {
  ResetBudgets reset;
  manual_seed(21);
  // Slices along dim 0: 3 x 40 x 8 bytes; along dim 1: 40 x 8 x 8 bytes (each >= 256 bytes);
  // along dim 2: 8 bytes (the general walk either way).
  const Tensor x = randn({50, 3, 40}, kFloat64);
  // The same values in a non-contiguous tensor: index_select walks it element by element.
  const Tensor strided = x.permute({2, 0, 1}).contiguous().permute({1, 2, 0});
  REQUIRE_FALSE(strided.is_contiguous());
  REQUIRE(values(strided) == values(x));
  const std::vector<Tensor> indices{tensor<int64_t>({49, 0, 7, 7, 23, 1}, {6}), tensor<int64_t>({2, 0, 2, 1}, {4}),
                                    tensor<int64_t>({39, 0, 7, 7, 23, 1}, {6})};
  for (int64_t dim : {0, 1, 2}) {
    INFO("dim " << dim);
    const Tensor& index = indices[static_cast<size_t>(dim)];
    const Tensor fast = x.index_select(dim, index);
    CHECK(values(fast) == values(strided.index_select(dim, index)));
    // Hand-checked: slice k of the output is slice index[k] of the input.
    for (int64_t k = 0; k < index.numel(); ++k)
      CHECK(values(fast.select(dim, k)) == values(x.select(dim, index[k].item<int64_t>())));
  }
  // A strided index (every other element of a longer one) and a 0-d index.
  const Tensor every_other = tensor<int64_t>({3, -1, 9, -1, 0, -1}, {6}).slice(0, 0, 6, 2);
  CHECK(values(x.index_select(0, every_other)) == values(strided.index_select(0, every_other)));
  const Tensor one = tensor<int64_t>({4}, {1}).view({});
  CHECK(values(x.index_select(0, one)) == values(x.select(0, 4).unsqueeze(0)));
}

TEST_CASE("index_select slice copies: the same values at every budget, with or without a lender") {
  ResetBudgets reset;
  manual_seed(22);
  const Tensor data = randn({3000, 784});
  const Tensor perm = argsort(rand({3000}));
  const std::vector<double> one = values(data.index_select(0, perm));
  for (int budget : {1, 2, 3})
    for (bool lender : {false, true}) {
      INFO("budget " << budget << (lender ? ", lender" : ""));
      CHECK(values(wick::test::with_budget(budget, lender, [&] { return data.index_select(0, perm); })) == one);
    }
}
