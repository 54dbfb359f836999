"""tilejit.tile_kernels.moe.mask_indices_by_tp on the GPU, equal to its
op's destination-passing call."""
import pytest
import torch

import tilejit
from tilejit import tile_kernels as tk
from tk_testing import assert_equal, stream


@pytest.mark.parametrize("num_ep_ranks,tp_rank,num_tp_ranks",
                         [(8, 1, 2), (64, 0, 4), (8, 3, 4)])
def test_mask_indices_by_tp(num_ep_ranks, tp_rank, num_tp_ranks):
    ind = torch.randint(-1, 256, (4096, 8), device="cuda")
    masked = tk.moe.mask_indices_by_tp(ind, 256, num_ep_ranks, tp_rank,
                                       num_tp_ranks)
    want = torch.empty_like(ind)
    tilejit.ops.mask_indices_by_tp(ind, want, n=256,
                                   num_ep_ranks=num_ep_ranks,
                                   tp_rank=tp_rank,
                                   num_tp_ranks=num_tp_ranks,
                                   stream=stream())
    assert_equal(masked, want)
