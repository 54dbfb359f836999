// inplace_unique_group_indices_ref.cpp - CPU reference of
// inplace_unique_group_indices (spec §1.13): per row, repeated ids -> -1.
#include "moe/check.h"
#include "moe/reference.h"

namespace tilejit::moe {

void inplace_unique_group_indices_ref(HostTensor &group_indices,
                                      int64_t num_groups) {
  constexpr std::string_view fn = "inplace_unique_group_indices_ref";
  detail::check_tensor(fn, "group_indices", group_indices, DType::i64, 2);
  if (num_groups < 1 || num_groups > 128)
    detail::fail(fn, "argument 'num_groups' is {}; requires 1 to 128",
                 num_groups);
  // The original keeps a 128-bit mask per row and device-asserts ids below
  // align(num_groups, 64); we reject the same ids.
  const int64_t limit = detail::align(num_groups, 64);
  const int64_t rows = group_indices.size(0), cols = group_indices.size(1);
  int64_t *v = group_indices.data<int64_t>();
  for (int64_t i = 0; i < rows * cols; ++i)
    if (v[i] >= limit)
      detail::fail(fn,
                   "argument 'group_indices' holds {} at [{}, {}]; "
                   "requires ids below align(num_groups, 64) = {}",
                   v[i], i / cols, i % cols, limit);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<bool> seen(limit, false);
    for (int64_t k = 0; k < cols; ++k) {
      int64_t &id = v[r * cols + k];
      // Every negative id stays as it is and is never de-duplicated: the
      // original's behaviour (spec §7.10), where the torch reference would
      // also merge repeated negatives other than -1.
      if (id < 0)
        continue;
      if (seen[id])
        id = -1;
      else
        seen[id] = true;
    }
  }
}

} // namespace tilejit::moe
