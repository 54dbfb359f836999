"""tilejit.tile_kernels.quant.cast and per_token_cast_and_cast_back on the
GPU, against torch's own casts."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal

q = tk.quant


@pytest.mark.parametrize("shape", [(1000, 512), (4001, 7168)])
def test_cast_f32_to_bf16(shape):
    x = torch.randn(shape, device="cuda") * 100
    assert_equal(q.cast(x, torch.bfloat16), x.bfloat16())


@pytest.mark.parametrize("shape", [(1000, 512), (4001, 7168)])
def test_cast_to_and_from_e4m3(shape):
    x = torch.randn(shape, device="cuda") * 10  # inside e4m3's range
    e = q.cast(x, torch.float8_e4m3fn)
    assert_equal(e, x.to(torch.float8_e4m3fn))
    assert_equal(q.cast(e, torch.float32), e.float())


@pytest.mark.parametrize("num_per_channels", [64, 128])
def test_per_token_cast_and_cast_back_in_place(num_per_channels):
    x = torch.randn(256, 7168, device="cuda").bfloat16()
    out, sf = q.per_token_cast(x, "e4m3", num_per_channels)
    want = q.per_token_cast_back((out, sf), "bf16", num_per_channels)
    q.per_token_cast_and_cast_back(x, "e4m3", num_per_channels)
    assert_equal(x, want)
