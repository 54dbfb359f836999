"""tilejit.tile_kernels.moe.group_count on the GPU against torch.bincount of
the ids that are not -1; the counts allocated uninitialised (the op zeroes
them)."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal


@pytest.mark.parametrize("num_tokens", [4001, 8001])
@pytest.mark.parametrize("num_topk", [2, 6, 8, 9])
@pytest.mark.parametrize("num_groups", [1, 4, 9, 32, 72, 256, 384])
def test_group_count(num_tokens, num_topk, num_groups):
    ids = torch.randint(-1, num_groups, (num_tokens, num_topk),
                        device="cuda")
    want = torch.bincount(ids[ids >= 0], minlength=num_groups).int()
    assert_equal(tk.moe.group_count(ids, num_groups), want)


def test_group_count_twice_into_fresh_memory():
    ids = torch.randint(-1, 32, (21760, 8), device="cuda")
    first = tk.moe.group_count(ids, 32)
    assert_equal(tk.moe.group_count(ids, 32), first)
    assert int(first.sum()) == int((ids >= 0).sum())
