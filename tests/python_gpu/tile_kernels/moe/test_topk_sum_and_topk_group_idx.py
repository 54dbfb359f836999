"""tilejit.tile_kernels.moe.topk_sum_and_topk_group_idx on the GPU against
TileKernels' torch reference (each group's top num_topk_sum scores summed,
a stable descending sort of the group scores, the first num_topk_groups),
over TileKernels' test matrix, and over scores of few values (ties)."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal


def reference(scores, num_topk_sum, num_topk_groups):
    group = scores.topk(num_topk_sum, dim=-1, sorted=False).values.sum(-1)
    order = torch.sort(group, dim=-1, descending=True, stable=True).indices
    return order[:, :num_topk_groups].contiguous()


@pytest.mark.parametrize("num_tokens", [4001, 8001])
@pytest.mark.parametrize("experts,groups", [(72, 4), (72, 8), (72, 12),
                                            (256, 4), (256, 8), (256, 16)])
@pytest.mark.parametrize("num_topk_sum", [1, 2])
@pytest.mark.parametrize("num_topk_groups", [2, 4])
def test_topk_sum_and_topk_group_idx(num_tokens, experts, groups,
                                     num_topk_sum, num_topk_groups):
    scores = torch.randn(num_tokens, groups, experts // groups,
                         device="cuda")
    got = tk.moe.topk_sum_and_topk_group_idx(scores, num_topk_sum,
                                             num_topk_groups)
    assert_equal(got, reference(scores, num_topk_sum, num_topk_groups))


@pytest.mark.parametrize("num_topk_sum", [1, 2])
def test_ties_go_to_the_lower_group(num_topk_sum):
    scores = torch.randint(0, 3, (4001, 8, 32), device="cuda").float()
    got = tk.moe.topk_sum_and_topk_group_idx(scores, num_topk_sum, 8)
    assert_equal(got, reference(scores, num_topk_sum, 8))
