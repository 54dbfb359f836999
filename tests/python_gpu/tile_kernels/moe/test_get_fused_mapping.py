"""tilejit.tile_kernels.moe.get_fused_mapping on the GPU (TileKernels'
test: its MoE parameters, alignments 64 and 128, the sync path), against
the layout built in torch with each segment in ascending flat order (the
order the spec recommends, which ours keeps): every map bitwise, the list
of aligned counts, the layout contract; then the no-sync path with N
given (the bound, and more: a tail of -1), and no tokens."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal, fused_mapping, moe_params, \
    moe_topk_idx


def check(got, idx, experts, alignment, n=None):
    """The seven maps against torch's layout; n: the maps' length (None:
    exactly the segments')."""
    (to_expert, to_token, to_token_topk, to_pos, start, end,
     counts) = got[:7]
    want_to_pos, want_to_expert = fused_mapping(idx, experts, alignment)
    needed = want_to_expert.numel()
    n = needed if n is None else n
    tail = torch.full((n - needed,), -1, dtype=torch.int32, device="cuda")
    assert_equal(to_pos, want_to_pos)
    assert_equal(to_expert, torch.cat([want_to_expert, tail]))
    flat = idx.flatten()
    c = torch.bincount(flat[flat >= 0], minlength=experts)
    aligned = ((c + alignment - 1) // alignment * alignment).int()
    assert_equal(counts, aligned)
    assert_equal(start, (torch.cumsum(aligned, 0) - aligned).int())
    assert_equal(end, torch.cumsum(aligned, 0).int())
    # The inverse maps: each filled position names its (t, k).
    pos = torch.full((n,), -1, dtype=torch.int32, device="cuda")
    valid = want_to_pos.flatten() >= 0
    entries = torch.arange(flat.numel(), device="cuda", dtype=torch.int32)
    pos[want_to_pos.flatten()[valid].long()] = entries[valid]
    assert_equal(to_token_topk, pos)
    assert_equal(to_token, torch.where(pos >= 0, pos // idx.shape[1], -1))


@pytest.mark.parametrize("local_experts,ep,topk", moe_params())
@pytest.mark.parametrize("alignment", [64, 128])
def test_get_fused_mapping(local_experts, ep, topk, alignment):
    idx = moe_topk_idx(local_experts, ep, topk)
    got = tk.moe.get_fused_mapping(idx, local_experts, 0, alignment)
    check(got, idx, local_experts, alignment)
    assert got[7] == got[6].tolist()
    assert sum(got[7]) == got[0].numel()


@pytest.mark.parametrize("extra", [0, 1000])
def test_no_sync(extra):
    experts, alignment = 32, 128
    idx = moe_topk_idx(experts, 8, 8)
    n = ((idx.numel() + (alignment - 1) * experts) // alignment * alignment
         + extra)
    got = tk.moe.get_fused_mapping(idx, experts, n, alignment,
                                   force_no_sync=True)
    check(got, idx, experts, alignment, n)
    assert got[7] == []


def test_no_tokens():
    idx = torch.empty(0, 8, dtype=torch.int64, device="cuda")
    got = tk.moe.get_fused_mapping(idx, 32, 0, 128)
    assert [g.numel() for g in got[:7]] == [0, 0, 0, 0, 32, 32, 32]
    assert got[7] == [0] * 32
    assert int(got[6].abs().sum()) == 0


def test_negative_size():
    idx = torch.zeros(4, 2, dtype=torch.int64, device="cuda")
    with pytest.raises(ValueError, match="'num_expanded_tokens' is -1"):
        tk.moe.get_fused_mapping(idx, 4, -1, 1)
