"""tk_testing.py - the comparisons of TileKernels' tests (its
tile_kernels/testing/numeric.py, as the spec gives them, §12.3) for the
GPU tests of tilejit.tile_kernels."""
import torch


def layout(t):
    """dtype, shape and strides, as a string for a message."""
    return f"{t.dtype} {tuple(t.shape)} {t.stride()}"


def differing(a, b):
    """Why a and b are not equal: the layouts, or how many bytes differ."""
    if a.dtype != b.dtype or a.shape != b.shape or a.stride() != b.stride():
        return f"{layout(a)} vs {layout(b)}"
    ne = a.contiguous().view(torch.uint8) != b.contiguous().view(torch.uint8)
    return f"{int(ne.sum())} of {ne.numel()} bytes differ"


def assert_equal(x, y):
    """TileKernels' assert_equal: the same dtype, shape and strides (strides
    only where there are elements), then the same raw bytes (+0 and -0
    differ, fp8 and fp4 codes must match)."""
    same_strides = x.numel() == 0 or x.stride() == y.stride()
    assert x.dtype == y.dtype and x.shape == y.shape and same_strides, \
        differing(x, y)
    assert torch.equal(x.contiguous().view(torch.uint8),
                       y.contiguous().view(torch.uint8)), differing(x, y)


def calc_diff(x, y):
    """1 - 2 sum(x y) / sum(x^2 + y^2) in float64 (0 where both are 0)."""
    x, y = x.detach().double(), y.detach().double()
    den = (x * x + y * y).sum()
    return 0.0 if den == 0 else float(1 - 2 * (x * y).sum() / den)


def torch_sinkhorn(x, repeat, eps):
    """mHC's Sinkhorn normalisation composed in torch (§3.2): row softmax
    plus eps, a column normalization, then repeat - 1 row and column
    normalizations (each sum plus eps)."""
    y = x.softmax(-1) + eps
    y = y / (y.sum(-2, keepdim=True) + eps)
    for _ in range(repeat - 1):
        y = y / (y.sum(-1, keepdim=True) + eps)
        y = y / (y.sum(-2, keepdim=True) + eps)
    return y


def check_bias(x, ref):
    """Dequantized values not systematically below or above the originals:
    the share below (ties count half) within 10 / sqrt(n) of 1/2."""
    n = x.numel()
    if n == 0:
        return
    ratio = (float((x < ref).sum()) + float((x == ref).sum()) / 2) / n
    assert abs(ratio - 0.5) < 10 / n ** 0.5, f"share below {ratio:.4f}"


def align(n, a):
    return (n + a - 1) // a * a


def stream():
    """torch's current stream, for tilejit.ops' stream argument."""
    return torch.cuda.current_stream().cuda_stream


def moe_params():
    """TileKernels' generate_moe_params (default set): (local experts,
    expert-parallel ranks) x top-k for 4001 tokens sent by each rank."""
    return [(e, ep, k) for e, ep in ((9, 8), (32, 8), (4, 64))
            for k in (2, 6, 8, 9)]


def moe_topk_idx(local_experts, ep, topk, send_tokens=4001):
    """TileKernels' generate_topk_idx: the top-k of uniform bf16 scores over
    all ranks' experts, those of other ranks -1, rows with none of this
    rank's dropped (i64 (T, topk))."""
    scores = torch.rand(send_tokens * ep, local_experts * ep,
                        device="cuda").bfloat16()
    idx = scores.topk(topk, dim=1, sorted=False).indices
    idx[idx >= local_experts] = -1
    return idx[(idx >= 0).any(dim=1)].contiguous()


def fused_mapping(topk_idx, num_experts, alignment):
    """The fused layout in torch (spec §1.5, slots in ascending flat order
    within an expert): token_topk_to_pos i32 (T, K) and pos_to_expert i32
    (N,), -1 on padding; each expert's rows aligned to `alignment`."""
    t, k = topk_idx.shape
    flat = topk_idx.flatten()
    valid = flat >= 0
    counts = torch.bincount(flat[valid], minlength=num_experts)
    aligned = (counts + alignment - 1) // alignment * alignment
    starts = torch.cumsum(aligned, 0) - aligned
    firsts = torch.cumsum(counts, 0) - counts
    order = torch.argsort(torch.where(valid, flat, num_experts),
                          stable=True)[:int(valid.sum())]
    experts = flat[order]
    rank = torch.arange(order.numel(), device=flat.device) - firsts[experts]
    pos = starts[experts] + rank
    to_pos = torch.full((t * k,), -1, dtype=torch.int32, device=flat.device)
    to_pos[order] = pos.int()
    pos_to_expert = torch.full((int(aligned.sum()),), -1, dtype=torch.int32,
                               device=flat.device)
    pos_to_expert[pos] = experts.int()
    return to_pos.view(t, k), pos_to_expert
