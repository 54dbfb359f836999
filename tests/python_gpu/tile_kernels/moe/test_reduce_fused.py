"""tilejit.tile_kernels.moe.reduce_fused on the GPU, equal to its op's
destination-passing call: 4096 tokens x top 8 over 32768 expanded rows, an
eighth of them unused (-1)."""
import pytest
import torch

import tilejit
from tilejit import tile_kernels as tk
from tk_testing import assert_equal, stream


@pytest.mark.parametrize("hidden", [2048, 7168])
@pytest.mark.parametrize("to_e4m3", [False, True])
def test_reduce_fused(hidden, to_e4m3):
    x = torch.randn(4096 * 8, hidden, device="cuda").bfloat16()
    w = torch.rand(4096, 8, device="cuda")
    pos = torch.randperm(4096 * 8, device="cuda").view(4096, 8).int()
    pos[torch.rand(4096, 8, device="cuda") < 0.125] = -1
    sf = torch.tensor([0.5], device="cuda") if to_e4m3 else None
    got = tk.moe.reduce_fused(x, w, pos, "e4m3", sf) if to_e4m3 else \
        tk.moe.reduce_fused(x, w, pos)
    assert got.dtype == (torch.float8_e4m3fn if to_e4m3 else torch.bfloat16)
    want = torch.empty_like(got)
    tilejit.ops.reduce_fused(x, None, w, pos, sf, want, stream=stream())
    assert_equal(got, want)
