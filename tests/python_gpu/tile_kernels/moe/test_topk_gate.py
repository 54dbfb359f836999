"""tilejit.tile_kernels.moe.topk_gate on the GPU: torch.topk's indices where
the scores are distinct (randn's are, almost surely)."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal


@pytest.mark.parametrize("num_tokens", [4001, 8001])
@pytest.mark.parametrize("num_experts", [72, 256])
@pytest.mark.parametrize("num_topk", [2, 6, 8, 9])
def test_topk_gate(num_tokens, num_experts, num_topk):
    scores = torch.randn(num_tokens, num_experts, device="cuda")
    assert_equal(tk.moe.topk_gate(scores, num_topk),
                 torch.topk(scores, num_topk, dim=1).indices)
