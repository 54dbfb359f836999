"""tilejit.tile_kernels.moe.inplace_unique_group_indices on the GPU, in
place, against TileKernels' own torch formulation: per row, a stable sort,
repeats of the previous sorted id made -1, scattered back (negative ids
left as they are)."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal


def torch_unique(ids):
    sorted_ids, order = torch.sort(ids, dim=1, stable=True)
    repeat = torch.zeros_like(sorted_ids, dtype=torch.bool)
    repeat[:, 1:] = (sorted_ids[:, 1:] == sorted_ids[:, :-1]) & \
        (sorted_ids[:, 1:] >= 0)
    out = ids.clone()
    out.scatter_(1, order, torch.where(repeat, -1, sorted_ids))
    return out


@pytest.mark.parametrize("num_tokens", [4001, 8001])
@pytest.mark.parametrize("num_topk", [2, 6, 8, 9])
@pytest.mark.parametrize("num_groups", [8, 16, 72])
def test_inplace_unique_group_indices(num_tokens, num_topk, num_groups):
    ids = torch.randint(-1, num_groups, (num_tokens, num_topk),
                        device="cuda")
    want = torch_unique(ids)
    assert tk.moe.inplace_unique_group_indices(ids, num_groups) is None
    assert_equal(ids, want)
