"""tilejit.tile_kernels.quant.batched_transpose_weight_sf on the GPU, equal
to its op's destination-passing call."""
import pytest
import torch

import tilejit
from tilejit import tile_kernels as tk
from tk_testing import assert_equal, stream


@pytest.mark.parametrize("transpose_sf1", [True, False])
def test_batched_transpose_weight_sf(transpose_sf1):
    scales = torch.exp2(torch.randint(-8, 8, (2, 56, 16),
                                      device="cuda").float())
    (a, b), = tk.quant.batched_transpose_weight_sf([scales], 128,
                                                   [transpose_sf1], [None])
    a2, b2 = torch.empty_like(a), torch.empty_like(b)
    tilejit.ops.batched_transpose_weight_sf(scales, a2, b2, block_size=128,
                                            transpose_sf1=transpose_sf1,
                                            stream=stream())
    assert_equal(a, a2)
    assert_equal(b, b2)
