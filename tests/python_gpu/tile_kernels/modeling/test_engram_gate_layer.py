"""tilejit.tile_kernels.modeling.engram.engram_gate on the GPU (TileKernels
2.1's layer): the forward is engram_gate_fwd of the fused weight, the
backward's gradients those of engram_gate_bwd and grad_w_reduce (bit for
bit: the same ops), kv's in its flat [*, (hc + 1) D] shape; a weight with
a main_grad gets its gradient added there and none returned."""
import torch

from tilejit import tile_kernels as tk
from tilejit.tile_kernels.modeling import engram as layer
from tk_testing import assert_equal


def test_engram_gate_layer_and_its_gradients():
    t, hc, d, clamp, eps = 301, 4, 1024, 1e-6, 1e-20
    g = torch.Generator(device="cuda").manual_seed(7)

    def randn(*shape):
        return torch.randn(*shape, device="cuda",
                           generator=g).bfloat16().requires_grad_()

    x, kv = randn(t, hc, d), randn(t, (hc + 1) * d)
    wh, we = randn(hc, d), randn(hc, d)
    out = layer.engram_gate(x, kv, wh, we, clamp, eps)
    w = tk.engram.fused_weight(wh.detach(), we.detach())
    kv3 = kv.detach().view(t, hc + 1, d)
    want, dot, gate, rstd_x, rstd_k = tk.engram.engram_gate_fwd(
        x.detach(), kv3, w, eps, clamp)
    assert_equal(out, want)

    grad = torch.randn(t, hc, d, device="cuda", generator=g).bfloat16()
    out.backward(grad)
    gx, gkv, partial = tk.engram.engram_gate_bwd(
        grad, x.detach(), kv3, w, dot, gate, rstd_x, rstd_k, clamp)
    assert_equal(x.grad, gx)
    assert_equal(kv.grad, gkv.view(t, (hc + 1) * d))
    gh = torch.zeros(hc, d, device="cuda")
    ge = torch.zeros(hc, d, device="cuda")
    tk.engram.grad_w_reduce(partial, wh.detach(), we.detach(), gh, ge)
    assert_equal(wh.grad, gh.bfloat16())
    assert_equal(we.grad, ge.bfloat16())

    # main_grad: added to, no gradient returned.
    before = wh.grad.clone()
    wh.main_grad = torch.ones(hc, d, device="cuda")
    layer.engram_gate(x, kv, wh, we, clamp, eps).backward(grad)
    assert_equal(wh.grad, before)
    # grad_w_reduce adds its products into main_grad (one rounding each),
    # so 1 + gh can differ in the last bit.
    torch.testing.assert_close(wh.main_grad, 1 + gh, rtol=1e-6, atol=1e-6)
