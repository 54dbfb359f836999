"""tilejit.tile_kernels.quant.norm_forward_and_per_token_cast on the GPU
(TileKernels 2.1): the spec's promise, that it equals per_token_cast of
norm_forward's output bit for bit — with bf16 x its out_bf16 is that output,
so (out, out_sf) must be per_token_cast(out_bf16, 'e4m3', 32) exactly, and
out_bf16, rstd and norm_input norm_forward's; the scale layouts as
TileKernels allocates them (3-D x: row-major (B, T, nK), column-major a
column a batch); packed pad bytes 0."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import align, assert_equal, layout

q = tk.quant
LAYOUTS = {"row": (False, False, False), "col": (True, False, False),
           "col round": (True, True, False), "packed": (True, True, True)}


@pytest.mark.parametrize("h", [7168, 4128, 4112])
@pytest.mark.parametrize("sf_layout", list(LAYOUTS))
@pytest.mark.parametrize("with_residual", [False, True])
def test_equals_per_token_cast_of_the_output(h, sf_layout, with_residual):
    col, round_sf, packed = LAYOUTS[sf_layout]
    x = torch.randn(515, h, device="cuda").bfloat16()
    w = torch.randn(h, device="cuda").bfloat16()
    res = torch.randn_like(x) if with_residual else None
    (out, sf), out_bf16, rstd, norm_input = q.norm_forward_and_per_token_cast(
        x, w, 1e-6, residual=res, out_scale=0.5,
        use_tma_aligned_col_major_sf=col, round_sf=round_sf,
        use_packed_ue8m0=packed, with_out_bf16=True, with_rstd=True)
    want, want_rstd, want_input = q.norm_forward(
        x, w, 1e-6, residual=res, out_scale=0.5, with_rstd=True)
    # The same kernel's sum and rsqrt: the same bits.
    assert_equal(out_bf16, want)
    assert_equal(rstd, want_rstd)
    assert_equal(norm_input, want_input)
    want_out, want_sf = q.per_token_cast(
        out_bf16, "e4m3", 32, use_tma_aligned_col_major_sf=col,
        round_sf=round_sf, use_packed_ue8m0=packed)
    assert_equal(out, want_out)
    assert layout(sf) == layout(want_sf)
    groups = -(-h // 32)
    if packed:  # per_token_cast leaves the pad bytes unwritten; here 0
        def row_bytes(words):  # the (T, words) int32 as (T, 4 words) bytes
            return words.contiguous().view(torch.uint8).view(
                words.shape[0], -1)
        b = row_bytes(sf)
        assert not b[:, groups:].any()
        assert_equal(b[:, :groups], row_bytes(want_sf)[:, :groups])
    else:
        assert_equal(sf, want_sf)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_without_out_bf16_the_same_cast(dtype):
    x = torch.randn(300, 2048, device="cuda").to(dtype)
    (out, sf), out_bf16, rstd, norm_input = q.norm_forward_and_per_token_cast(
        x, None, 1e-6, round_sf=True)
    assert out_bf16 is None and rstd is None and norm_input is x
    y, _, _ = q.norm_forward(x, None, 1e-6)
    want_out, want_sf = q.per_token_cast(y, "e4m3", 32, round_sf=True)
    assert_equal(out, want_out)
    assert_equal(sf, want_sf)


@pytest.mark.parametrize("sf_layout", ["row", "col", "packed"])
def test_3d_as_its_batches(sf_layout):
    col, round_sf, packed = LAYOUTS[sf_layout]
    x = torch.randn(3, 77, 2048, device="cuda").bfloat16()
    res = torch.randn_like(x)
    (out, sf), out_bf16, rstd, norm_input = q.norm_forward_and_per_token_cast(
        x, None, 1e-6, residual=res, use_tma_aligned_col_major_sf=col,
        round_sf=round_sf, use_packed_ue8m0=packed, with_out_bf16=True,
        with_rstd=True)
    words = 64 // 4 if packed else 64
    pad = align(77, 4)
    assert sf.shape == (3, 77, words)
    assert sf.stride() == ((words * pad, 1, pad) if col else (77 * words,
                                                               words, 1))
    for i in range(3):
        (o, s), ob, r, ni = q.norm_forward_and_per_token_cast(
            x[i], None, 1e-6, residual=res[i].clone(),
            use_tma_aligned_col_major_sf=col, round_sf=round_sf,
            use_packed_ue8m0=packed, with_out_bf16=True, with_rstd=True)
        assert_equal(out[i], o)
        assert_equal(sf[i], s)
        assert_equal(out_bf16[i], ob)
        assert_equal(rstd[i], r)
        assert_equal(norm_input[i], ni)


def test_given_buffers_are_written_and_returned():
    x = torch.randn(128, 1024, device="cuda").bfloat16()
    out = torch.empty(128, 1024, device="cuda", dtype=torch.float8_e4m3fn)
    sf = torch.empty(128, 32, device="cuda")
    ob = torch.empty(128, 1024, device="cuda", dtype=torch.bfloat16)
    (o, s), b, _, _ = q.norm_forward_and_per_token_cast(
        x, None, 1e-6, out=(out, sf), out_bf16=ob, with_out_bf16=True)
    assert o is out and s is sf and b is ob
    (o2, s2), b2, _, _ = q.norm_forward_and_per_token_cast(
        x, None, 1e-6, with_out_bf16=True)
    assert_equal(out, o2)
    assert_equal(sf, s2)
    assert_equal(ob, b2)


def test_mistakes():
    x = torch.randn(8, 1024, device="cuda").bfloat16()
    with pytest.raises(ValueError, match="requires use_tma_aligned_col_major"):
        q.norm_forward_and_per_token_cast(x, None, 1e-6,
                                          use_packed_ue8m0=True)
    with pytest.raises(ValueError, match="'mega_moe_sf' has strides"):
        q.norm_forward_and_per_token_cast(
            x, None, 1e-6, round_sf=True, mega_moe_block_m=64,
            mega_moe_sf=torch.empty(8, 8, dtype=torch.int32, device="cuda"))


def mega_row(t, bm):
    i = t % bm
    return (t // bm) * (-(-bm // 128) * 128) + (i // 128) * 128 + \
        (i % 32) * 4 + (i % 128) // 32


@pytest.mark.parametrize("tokens,block", [(515, 64), (300, 200), (256, 128)])
def test_mega_moe_sf(tokens, block):
    h = 7168
    x = torch.randn(tokens, h, device="cuda").bfloat16()
    rows = -(-tokens // block) * (-(-block // 128) * 128)
    buffer = torch.full((h // 128, rows + 5), -1, dtype=torch.int32,
                        device="cuda")
    mega = buffer.T[:tokens]  # (T, H / 128), strides (1, rows + 5)
    (out, sf), _, _, _ = q.norm_forward_and_per_token_cast(
        x, None, 1e-6, use_tma_aligned_col_major_sf=True, round_sf=True,
        use_packed_ue8m0=True, mega_moe_sf=mega, mega_moe_block_m=block)
    written = torch.tensor([mega_row(t, block) for t in range(tokens)],
                           device="cuda")
    assert_equal(buffer.T[written], sf.contiguous())
    untouched = torch.ones(rows + 5, dtype=torch.bool, device="cuda")
    untouched[written] = False
    assert bool((buffer.T[untouched] == -1).all())
