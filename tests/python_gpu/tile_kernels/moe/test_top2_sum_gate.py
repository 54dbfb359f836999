"""tilejit.tile_kernels.moe.top2_sum_gate on the GPU against a plain torch
router written from the spec (§1.4: scores, the group limit by top-two
sums, a stable top K, weights normalised with 1e-20 and scaled, shared
experts, the physical map, the EP/TP renumbering, masked and fixed-routing
tokens), over TileKernels' configurations; as TileKernels' test compares:
each row's indices sorted and equal, the unmapped picks equal, the weights
close (rtol 1e-5, atol 1e-8) in the same order. And TileKernels' stability
check: all-zero logits route token t to experts 0, 1, 2, ... in order."""
import pytest
import torch
import torch.nn.functional as F

from tilejit import tile_kernels as tk
from tk_testing import assert_equal

# (groups, topk_groups, experts, shared, topk)
CONFIGS = [(0, 0, 72, 1, 6), (0, 0, 32, 2, 6), (0, 0, 64, 2, 6),
           (0, 0, 96, 2, 6), (0, 0, 16, 2, 6), (0, 0, 36, 2, 6),
           (0, 0, 108, 2, 6), (0, 0, 128, 2, 6), (0, 0, 144, 2, 6),
           (8, 8, 256, 2, 8), (8, 4, 256, 2, 8)]
EXTRA, EP, TP = 32, 4, 2


def reference(logits, bias, k, topk_groups, groups, shared, scale, ep_rank,
              tp_rank, scoring, mask, fix, phys, count, unmapped):
    t, e = logits.shape
    if scoring == "softmax":
        p, s = logits.softmax(-1), logits + bias
    else:
        p = (logits.sigmoid() if scoring == "sigmoid"
             else F.softplus(logits).sqrt())
        s = p + bias
    if groups != topk_groups:
        score = s.view(t, groups, -1).topk(2, -1).values.sum(-1)
        kept = torch.sort(score, dim=-1, descending=True, stable=True).indices
        keep = torch.zeros(t, groups, dtype=torch.bool, device=s.device)
        keep.scatter_(1, kept[:, :topk_groups], True)
        s = s.masked_fill(~keep.repeat_interleave(e // groups, 1),
                          float("-inf"))
    sel = torch.sort(s, dim=-1, descending=True, stable=True).indices[:, :k]
    if fix is not None:
        sel = torch.where(fix[:, None], unmapped, sel)
    w = p.gather(1, sel)
    w = w / (w.sum(-1, keepdim=True) + 1e-20) * scale
    idx = torch.cat([sel, torch.arange(e, e + shared, device=s.device)
                     .expand(t, shared)], 1)
    w = torch.cat([w, torch.ones(t, shared, device=s.device)], 1)
    extra = 0
    if phys is not None:
        extra = phys.shape[1] - 1
        tok = torch.arange(t, device=s.device)[:, None]
        dup = (ep_rank + tok * 23333) % count[idx].long()
        idx = phys[idx, dup].long()
    per_rank = (e + extra) // EP
    here = (idx // per_rank) % TP == tp_rank
    local = idx - tp_rank * per_rank
    dp = local // (per_rank * TP)
    renumbered = local - dp * per_rank * TP + dp * per_rank
    idx = torch.where(here & (renumbered >= 0), renumbered, -1)
    if mask is not None:
        idx = torch.where(mask[:, None], idx, -1)
        w = torch.where(mask[:, None], w, 0.0)
        sel = torch.where(mask[:, None], sel, -1)
    return idx, w, sel


def sorted_rows(idx, w):
    order = torch.sort(idx, dim=-1, stable=True).indices
    return idx.gather(1, order), w.gather(1, order)


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("scoring", ["sigmoid", "sqrtsoftplus", "softmax"])
@pytest.mark.parametrize("tp_rank", [0, 1])
@pytest.mark.parametrize("fixed", [False, True])
def test_top2_sum_gate(config, scoring, tp_rank, fixed):
    groups, topk_groups, e, s, k = config
    use_shared = k % s == 0 and e % (k // s) == 0
    shared = s if use_shared else 0
    t, padded = 4001, 10
    g = torch.Generator(device="cuda").manual_seed(42)
    logits = torch.randn(t, e, device="cuda", generator=g)
    bias = torch.randn(e, device="cuda", generator=g) * 0.1
    mask = torch.ones(t, dtype=torch.bool, device="cuda")
    mask[-padded:] = False
    phys = torch.arange(e + shared, dtype=torch.int32, device="cuda")[
        :, None].repeat(1, EXTRA + 1).contiguous()
    count = torch.ones(e + shared, dtype=torch.int32, device="cuda")
    fix = unmapped = None
    if fixed:
        fix = torch.rand(t, device="cuda", generator=g) < 0.5
        unmapped = torch.randint(0, e, (t, k), device="cuda", generator=g)
    unmapped_in = None if unmapped is None else unmapped.clone()
    want_idx, want_w, want_sel = reference(
        logits, bias, k, topk_groups, groups, shared, 1.5, 0, tp_rank,
        scoring, mask, fix, phys, count, unmapped_in)
    out = torch.zeros(t, k, dtype=torch.int64, device="cuda")
    if unmapped is not None:
        out = unmapped
    idx, w = tk.moe.top2_sum_gate(
        logits, bias, k, topk_groups, groups, use_shared, s, 1.5, 0, EP,
        tp_rank, TP, scoring.upper() if scoring == "softmax" else scoring,
        mask, fix, phys, count, out)
    got_idx, got_w = sorted_rows(idx, w)
    ref_idx, ref_w = sorted_rows(want_idx, want_w)
    assert_equal(got_idx, ref_idx)
    torch.testing.assert_close(got_w, ref_w, rtol=1e-5, atol=1e-8)
    assert_equal(out.sort(-1).values, want_sel.sort(-1).values)


def test_stability_all_zero_logits():
    t, e, k = 512, 256, 8
    logits = torch.zeros(t, e, device="cuda")
    bias = torch.zeros(e, device="cuda")
    idx, w = tk.moe.top2_sum_gate(logits, bias, k, 4, 8, False, 0, 1.0, 0,
                                  EP, 0, 1, "sigmoid")
    want = torch.arange(min(e // EP, k), device="cuda").expand(t, -1)
    want = want.contiguous()
    assert_equal(idx[:, :want.shape[1]].contiguous(), want)
