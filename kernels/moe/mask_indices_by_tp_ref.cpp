// mask_indices_by_tp_ref.cpp - CPU reference of mask_indices_by_tp (spec
// §1.12): the EP/TP renumbering of top2_sum_gate's step 8, on a tensor.
#include "moe/check.h"
#include "moe/reference.h"
#include "moe/routing.h"

namespace tilejit::moe {

HostTensor mask_indices_by_tp_ref(const HostTensor &indices, int64_t n,
                                  int64_t num_ep_ranks, int64_t tp_rank,
                                  int64_t num_tp_ranks) {
  constexpr std::string_view fn = "mask_indices_by_tp_ref";
  if (indices.dtype() != DType::i32 && indices.dtype() != DType::i64)
    detail::fail(fn, "argument 'indices' has dtype {}; requires i32 or i64",
                 name_of(indices.dtype()));
  detail::check_rank(fn, "indices", indices, 2);
  detail::check_contiguous(fn, "indices", indices);
  if (num_ep_ranks < 1)
    detail::fail(fn, "argument 'num_ep_ranks' is {}; requires >= 1",
                 num_ep_ranks);
  // n // num_ep_ranks == 0 would divide by zero.
  if (n < num_ep_ranks)
    detail::fail(fn,
                 "argument 'n' is {}; requires at least num_ep_ranks = {} "
                 "(one or more experts per rank)",
                 n, num_ep_ranks);
  if (num_tp_ranks < 1)
    detail::fail(fn, "argument 'num_tp_ranks' is {}; requires >= 1",
                 num_tp_ranks);
  if (tp_rank < 0 || tp_rank >= num_tp_ranks)
    detail::fail(fn,
                 "argument 'tp_rank' is {}; requires 0 <= tp_rank < "
                 "num_tp_ranks = {}",
                 tp_rank, num_tp_ranks);
  const int64_t per_gpu = n / num_ep_ranks;
  HostTensor masked = HostTensor::zeros(indices.dtype(), indices.shape());
  for (int64_t i = 0; i < indices.numel(); ++i) {
    if (indices.dtype() == DType::i64)
      masked.data<int64_t>()[i] = detail::mask_index_by_tp(
          indices.data<int64_t>()[i], per_gpu, tp_rank, num_tp_ranks);
    else
      masked.data<int32_t>()[i] = static_cast<int32_t>(detail::mask_index_by_tp(
          indices.data<int32_t>()[i], per_gpu, tp_rank, num_tp_ranks));
  }
  return masked;
}

} // namespace tilejit::moe
