// kernel_cases_test.cpp - harness::one_case_per_kernels over every op's GPU
// cases: each distinct list of kernel keys once, by its smallest case (one
// without empty tensors where there is one), in table order.
#include "kernel_cases.h"
#include "run.h"

#include <catch2/catch.hpp>

#include <map>
#include <set>

using namespace tilejit;

namespace {

/// A case's kernel keys (one line each) and its cost: whether a tensor is
/// empty, and the bytes its tensors span.
using Cost = std::pair<bool, int64_t>;
std::pair<std::string, Cost> keys_and_cost(const ops::OpDef &op,
                                           const harness::Case &c) {
  const harness::Resolved r = harness::resolve(op, c);
  std::vector<rt::TensorView> storage;
  const ops::Call call = harness::bind_for_compile(r, storage);
  std::string keys;
  for (int k = 0; k < op.kernel_count; ++k)
    keys += op.key(call, k).canonical() + "\n";
  Cost cost{false, 0};
  for (size_t t = 0; t < r.tensors.size(); ++t) {
    if (r.absent[t])
      continue;
    const int64_t n = harness::extent(r.tensors[t]);
    cost.first = cost.first || n == 0;
    cost.second += n * size_of(r.tensors[t].dtype);
  }
  return {keys, cost};
}

} // namespace

TEST_CASE("one case a distinct set of kernels, the smallest, in table order",
          "[harness]") {
  int narrowed = 0;
  for (const ops::OpDef *op : ops::all_ops()) {
    std::vector<harness::Case> cases;
    for (const harness::Case &c : harness::find_test(op->name)->cases)
      if ((c.kind & harness::Case::gpu) && !(c.kind & harness::Case::big))
        cases.push_back(c);
    const std::vector<harness::Case> kept =
        harness::one_case_per_kernels(*op, cases);
    INFO(op->name);
    // The least cost of each list of keys among all the cases.
    std::map<std::string, Cost> least;
    for (const harness::Case &c : cases) {
      auto [keys, cost] = keys_and_cost(*op, c);
      auto [it, added] = least.try_emplace(keys, cost);
      if (!added)
        it->second = std::min(it->second, cost);
    }
    std::set<std::string> seen;
    size_t at = 0; // kept in table order: each found after the last
    for (const harness::Case &c : kept) {
      auto [keys, cost] = keys_and_cost(*op, c);
      INFO(c.label);
      CHECK(seen.insert(keys).second);
      CHECK(cost == least.at(keys));
      while (at < cases.size() && cases[at].label != c.label)
        ++at;
      CHECK(at < cases.size());
      ++at;
    }
    CHECK(seen.size() == least.size());
    narrowed += kept.size() < cases.size();
  }
  // Some op's cases share kernels (else the narrowing is never exercised).
  CHECK(narrowed > 0);
}
