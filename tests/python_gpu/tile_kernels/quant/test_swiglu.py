"""tilejit.tile_kernels.quant's SwiGLU ops on the GPU, in 2.1's forms (the
psum layout: expert e's rows [align(psum[e - 1], 128), psum[e])) and
1.0's (tilejit.tile_kernels.v1), equal to tilejit.ops' destination-passing
calls (checked against the CPU references by test_ops_gpu.py); the forward
forms leave padding rows unwritten (spec 2.1 §3.8) and are compared on the
valid rows, the backward's (zeroed) on all."""
import pytest
import torch

import tilejit
from tilejit import tile_kernels as tk
from tk_testing import assert_equal, stream

q = tk.quant
COUNTS = (500, 0, 700, 300, 900, 100, 400, 200)  # 8 experts, one empty


def layout_21(hidden, num_tokens=4096):
    ends, end = [], 0
    for count in COUNTS:
        end = (end + 127) // 128 * 128 + count
        ends.append(end)
    psum = torch.tensor(ends, dtype=torch.int32, device="cuda")
    valid, start = torch.zeros(num_tokens, dtype=torch.bool,
                               device="cuda"), 0
    for e in ends:
        valid[(start + 127) // 128 * 128:e] = True
        start = e
    x = torch.randn(num_tokens, 2 * hidden, device="cuda").bfloat16()
    w = torch.rand(num_tokens, device="cuda")
    return x, psum, w, valid


@pytest.mark.parametrize("hidden", [2048, 7168])
def test_swiglu_forward(hidden):
    x, psum, w, valid = layout_21(hidden)
    out = q.swiglu_forward(x, "bf16", psum, w, 2.5, 10.0)
    want = torch.empty_like(out)
    tilejit.ops.swiglu_forward(x, psum, w, want, None, fmt="bf16",
                               routed_scaling_factor=2.5, clamp_value=10.0,
                               token_alignment=128, stream=stream())
    assert_equal(out[valid], want[valid])


@pytest.mark.parametrize("hidden", [2048, 7168])
def test_swiglu_forward_and_per_token_cast(hidden):
    x, psum, w, valid = layout_21(hidden)
    o, sf = q.swiglu_forward_and_per_token_cast(x, "e4m3", 128, psum, w, 2.5)
    o2, sf2 = torch.empty_like(o), torch.empty_like(sf)
    tilejit.ops.swiglu_forward_and_per_token_cast_21(
        x, psum, w, o2, sf2, None, fmt="e4m3", num_per_channels=128,
        routed_scaling_factor=2.5, stream=stream())
    assert_equal(o[valid], o2[valid])
    assert_equal(sf[valid], sf2[valid])


@pytest.mark.parametrize("hidden", [2048, 7168])
def test_swiglu_backward(hidden):
    x, psum, w, _ = layout_21(hidden)
    g = torch.randn(x.shape[0], hidden, device="cuda").bfloat16()
    got = q.swiglu_backward(x, g, "bf16", psum, w, 2.5, do_recompute=True)
    want = [torch.empty_like(t) for t in got]
    tilejit.ops.swiglu_backward(x, g, psum, w, *want, fmt="bf16",
                                routed_scaling_factor=2.5, stream=stream())
    for a, b in zip(got, want):  # x_grad, weight_grad, act_out
        assert_equal(a, b)


def test_v1_swiglu_forward_and_per_token_cast():
    from tilejit.tile_kernels import v1
    x = torch.randn(4096, 4096, device="cuda").bfloat16()
    o, sf = v1.quant.swiglu_forward_and_per_token_cast(
        x, "e4m3", 128, swiglu_clamp_value=10.0)
    o2, sf2 = torch.empty_like(o), torch.empty_like(sf)
    tilejit.ops.swiglu_forward_and_per_token_cast(
        x, None, None, None, o2, sf2, None, fmt="e4m3", num_per_channels=128,
        swiglu_clamp_value=10.0, stream=stream())
    assert_equal(o, o2)
    assert_equal(sf, sf2)
