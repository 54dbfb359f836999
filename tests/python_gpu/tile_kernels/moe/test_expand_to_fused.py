"""tilejit.tile_kernels.moe.expand_to_fused and expand_to_fused_with_sf on
the GPU against torch's scatter (TileKernels' test): TileKernels' MoE
parameters (4001 tokens a rank, top 2 to 9, 4 to 32 local experts), the
mapping made in torch; x's rows, and its e4m3 data and scales from
per_token_cast, at every fused row of their slots, zeros on padding rows;
bitwise, strides included."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import align, assert_equal, fused_mapping, moe_params, \
    moe_topk_idx


def expected(rows, to_pos, num_rows, like=None):
    """torch's scatter: zeros, then each slot's token row at its position
    (`like`: the zeroed output to fill, else a new row-major one)."""
    want = like if like is not None else rows.new_zeros(num_rows,
                                                        rows.shape[1])
    valid = to_pos >= 0
    tokens = torch.arange(to_pos.shape[0], device=rows.device)
    tokens = tokens.unsqueeze(1).expand_as(to_pos)[valid]
    want[to_pos[valid].long()] = rows[tokens]
    return want


@pytest.mark.parametrize("local_experts,ep,topk", moe_params())
@pytest.mark.parametrize("hidden", [576, 7168])
def test_expand_to_fused(local_experts, ep, topk, hidden):
    idx = moe_topk_idx(local_experts, ep, topk)
    to_pos, pos_to_expert = fused_mapping(idx, local_experts, 64)
    x = torch.randn(idx.shape[0], hidden, device="cuda").bfloat16()
    got = tk.moe.expand_to_fused(x, to_pos, pos_to_expert)
    assert_equal(got, expected(x, to_pos, pos_to_expert.numel()))


@pytest.mark.parametrize("local_experts,ep,topk", [(32, 8, 6), (4, 64, 8)])
@pytest.mark.parametrize("hidden", [2048, 7168])
@pytest.mark.parametrize("npc", [32, 128])
@pytest.mark.parametrize("col,packed", [(False, False), (True, True)])
def test_expand_to_fused_with_sf(local_experts, ep, topk, hidden, npc, col,
                                 packed):
    idx = moe_topk_idx(local_experts, ep, topk)
    to_pos, pos_to_expert = fused_mapping(idx, local_experts, 16)
    n = pos_to_expert.numel()
    x = torch.randn(idx.shape[0], hidden, device="cuda").bfloat16()
    data, sf = tk.quant.per_token_cast(
        x, "e4m3", npc, use_tma_aligned_col_major_sf=col, round_sf=True,
        use_packed_ue8m0=packed)
    sf = sf.contiguous()
    out, out_sf = tk.moe.expand_to_fused_with_sf(
        (data, sf), npc, to_pos, pos_to_expert,
        use_tma_aligned_col_major_sf=col)
    assert_equal(out, expected(data, to_pos, n))
    if col:  # (hidden_sf, align(N, 4)) storage, returned transposed
        want_sf = sf.new_zeros(sf.shape[1], align(n, 4)).t()[:n]
    else:
        want_sf = sf.new_zeros(n, sf.shape[1])
    assert_equal(out_sf, expected(sf, to_pos, n, want_sf))
