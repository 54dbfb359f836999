"""tilejit.tile_kernels.quant's per-token casts on the GPU: returns laid out
as TileKernels', equal to tilejit.ops' destination-passing call (which
test_ops_gpu.py checks against the CPU reference), dequantized by torch
within e4m3's precision and without bias."""
import pytest
import torch

import tilejit
from tilejit import tile_kernels as tk
from tk_testing import (align, assert_equal, calc_diff, check_bias, layout,
                        stream)

q = tk.quant


def torch_back(out, sf, num_per_channels):
    """torch's dequantization: each group of channels times its SF."""
    k = out.shape[1]
    return out.float() * sf.repeat_interleave(num_per_channels, 1)[:, :k]


@pytest.mark.parametrize("num_tokens", [4001, 8001])
@pytest.mark.parametrize("hidden", [576, 2048, 7168])
@pytest.mark.parametrize("num_per_channels", [64, 128])
@pytest.mark.parametrize("round_sf", [False, True])
def test_per_token_cast(num_tokens, hidden, num_per_channels, round_sf):
    x = torch.randn(num_tokens, hidden, device="cuda").bfloat16()
    out, sf = q.per_token_cast(x, "e4m3", num_per_channels,
                               round_sf=round_sf)
    n = -(-hidden // num_per_channels)
    assert layout(out) == (f"torch.float8_e4m3fn ({num_tokens}, {hidden}) "
                           f"({hidden}, 1)")
    assert layout(sf) == f"torch.float32 ({num_tokens}, {n}) ({n}, 1)"
    o2, s2 = torch.empty_like(out), torch.empty_like(sf)
    tilejit.ops.per_token_cast(x, None, o2, s2, fmt="e4m3",
                               num_per_channels=num_per_channels,
                               round_sf=round_sf, stream=stream())
    assert_equal(out, o2)
    assert_equal(sf, s2)
    back = torch_back(out, sf, num_per_channels)
    assert_equal(q.per_token_cast_back((out, sf), "fp32", num_per_channels),
                 back)
    if round_sf:
        assert torch.equal(sf, torch.exp2(torch.log2(sf).round()))
    assert calc_diff(back, x.float()) < 2e-3
    check_bias(back, x.float())


def test_per_token_cast_back_to_bf16():
    x = torch.randn(4001, 7168, device="cuda").bfloat16()
    out, sf = q.per_token_cast(x, "e4m3", 128)
    assert_equal(q.cast_back((out, sf), "bf16", (1, 128)),
                 torch_back(out, sf, 128).bfloat16())


@pytest.mark.parametrize("num_tokens", [4001, 8001])
@pytest.mark.parametrize("hidden", [2048, 7168])
def test_packed_ue8m0_sf(num_tokens, hidden):
    x = torch.randn(num_tokens, hidden, device="cuda").bfloat16()
    out, sf = q.per_token_cast(x, "e4m3", 128,
                               use_tma_aligned_col_major_sf=True,
                               round_sf=True, use_packed_ue8m0=True)
    n = hidden // 128
    assert layout(sf) == (f"torch.int32 ({num_tokens}, {(n + 3) // 4}) "
                          f"(1, {align(num_tokens, 4)})")
    ref, ref_sf = q.per_token_cast(x, "e4m3", 128, round_sf=True)
    assert_equal(out, ref)
    # Packed: four UE8M0 exponents a word, the first in the low byte.
    codes = sf.contiguous().view(torch.uint8).view(num_tokens, -1)[:, :n]
    assert torch.equal(torch.exp2(codes.float() - 127), ref_sf)


def test_out_argument():
    x = torch.randn(4001, 7168, device="cuda").bfloat16()
    buf = torch.empty(4001, 7168, dtype=torch.float8_e4m3fn, device="cuda")
    out, sf = q.per_token_cast(x, "e4m3", 128, round_sf=True,
                               out=(buf, None))
    ref, ref_sf = q.per_token_cast(x, "e4m3", 128, round_sf=True)
    assert out is buf
    assert_equal(out, ref)
    assert_equal(sf, ref_sf)


def test_quant_tensor_input():
    x = torch.randn(4096, 7168, device="cuda").bfloat16()
    qb, sfb = q.per_block_cast(x, "e4m3", (128, 128), round_sf=True)
    re, re_sf = q.per_token_cast((qb, sfb), "e4m3", 128,
                                 x_block_size=(128, 128), round_sf=True)
    o2, s2 = torch.empty_like(re), torch.empty_like(re_sf)
    tilejit.ops.per_token_cast(qb, sfb, o2, s2, fmt="e4m3",
                               num_per_channels=128, round_sf=True,
                               x_block_m=128, x_block_k=128, stream=stream())
    assert_equal(re, o2)
    assert_equal(re_sf, s2)


def test_with_sf_only_and_precomputed_sf():
    x = torch.randn(4001, 7168, device="cuda").bfloat16()
    out, sf = q.per_token_cast(x, "e4m3", 128)  # 4001: a partial tile
    assert_equal(q.per_token_cast_with_sf_only(x, "e4m3", 128), sf)
    # A precomputed SF quantizes with 1/sf (IEEE): torch's x * (1 / sf).
    pre = q.per_token_cast_with_precomputed_sf(x, "e4m3", 128, sf)
    assert_equal(pre, (x.float() * sf.reciprocal().repeat_interleave(128, 1))
                 .to(torch.float8_e4m3fn))


def test_error_is_the_cpp_text():
    x = torch.randn(64, 7168, device="cuda").bfloat16()
    with pytest.raises(ValueError) as e:
        q.per_token_cast(x, "e4m3", 100)
    assert str(e.value) == ("per_token_cast: argument 'num_per_channels' is "
                            "100; requires 16, 32, 64, 128, or K = 7168 when "
                            "K is a multiple of 64")
