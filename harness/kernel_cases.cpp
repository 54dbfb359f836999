// kernel_cases.cpp - An op's cases narrowed to one a distinct set of kernels
// (kernel_cases.h).
#include "kernel_cases.h"

#include "run.h"

#include "tilejit/error.h"

#include <map>
#include <string>

namespace tilejit::harness {

std::vector<Case> one_case_per_kernels(const ops::OpDef &op,
                                       const std::vector<Case> &cases) {
  // Per list of keys: the chosen case's index and its cost, (whether a
  // tensor is empty, bytes): a case of empty tensors may launch nothing.
  using Cost = std::pair<bool, int64_t>;
  std::map<std::string, std::pair<size_t, Cost>> chosen;
  std::vector<bool> keep(cases.size(), false);
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string keys;
    Cost cost{false, 0};
    try {
      const Resolved r = resolve(op, cases[i]);
      std::vector<rt::TensorView> storage;
      const ops::Call call = bind_for_compile(r, storage);
      for (int k = 0; k < op.kernel_count; ++k)
        keys += op.key(call, k).canonical() + "\n";
      for (size_t t = 0; t < r.tensors.size(); ++t) {
        if (r.absent[t])
          continue;
        const int64_t elements = extent(r.tensors[t]);
        cost.first = cost.first || elements == 0;
        cost.second += elements * size_of(r.tensors[t].dtype);
      }
    } catch (const Error &) {
      keep[i] = true;
      continue;
    }
    auto [it, added] = chosen.try_emplace(keys, i, cost);
    if (!added && cost < it->second.second)
      it->second = {i, cost};
  }
  for (const auto &[keys, pick] : chosen)
    keep[pick.first] = true;
  std::vector<Case> out;
  for (size_t i = 0; i < cases.size(); ++i)
    if (keep[i])
      out.push_back(cases[i]);
  return out;
}

} // namespace tilejit::harness
