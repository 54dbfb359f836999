"""tilejit.tile_kernels.quant's per-block casts on the GPU: the SF layout,
cast_back against torch's q * sf, the SF-only and precomputed-SF forms."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal, calc_diff, check_bias, layout

q = tk.quant


def torch_back(out, sf, block):
    m, k = out.shape
    bm, bk = block
    return out.float() * sf.repeat_interleave(bm, 0)[:m].repeat_interleave(
        bk, 1)[:, :k]


@pytest.mark.parametrize("num_tokens", [4096, 8064])
@pytest.mark.parametrize("hidden", [2048, 7168])
@pytest.mark.parametrize("block", [(128, 128), (32, 32)])
def test_per_block_cast(num_tokens, hidden, block):
    x = torch.randn(num_tokens, hidden, device="cuda").bfloat16()
    out, sf = q.per_block_cast(x, "e4m3", block)
    m, n = -(-num_tokens // block[0]), hidden // block[1]
    assert layout(out) == (f"torch.float8_e4m3fn ({num_tokens}, {hidden}) "
                           f"({hidden}, 1)")
    assert layout(sf) == f"torch.float32 ({m}, {n}) ({n}, 1)"
    back = q.cast_back((out, sf), "fp32", block)
    assert_equal(back, torch_back(out, sf, block))
    assert calc_diff(back, x.float()) < 2e-3
    check_bias(back, x.float())
    assert_equal(q.per_block_cast_with_sf_only(x, "e4m3", block), sf)


def test_per_block_cast_with_precomputed_sf():
    x = torch.randn(4096, 7168, device="cuda").bfloat16()
    _, sf = q.per_block_cast(x, "e4m3", (128, 128))
    pre = q.per_block_cast_with_precomputed_sf(x, "e4m3", (128, 128), sf)
    inv = sf.reciprocal().repeat_interleave(128, 0).repeat_interleave(128, 1)
    assert_equal(pre, (x.float() * inv).to(torch.float8_e4m3fn))
