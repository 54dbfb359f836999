"""tilejit.ops.mhc_pre_norm_fn_partials on the GPU: the split-K partials of
mHC's norm product (x . tf32(fn)^T and sum x^2 over n_splits equal parts
of mhc * H) that TileKernels 2.1 takes from an external GEMM. Summed by
mhc_reduce_partials_and_rmsnorm_fwd they give mhc_pre_norm_fn's output
within TileKernels' tolerance (atol = rtol = 1e-3) of a float64 torch
product with the original's TF32 rounding of fn; each part within f32
rounding of its own float64 sum."""
import pytest
import torch

import tilejit
from tilejit import tile_kernels as tk
from tk_testing import stream


def tf32(fn):
    """The original's rounding: 0x1000 added to the bits, the low 13
    dropped (round half away from zero)."""
    bits = fn.view(torch.int32) + 0x1000
    return (bits & ~0x1FFF).view(torch.float32)


@pytest.mark.parametrize("tokens", [13, 48, 512, 4096])
@pytest.mark.parametrize("h", [1280, 2560, 7168])
def test_partials_give_the_norm(tokens, h):
    mhc, splits, eps = 4, 16, 1e-6
    mhc3, kd = mhc * (mhc + 2), mhc * h
    scale = (1 + 0.01 * torch.arange(mhc, device="cuda")).view(1, mhc, 1)
    residual = (torch.randn(tokens, mhc, h, device="cuda") * scale).bfloat16()
    fn = torch.randn(mhc3, kd, device="cuda") * 1e-4
    mul = torch.empty(splits, tokens, mhc3, device="cuda")
    sq = torch.empty(splits, tokens, device="cuda")
    tilejit.ops.mhc_pre_norm_fn_partials(residual, fn, mul, sq,
                                         n_splits=splits, stream=stream())
    x = residual.double().reshape(tokens, splits, kd // splits)
    f = tf32(fn).double().reshape(mhc3, splits, kd // splits)
    want_mul = torch.einsum("tsk,jsk->stj", x, f)
    want_sq = (x * x).sum(-1).T
    torch.testing.assert_close(mul.double(), want_mul, rtol=1e-3, atol=1e-7)
    torch.testing.assert_close(sq.double(), want_sq, rtol=1e-5, atol=0)
    out_mul = torch.empty(tokens, 1, mhc3, device="cuda")
    sqrsum = torch.empty(tokens, 1, device="cuda")
    out = torch.empty(tokens, mhc3, device="cuda")
    tk.mhc.mhc_reduce_partials_and_rmsnorm_fwd(
        mul.view(splits, tokens, 1, mhc3), sq.view(splits, tokens, 1),
        out_mul, sqrsum, out, kd, eps, splits)
    full = want_mul.sum(0)
    want = full * torch.rsqrt(want_sq.sum(0) / kd + eps).unsqueeze(-1)
    torch.testing.assert_close(out.double(), want, rtol=1e-3, atol=1e-3)
