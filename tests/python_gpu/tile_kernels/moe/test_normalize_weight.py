"""tilejit.tile_kernels.moe.normalize_weight on the GPU, close to torch's
sums and quotients (the kernel's summation order is its own)."""
import pytest
import torch

from tilejit import tile_kernels as tk


@pytest.mark.parametrize("num_tokens", [4001, 8192])
@pytest.mark.parametrize("num_topk", [2, 6, 8, 9])
def test_normalize_weight(num_tokens, num_topk):
    w = torch.rand(num_tokens, num_topk, device="cuda")
    den, norm = tk.moe.normalize_weight(w)
    assert den.shape == (num_tokens,) and norm.shape == (num_tokens, num_topk)
    torch.testing.assert_close(den, w.sum(1), rtol=4e-6, atol=0)
    torch.testing.assert_close(norm, w / w.sum(1, keepdim=True), rtol=4e-6,
                               atol=0)
