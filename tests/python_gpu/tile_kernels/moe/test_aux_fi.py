"""tilejit.tile_kernels.moe.aux_fi on the GPU against torch.bincount of the
ids that are not -1, times E / (T * num_aux_topk), within TileKernels'
calc_diff 2e-7 (a sum of per-block fractions in no fixed order); the
fractions allocated uninitialised (the op zeroes them)."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import calc_diff


@pytest.mark.parametrize("num_tokens", [0, 4001, 8001])
@pytest.mark.parametrize("num_topk", [2, 8, 9])
@pytest.mark.parametrize("num_experts", [72, 256])
def test_aux_fi(num_tokens, num_topk, num_experts):
    ids = torch.randint(-1, num_experts, (num_tokens, num_topk),
                        device="cuda")
    for num_aux_topk in (1, num_topk):
        fi = tk.moe.aux_fi(ids, num_experts, num_aux_topk)
        count = torch.bincount(ids[ids >= 0], minlength=num_experts)
        want = count.double() * num_experts / max(1, num_tokens * num_aux_topk)
        assert fi.dtype == torch.float32 and fi.shape == (num_experts,)
        assert calc_diff(fi, want) < 2e-7
