"""tilejit.tile_kernels.quant's per-channel casts on the GPU: the layouts,
the transposed form equal to torch's transpose of the plain one, the fused
form without pos_to_token equal to the plain one."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal, calc_diff, layout

q = tk.quant


@pytest.mark.parametrize("num_tokens", [4096, 8064])
@pytest.mark.parametrize("hidden", [2048, 7168])
def test_per_channel_cast(num_tokens, hidden):
    x = torch.randn(num_tokens, hidden, device="cuda").bfloat16()
    out, sf = q.per_channel_cast(x, "e4m3", 128)
    assert layout(out) == (f"torch.float8_e4m3fn ({num_tokens}, {hidden}) "
                           f"({hidden}, 1)")
    m = num_tokens // 128
    assert layout(sf) == f"torch.float32 ({m}, {hidden}) ({hidden}, 1)"
    back = out.float() * sf.repeat_interleave(128, 0)
    assert calc_diff(back, x.float()) < 2e-3
    out_t, sf_t = q.per_channel_cast_and_transpose(x, "e4m3", 128)
    assert_equal(out_t, out.t().contiguous())
    assert_equal(sf_t, sf)
    out_f, sf_f = q.per_channel_cast_fused(x, "e4m3", 128)
    assert_equal(out_f, out)
    assert_equal(sf_f, sf)
