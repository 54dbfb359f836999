"""tilejit.tile_kernels.transpose on the GPU against torch's transposes."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal

DTYPES = [torch.bfloat16, torch.float32, torch.float8_e4m3fn]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 256, 448), (2, 4096, 7168)])
def test_batched_transpose(dtype, shape):
    a = torch.randn(shape, device="cuda").to(dtype)
    assert_equal(tk.transpose.batched_transpose(a),
                 a.transpose(1, 2).contiguous())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(256, 448), (4096, 7168), (8192, 2048)])
def test_transpose(dtype, shape):
    a = torch.randn(shape, device="cuda").to(dtype)
    assert_equal(tk.transpose.transpose(a), a.t().contiguous())
