"""tilejit.tile_kernels.moe.moe_topk_gate_forward (TileKernels 2.1) on the
GPU against a plain torch router written from the spec (tk21_ops.md §4.1:
sqrt-softplus scores, the top K of scores + bias or image bias, weights
over their sum + 1e-20 times the scaling factor, shared experts, the
physical map, masked and fixed-routing tokens, the scores written out):
each row's indices sorted and equal, the weights close (rtol 1e-5, atol
1e-8) in the same order, the scores close, the picks equal."""
import pytest
import torch
import torch.nn.functional as F

from tilejit import tile_kernels as tk
from tk_testing import assert_equal


def reference(logits, k, shared, scale, ep_rank, mask, bias, image_bias,
              image, fix, phys, count, unmapped):
    t, e = logits.shape
    u = F.softplus(logits).sqrt()
    b = torch.zeros(t, e, device=u.device)
    if bias is not None:
        b = b + bias
    if image_bias is not None:
        b = torch.where(image[:, None], image_bias, b)
    sel = torch.sort(u + b, dim=-1, descending=True, stable=True).indices
    sel = sel[:, :k]
    if fix is not None:
        sel = torch.where(fix[:, None], unmapped, sel)
    w = u.gather(1, sel)
    w = w / (w.sum(-1, keepdim=True) + 1e-20) * scale
    idx = torch.cat([sel, torch.arange(e, e + shared, device=u.device)
                     .expand(t, shared)], 1)
    w = torch.cat([w, torch.ones(t, shared, device=u.device)], 1)
    if phys is not None:
        tok = torch.arange(t, device=u.device)[:, None]
        dup = (ep_rank + tok * 23333) % count[idx].long()
        idx = phys[idx, dup].long()
    if mask is not None:
        keep = mask[:, None]
        idx, w = torch.where(keep, idx, -1), torch.where(keep, w, 0.0)
        sel, u = torch.where(keep, sel, -1), torch.where(keep, u, 0.0)
    return idx, w, sel, u


def sorted_rows(idx, w):
    order = torch.sort(idx, dim=-1, stable=True).indices
    return idx.gather(1, order), w.gather(1, order)


@pytest.mark.parametrize("experts,k", [(16, 6), (72, 6), (256, 8), (384, 8)])
@pytest.mark.parametrize("shared", [0, 1, 2])
@pytest.mark.parametrize("options", [False, True])
def test_moe_topk_gate_forward(experts, k, shared, options):
    t = 4001
    g = torch.Generator(device="cuda").manual_seed(7)
    logits = torch.randn(t, experts, device="cuda", generator=g)
    args = dict(mask=None, bias=None, image_bias=None, image=None, fix=None,
                phys=None, count=None, unmapped=None)
    out = None
    if options:
        args["mask"] = torch.rand(t, device="cuda", generator=g) < 0.9
        args["bias"] = torch.randn(experts, device="cuda", generator=g) * .1
        args["image_bias"] = torch.randn(experts, device="cuda",
                                         generator=g) * 0.1
        args["image"] = torch.rand(t, device="cuda", generator=g) < 0.3
        args["fix"] = torch.rand(t, device="cuda", generator=g) < 0.2
        args["unmapped"] = torch.randint(0, experts, (t, k), device="cuda",
                                         generator=g)
        rows = experts + shared
        args["count"] = torch.randint(1, 5, (rows,), dtype=torch.int32,
                                      device="cuda", generator=g)
        args["phys"] = torch.randint(0, rows + 4, (rows, 5),
                                     dtype=torch.int32, device="cuda",
                                     generator=g)
        out = args["unmapped"].clone()
    want_idx, want_w, want_sel, want_u = reference(
        logits, k, shared, 2.5, 3,
        unmapped=None if out is None else out.clone(),
        **{a: v for a, v in args.items() if a != "unmapped"})
    scores = torch.empty(t, experts, device="cuda")
    idx, w = tk.moe.moe_topk_gate_forward(
        logits, k, shared > 0, shared, 2.5, 3, "SqrtSoftplus",
        mask=args["mask"], bias=args["bias"], image_bias=args["image_bias"],
        image_token_mask=args["image"], fix_routing_mask=args["fix"],
        to_physical_map=args["phys"], logical_count=args["count"],
        unmapped_topk_idx=out, scores=scores)
    got_idx, got_w = sorted_rows(idx, w)
    ref_idx, ref_w = sorted_rows(want_idx, want_w)
    assert_equal(got_idx, ref_idx)
    torch.testing.assert_close(got_w, ref_w, rtol=1e-5, atol=1e-8)
    torch.testing.assert_close(scores, want_u, rtol=1e-5, atol=1e-8)
    if out is not None:
        assert_equal(out.sort(-1).values, want_sel.sort(-1).values)


def test_force_random_is_refused():
    logits = torch.randn(8, 64, device="cuda")
    with pytest.raises(Exception, match="argument 'force_random' is given"):
        tk.moe.moe_topk_gate_forward(
            logits, 6, False, 0, 1.0, 0,
            force_random=torch.ones(8, dtype=torch.bool, device="cuda"))
