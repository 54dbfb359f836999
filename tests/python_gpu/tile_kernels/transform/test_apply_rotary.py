"""tilejit.tile_kernels.transform.apply_rotary on the GPU (TileKernels
2.1): query and key rotated in place against a torch reference that
computes a c - b s and a s + b c exactly (float64) and rounds once to f32
and then to x's dtype, as the kernel's FMAs nearly do: within a rounding of
x's dtype; positions, offsets, 4-D input, GPT-J pairs, the inverse
rotation (which undoes the rotation) and a partial-RoPE slice."""
import pytest
import torch

from tilejit import tile_kernels as tk


def cache_of(length, r):
    """A cos/sin cache as models build it: angles p * theta^(-2i/r)."""
    inv = 10000.0 ** (-torch.arange(0, r, 2, device="cuda").double() / r)
    ang = torch.arange(length, device="cuda").double().unsqueeze(1) * inv
    return torch.cat([ang.cos(), ang.sin()], 1).float()


def reference(x, cache, pos, interleaved, conjugate):
    r = x.shape[-1]
    c = cache[pos, :r // 2].double().unsqueeze(-2)  # (..., 1, R/2)
    s = cache[pos, r // 2:].double().unsqueeze(-2)
    if conjugate:
        s = -s
    xd = x.double()
    a, b = ((xd[..., 0::2], xd[..., 1::2]) if interleaved else
            (xd[..., :r // 2], xd[..., r // 2:]))
    a2 = (a * c - b * s).float()
    b2 = (a * s + b * c).float()
    out = xd.float().clone()
    if interleaved:
        out[..., 0::2], out[..., 1::2] = a2, b2
    else:
        out[..., :r // 2], out[..., r // 2:] = a2, b2
    return out.to(x.dtype)


def close(got, want):
    # f32: b s is rounded before the FMA (an ulp of |b s| <= ~10).
    tol = (8e-3, 1e-5) if got.dtype == torch.bfloat16 else (2e-6, 1e-5)
    torch.testing.assert_close(got.double(), want.double(), rtol=tol[0],
                               atol=tol[1])


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("r", [64, 128])
@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("with_positions", [False, True])
def test_apply_rotary(dtype, r, interleaved, with_positions):
    t, offset = 1000, 7
    cache = cache_of(4096, r)
    q = torch.randn(t, 16, r, device="cuda").to(dtype)
    k = torch.randn(t, 2, r, device="cuda").to(dtype)
    positions = (torch.randint(0, 4000, (t,), device="cuda")
                 if with_positions else None)
    pos = (positions if with_positions
           else torch.arange(t, device="cuda")) + offset
    want_q = reference(q, cache, pos, interleaved, False)
    want_k = reference(k, cache, pos, interleaved, False)
    q0, k0 = q.clone(), k.clone()
    assert tk.transform.apply_rotary(q, cache, k, positions, interleaved,
                                     seqlen_offset=offset) is None
    close(q, want_q)
    close(k, want_k)
    # The inverse rotation brings them back (within two roundings).
    tk.transform.apply_rotary(q, cache, k, positions, interleaved,
                              conjugate=True, seqlen_offset=offset)
    tol = 2e-2 if dtype == torch.bfloat16 else 1e-5
    torch.testing.assert_close(q.float(), q0.float(), rtol=tol, atol=tol)
    torch.testing.assert_close(k.float(), k0.float(), rtol=tol, atol=tol)


def test_apply_rotary_batched_and_sliced():
    b, t, r = 3, 200, 64
    cache = cache_of(1024, r)
    wide = torch.randn(b, t, 8, 192, device="cuda").bfloat16()
    q = wide[..., -r:]  # partial RoPE: the last R columns of each head
    positions = torch.randint(0, 1024, (b, t), device="cuda",
                              dtype=torch.int32)
    want = reference(q, cache, positions.long(), False, False)
    rest = wide[..., :-r].clone()
    tk.transform.apply_rotary(q, cache, positions=positions)
    close(q, want)
    assert torch.equal(wide[..., :-r], rest)  # the other columns untouched


def test_apply_rotary_errors():
    q = torch.randn(10, 4, 128, device="cuda").bfloat16()
    with pytest.raises(ValueError, match="argument 'key'"):
        tk.transform.apply_rotary(q, cache_of(16, 128),
                                  key=torch.randn(9, 4, 128, device="cuda")
                                  .bfloat16())
