"""tilejit.tile_kernels.moe.moe_topk_gate_backward (TileKernels 2.1) on the
GPU against a float64 torch reference written from the spec (tk21_ops.md
§4.2): each pick's share (rsf g - sum g w) / (sum u + 1e-20) added to its
expert (duplicates accumulate, -1 skipped), the auxiliary term of the
sequence's grad_scores_sum for masked-in tokens, times du/dx = (1 -
exp(-u^2)) / (2u). Close within rtol 2e-5, atol 2e-6 (fp32 sums in another
order), with the forward's own picks and with random ones; `out` written
in place; no tokens."""
import pytest
import torch

from tilejit import tile_kernels as tk


def reference(u, idx, w, g, scale, mask=None, gss=None):
    u, w, g = u.double(), w.double(), g.double()
    t, e = u.shape
    valid = idx >= 0
    safe = idx.clamp(min=0)
    uk = torch.where(valid, u.gather(1, safe), 0.0)
    gk = torch.where(valid, g, 0.0)
    d = uk.sum(-1, keepdim=True)
    dot = (gk * w).sum(-1, keepdim=True)
    share = torch.where(valid, (scale * gk - dot) / (d + 1e-20), 0.0)
    route = torch.zeros(t, e, dtype=torch.float64, device=u.device)
    route.scatter_add_(1, safe, share)
    if mask is not None:
        h = gss.double().repeat_interleave(t // gss.shape[0], 0)
        su = u.sum(-1, keepdim=True)
        hu = (h * u).sum(-1, keepdim=True)
        inv = torch.where(mask[:, None], 1.0 / su, 0.0)
        route = route + (h - hu * inv) * inv
    dudx = torch.where(u == 0, 0.0, -torch.expm1(-u * u) / (2 * u))
    return (dudx * route).float()


@pytest.mark.parametrize("experts,k", [(16, 6), (72, 6), (256, 8), (384, 8)])
@pytest.mark.parametrize("aux", [False, True])
@pytest.mark.parametrize("picks", ["forward", "random"])
def test_moe_topk_gate_backward(experts, k, aux, picks):
    t = 4000
    gen = torch.Generator(device="cuda").manual_seed(11)
    logits = torch.randn(t, experts, device="cuda", generator=gen)
    scores = torch.empty(t, experts, device="cuda")
    idx, w = tk.moe.moe_topk_gate_forward(logits, k, False, 0, 2.5, 0,
                                          scores=scores)
    if picks == "random":  # duplicates and unused slots
        idx = torch.randint(-1, experts, (t, k), device="cuda", generator=gen)
    g = torch.randn(t, k, device="cuda", generator=gen)
    mask = gss = None
    if aux:
        mask = torch.rand(t, device="cuda", generator=gen) < 0.8
        gss = torch.randn(8, experts, device="cuda", generator=gen)
    got = tk.moe.moe_topk_gate_backward(scores, idx, w, g, 2.5, mask=mask,
                                        grad_scores_sum=gss)
    want = reference(scores, idx, w, g, 2.5, mask, gss)
    torch.testing.assert_close(got, want, rtol=2e-5, atol=2e-6)


def test_out_is_written():
    scores = torch.rand(64, 72, device="cuda") * 3
    idx = torch.randint(0, 72, (64, 6), device="cuda")
    w, g = torch.rand(64, 6, device="cuda"), torch.randn(64, 6, device="cuda")
    out = torch.full((64, 72), float("nan"), device="cuda")
    got = tk.moe.moe_topk_gate_backward(scores, idx, w, g, 1.0, out=out)
    assert got.data_ptr() == out.data_ptr()
    torch.testing.assert_close(out, reference(scores, idx, w, g, 1.0),
                               rtol=2e-5, atol=2e-6)


def test_no_tokens():
    scores = torch.empty(0, 256, device="cuda")
    idx = torch.empty(0, 8, dtype=torch.int64, device="cuda")
    w = torch.empty(0, 8, device="cuda")
    got = tk.moe.moe_topk_gate_backward(scores, idx, w, w, 1.0)
    assert got.shape == (0, 256)


def test_mask_needs_grad_scores_sum():
    scores = torch.rand(8, 64, device="cuda")
    idx = torch.zeros(8, 6, dtype=torch.int64, device="cuda")
    w = torch.rand(8, 6, device="cuda")
    with pytest.raises(ValueError, match="argument 'mask' is given without "
                       "'grad_scores_sum'"):
        tk.moe.moe_topk_gate_backward(
            scores, idx, w, w, 1.0,
            mask=torch.ones(8, dtype=torch.bool, device="cuda"))
