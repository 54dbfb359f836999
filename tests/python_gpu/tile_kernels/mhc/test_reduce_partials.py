"""tilejit.tile_kernels.mhc.mhc_reduce_partials_and_rmsnorm_fwd and _bwd on
the GPU (TileKernels 2.1): the split sums bit for bit against torch's
in-order f32 adds; out and the gradients against float64 torch within
f32 tolerances (rsqrtf is approximate); the backward against autograd of
the forward's formula."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal


@pytest.mark.parametrize("groups", [1, 3])
def test_reduce_partials_fwd_bwd(groups):
    s, t, n3, size, eps = 16, 4096, 24, 16384, 1e-6
    mul_s = torch.randn(s, t, groups, n3, device="cuda")
    sq_s = torch.rand(s, t, groups, device="cuda") * 2000
    out_mul = torch.empty(t, groups, n3, device="cuda")
    sqrsum = torch.empty(t, groups, device="cuda")
    out = torch.empty(t, n3, device="cuda")
    tk.mhc.mhc_reduce_partials_and_rmsnorm_fwd(mul_s, sq_s, out_mul, sqrsum,
                                               out, size, eps, s)
    want_mul, want_sq = torch.zeros_like(out_mul), torch.zeros_like(sqrsum)
    for i in range(s):  # in split order, f32
        want_mul, want_sq = want_mul + mul_s[i], want_sq + sq_s[i]
    assert_equal(out_mul, want_mul)
    assert_equal(sqrsum, want_sq)
    m = want_mul.double().requires_grad_()
    q = want_sq.double().requires_grad_()
    r = torch.rsqrt(q / size + eps)
    want = (m * r.unsqueeze(-1)).sum(1)
    # Within 1e-5 of the sum of the terms' magnitudes: out sums groups of
    # products that cancel, so a bound relative to out itself is too tight.
    scale = (m.abs() * r.unsqueeze(-1)).sum(1).detach()
    err = (out.double() - want.detach()).abs()
    assert bool((err <= 1e-5 * scale).all()), float((err / scale).max())
    grad = torch.randn(t, n3, device="cuda")
    want.backward(grad.double())
    mul_grad = torch.empty_like(out_mul)
    sq_grad = torch.empty_like(sqrsum)
    tk.mhc.mhc_reduce_partials_and_rmsnorm_bwd(grad, out_mul, sqrsum,
                                               mul_grad, sq_grad, size, eps)
    torch.testing.assert_close(mul_grad.double(), m.grad, rtol=1e-5,
                               atol=1e-8)
    torch.testing.assert_close(sq_grad.double(), q.grad, rtol=1e-4,
                               atol=1e-10)
