"""tile_kernels.transform (TileKernels 2.1) on tilejit: apply_rotary."""
import math

from ._binding import same, tk_op

_rotate = tk_op(
    "apply_rotary",
    "x, cos_sin_cache, positions=None, interleaved=False, conjugate=False, "
    "seqlen_offset=0",
    name="_rotate", convert=[same("out", "x")], returns=None)


def apply_rotary(query, cos_sin_cache, key=None, positions=None,
                 interleaved=False, conjugate=False, seqlen_offset=0):
    """TileKernels' apply_rotary, on tilejit's op apply_rotary: rotates the
    heads of `query` (and of `key`) in place by the cos and sin of
    `cos_sin_cache`'s row at each token's position (seqlen_offset +
    positions[b, t], or + t); query then key, one launch each, as
    TileKernels. A position outside the cache reads cos = sin = 0.

    query: bf16 or f32 (T, Hq, R) or (B, T, Hq, R), R 64 or 128, stride 1
        along R (a slice q[..., -R:] for partial RoPE)
    cos_sin_cache: f32 (L, R), cos in [0, R/2), sin in [R/2, R)
    key: None, or query's dtype, rank and tokens, Hk heads
    positions: None, or int32/int64 (T,) or (B, T)
    interleaved: GPT-J pairs (2i, 2i+1), else NeoX (i, i + R/2)
    conjugate: the inverse rotation
    seqlen_offset: added to every position (int32)
    """
    if key is not None:
        lead = tuple(query.shape[:-2])
        if (key.dtype != query.dtype or len(key.shape) != len(query.shape)
                or tuple(key.shape[:-2]) != lead):
            raise ValueError(
                f"argument 'key' is {key.dtype} {tuple(key.shape)}; requires "
                f"query's dtype {query.dtype}, rank {len(query.shape)} and "
                f"tokens {lead}")
    for x in (query, key):
        if x is not None and math.prod(x.shape) > 0:
            _rotate(x, cos_sin_cache, positions, interleaved, conjugate,
                    seqlen_offset)


apply_rotary.tilejit_bound = True
