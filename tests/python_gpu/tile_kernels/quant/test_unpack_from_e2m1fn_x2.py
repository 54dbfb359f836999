"""tilejit.tile_kernels.quant.unpack_from_e2m1fn_x2 on the GPU against
torch's table lookup (the low nibble first)."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal

E2M1 = [0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6]


@pytest.mark.parametrize("shape", [(64, 32), (4001, 1024)])
@pytest.mark.parametrize("dtype", [None, torch.bfloat16])
def test_unpack_from_e2m1fn_x2(shape, dtype):
    codes = torch.randint(-128, 128, shape, dtype=torch.int8, device="cuda")
    table = torch.tensor(E2M1, device="cuda")
    b = codes.view(torch.uint8).long()
    want = torch.stack([table[b & 15], table[b >> 4]], -1).view(
        shape[0], 2 * shape[1])
    if dtype is None:
        got = tk.quant.unpack_from_e2m1fn_x2(codes)
    else:
        got, want = tk.quant.unpack_from_e2m1fn_x2(codes, dtype), \
            want.to(dtype)
    assert_equal(got, want)
