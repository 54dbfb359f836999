"""tilejit.ops.mhc_pre_norm_fn_gemm_bwd on the GPU: the GEMM half of mHC's
norm backward (after mhc_reduce_partials_and_rmsnorm_bwd), against float64
torch with the original's TF32 rounding of both operands: x_grad (added to
the given one, in place) within bf16's assert_close defaults and fn_grad
within TileKernels' atol 3e-2, rtol 1e-3 (moe_engram_mhc.md §3.3)."""
import pytest
import torch

import tilejit
from tk_testing import stream


def tf32(v):
    """0x1000 added to the f32 bits, the low 13 dropped."""
    return ((v.view(torch.int32) + 0x1000) & ~0x1FFF).view(torch.float32)


@pytest.mark.parametrize("tokens", [77, 4096])
@pytest.mark.parametrize("h", [1280, 7168])
def test_gemm_bwd(tokens, h):
    mhc = 4
    mhc3, kd = mhc * (mhc + 2), mhc * h
    x = torch.randn(tokens, mhc, h, device="cuda").bfloat16()
    fn = torch.randn(mhc3, kd, device="cuda") * 1e-4
    mul_grad = torch.randn(tokens, mhc3, device="cuda")
    sq_grad = torch.randn(tokens, device="cuda") * 1e-4
    x_grad = torch.randn(tokens, mhc, h, device="cuda").bfloat16()
    before = x_grad.clone()
    fn_grad = torch.empty(mhc3, kd, device="cuda")
    tilejit.ops.mhc_pre_norm_fn_gemm_bwd(mul_grad, sq_grad, x, fn, x_grad,
                                         x_grad, fn_grad, stream=stream())
    mgr, fnr = tf32(mul_grad).double(), tf32(fn).double()
    xs = x.double().reshape(tokens, kd)
    want_x = (before.double().reshape(tokens, kd) + mgr @ fnr +
              2 * xs * sq_grad.double().unsqueeze(-1))
    torch.testing.assert_close(x_grad.reshape(tokens, kd),
                               want_x.to(torch.bfloat16))
    torch.testing.assert_close(fn_grad.double(), mgr.T @ xs, rtol=1e-3,
                               atol=3e-2)
