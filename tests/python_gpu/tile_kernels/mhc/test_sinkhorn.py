"""tilejit.tile_kernels.mhc.mhc_sinkhorn_fwd on the GPU: writes its out
argument and returns None, as TileKernels' does; equal to the op's call;
close to torch's composition of the spec's forward (§3.2) within
assert_close's fp32 defaults, as TileKernels' test compares it."""
import pytest
import torch

import tilejit
from tilejit import tile_kernels as tk
from tk_testing import assert_equal, stream, torch_sinkhorn


@pytest.mark.parametrize("num_tokens", [4096, 8192])
@pytest.mark.parametrize("repeat", [10, 20])
def test_mhc_sinkhorn_fwd(num_tokens, repeat):
    comb = torch.randn(2, num_tokens, 4, 4, device="cuda")
    got = torch.empty_like(comb)
    assert tk.mhc.mhc_sinkhorn_fwd(comb, got, repeat, 1e-6) is None
    want = torch.empty_like(comb)
    tilejit.ops.sinkhorn_normalize(comb, want, repeat=repeat, eps=1e-6,
                                   stream=stream())
    assert_equal(got, want)
    torch.testing.assert_close(got, torch_sinkhorn(comb, repeat, 1e-6))


@pytest.mark.parametrize("num_tokens", [1, 4096])
@pytest.mark.parametrize("repeat", [1, 10])
def test_mhc_sinkhorn_bwd(num_tokens, repeat):
    """The gradient against autograd of the torch composition, within
    assert_close's fp32 defaults (TileKernels' test)."""
    x = torch.randn(2, num_tokens, 4, 4, device="cuda", requires_grad=True)
    grad_output = torch.randn(2, num_tokens, 4, 4, device="cuda")
    torch_sinkhorn(x, repeat, 1e-6).backward(grad_output)
    got = torch.empty_like(grad_output)
    assert tk.mhc.mhc_sinkhorn_bwd(grad_output, x.detach(), got, repeat,
                                   1e-6) is None
    torch.testing.assert_close(got, x.grad)
