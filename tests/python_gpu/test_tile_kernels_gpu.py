"""test_tile_kernels_gpu.py - tilejit.tile_kernels on the GPU machine with
torch: each bound TileKernels function against plain torch where torch
computes the same thing exactly (transposes, casts, dequantization, top-k
on distinct scores), against tilejit.ops' destination-passing call
elsewhere (which test_ops_gpu.py checks against the CPU references), and
its returns' dtypes, shapes and strides against TileKernels' (the SF
layouts of the spec, §3.3); out= buffers, a side stream, a CUDA graph, and
torch.compile (inductor, fullgraph) against eager.
Plain Python; prints `tile_kernels on the GPU: N passed, M failed`.
"""
import sys

import torch

import tilejit
from tilejit import tile_kernels as tk

passed = failed = 0


def report(name, ok, detail=""):
    global passed, failed
    passed += bool(ok)
    failed += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {name}{'' if ok else ': ' + detail}",
          flush=True)


def same(a, b):
    """Bitwise equal, same dtype, shape and strides."""
    if a.dtype != b.dtype or a.shape != b.shape or a.stride() != b.stride():
        return False
    return torch.equal(a.contiguous().view(torch.uint8),
                       b.contiguous().view(torch.uint8))


def differing(a, b):
    """Why same(a, b) fails: the layouts, or how many elements differ."""
    if a.dtype != b.dtype or a.shape != b.shape or a.stride() != b.stride():
        return f"{layout(a)} vs {layout(b)}"
    ne = a.contiguous().view(torch.uint8) != b.contiguous().view(torch.uint8)
    return f"{int(ne.sum())} of {ne.numel()} bytes differ"


def layout(t):
    return f"{t.dtype} {tuple(t.shape)} {t.stride()}"


def check(name, f):
    try:
        f()
    except Exception as e:  # a check that throws fails alone
        report(name, False, f"{type(e).__name__}: {e}")


def align(n, a):
    return (n + a - 1) // a * a


torch.manual_seed(0)
dev = "cuda"
M, K = 4001, 7168
x = torch.randn(M, K, device=dev).bfloat16()
q = tk.quant


def per_token_cast():
    out, sf = q.per_token_cast(x, "e4m3", 128)
    report("per_token_cast returns e4m3 (M, K), f32 (M, K/128) row-major",
           layout(out) == f"torch.float8_e4m3fn ({M}, {K}) ({K}, 1)" and
           layout(sf) == f"torch.float32 ({M}, {K // 128}) ({K // 128}, 1)",
           f"{layout(out)}; {layout(sf)}")
    o2 = torch.empty_like(out)
    s2 = torch.empty_like(sf)
    tilejit.ops.per_token_cast(x, None, o2, s2, fmt="e4m3",
                               num_per_channels=128,
                               stream=torch.cuda.current_stream().cuda_stream)
    report("per_token_cast = tilejit.ops.per_token_cast",
           same(out, o2) and same(sf, s2))
    back = q.per_token_cast_back((out, sf), "fp32", 128)
    want = (out.float().view(M, K // 128, 128) * sf[:, :, None]).view(M, K)
    report("per_token_cast_back = torch's q * sf", same(back, want))
    back16 = q.cast_back((out, sf), "bf16", (1, 128))
    report("cast_back to bf16 = torch's (q * sf).bfloat16()",
           same(back16, want.bfloat16()))
    err = (back - x.float()).abs().max().item()
    report(f"per_token_cast round trip within e4m3's precision ({err:.3g})",
           err <= x.float().abs().max().item() / 16)

    out, sf = q.per_token_cast(x, "e4m3", 128,
                               use_tma_aligned_col_major_sf=True,
                               round_sf=True, use_packed_ue8m0=True)
    n = K // 128
    report("packed UE8M0 SF: int32 (M, nK/4) strides (1, align(M, 4))",
           layout(sf) == f"torch.int32 ({M}, {(n + 3) // 4}) "
                         f"(1, {align(M, 4)})", layout(sf))
    buf = torch.empty(M, K, dtype=torch.float8_e4m3fn, device=dev)
    out3, sf3 = q.per_token_cast(x, "e4m3", 128, round_sf=True,
                                 out=(buf, None))
    ref, ref_sf = q.per_token_cast(x, "e4m3", 128, round_sf=True)
    report("out=(data, None) writes into data and allocates the SF",
           out3 is buf and same(out3, ref) and same(sf3, ref_sf))

    x4 = torch.randn(4096, K, device=dev).bfloat16()
    qb, sfb = q.per_block_cast(x4, "e4m3", (128, 128), round_sf=True)
    re, re_sf = q.per_token_cast((qb, sfb), "e4m3", 128,
                                 x_block_size=(128, 128), round_sf=True)
    o4 = torch.empty_like(re)
    s4 = torch.empty_like(re_sf)
    tilejit.ops.per_token_cast(qb, sfb, o4, s4, fmt="e4m3",
                               num_per_channels=128, round_sf=True,
                               x_block_m=128, x_block_k=128,
                               stream=torch.cuda.current_stream().cuda_stream)
    report("a QuantTensor input with x_block_size", same(re, o4) and
           same(re_sf, s4))


def per_block_cast():
    xb = torch.randn(4096, K, device=dev).bfloat16()
    out, sf = q.per_block_cast(xb, "e4m3", (128, 128))
    report("per_block_cast: f32 (M/128, K/128) row-major SF",
           layout(sf) == f"torch.float32 (32, {K // 128}) ({K // 128}, 1)",
           layout(sf))
    back = q.cast_back((out, sf), "fp32", (128, 128))
    want = (out.float().view(32, 128, K // 128, 128) *
            sf[:, None, :, None]).view(4096, K)
    report("cast_back of 128x128 blocks = torch's q * sf", same(back, want))
    only = q.per_block_cast_with_sf_only(xb, "e4m3", (128, 128))
    report("per_block_cast_with_sf_only = per_block_cast's SF",
           same(only, sf))
    # A precomputed SF quantizes with 1/sf (IEEE), not with the amax's own
    # inverse: torch's x * (1 / sf) cast to e4m3.
    pre = q.per_block_cast_with_precomputed_sf(xb, "e4m3", (128, 128), sf)
    inv = sf.reciprocal().repeat_interleave(128, 0).repeat_interleave(128, 1)
    want = (xb.float() * inv).to(torch.float8_e4m3fn)
    report("per_block_cast_with_precomputed_sf = torch's x * (1/sf) in e4m3",
           same(pre, want), differing(pre, want))
    only = q.per_token_cast_with_sf_only(x, "e4m3", 128)
    out, sf = q.per_token_cast(x, "e4m3", 128)  # M = 4001: a partial tile
    report("per_token_cast_with_sf_only = per_token_cast's SF",
           same(only, sf))
    pre = q.per_token_cast_with_precomputed_sf(x, "e4m3", 128, sf)
    want = (x.float() * sf.reciprocal().repeat_interleave(128, 1)).to(
        torch.float8_e4m3fn)
    report("per_token_cast_with_precomputed_sf = torch's x * (1/sf) in e4m3",
           same(pre, want), differing(pre, want))


def per_channel():
    xc = torch.randn(4096, 2048, device=dev).bfloat16()
    out, sf = q.per_channel_cast(xc, "e4m3", 128)
    report("per_channel_cast: e4m3 (M, K), f32 (M/128, K)",
           layout(out) == "torch.float8_e4m3fn (4096, 2048) (2048, 1)" and
           layout(sf) == "torch.float32 (32, 2048) (2048, 1)",
           f"{layout(out)}; {layout(sf)}")
    out_t, sf_t = q.per_channel_cast_and_transpose(xc, "e4m3", 128)
    report("per_channel_cast_and_transpose = per_channel_cast, transposed",
           same(out_t, out.t().contiguous()) and same(sf_t, sf))
    out_f, sf_f = q.per_channel_cast_fused(xc, "e4m3", 128)
    report("per_channel_cast_fused without pos_to_token = per_channel_cast",
           same(out_f, out) and same(sf_f, sf))


def casts():
    xf = torch.randn(1000, 512, device=dev) * 100
    report("cast f32 -> bf16 = torch's .bfloat16()",
           same(q.cast(xf, torch.bfloat16), xf.bfloat16()))
    xs = torch.randn(1000, 512, device=dev) * 10  # inside e4m3's range
    report("cast f32 -> e4m3 = torch's .to(float8_e4m3fn)",
           same(q.cast(xs, torch.float8_e4m3fn),
                xs.to(torch.float8_e4m3fn)))
    xe = xs.to(torch.float8_e4m3fn)
    report("cast e4m3 -> f32 = torch's .float()",
           same(q.cast(xe, torch.float32), xe.float()))
    xi = x[:256].clone()
    out, sf = q.per_token_cast(xi, "e4m3", 64)
    want = q.per_token_cast_back((out, sf), "bf16", 64)
    q.per_token_cast_and_cast_back(xi, "e4m3", 64)
    report("per_token_cast_and_cast_back in place = cast_back(cast(x))",
           same(xi, want))
    codes = torch.randint(-128, 128, (64, 32), dtype=torch.int8, device=dev)
    table = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5,
                          -2, -3, -4, -6], device=dev)
    b = codes.view(torch.uint8).long()
    want = torch.stack([table[b & 15], table[b >> 4]], -1).view(64, 64)
    report("unpack_from_e2m1fn_x2 = torch's table lookup (low nibble first)",
           same(q.unpack_from_e2m1fn_x2(codes), want))
    report("unpack_from_e2m1fn_x2 to bf16",
           same(q.unpack_from_e2m1fn_x2(codes, torch.bfloat16),
                want.bfloat16()))


def transposes():
    for dtype in (torch.bfloat16, torch.float32, torch.float8_e4m3fn):
        a = torch.randn(3, 256, 448, device=dev).to(dtype)
        report(f"batched_transpose {dtype} = torch's transpose",
               same(tk.transpose.batched_transpose(a),
                    a.transpose(1, 2).contiguous()))
        report(f"transpose {dtype} = torch's .t()",
               same(tk.transpose.transpose(a[0]), a[0].t().contiguous()))


def moe():
    scores = torch.randn(8001, 256, device=dev)
    idx = tk.moe.topk_gate(scores, 8)
    report("topk_gate = torch.topk's indices (distinct scores)",
           same(idx, torch.topk(scores, 8, dim=1).indices))
    w = torch.rand(8192, 8, device=dev)
    den, norm = tk.moe.normalize_weight(w)
    report("normalize_weight: (T,) sums and (T, K) weights, close to torch",
           den.shape == (8192,) and norm.shape == (8192, 8) and
           torch.allclose(den, w.sum(1), rtol=1e-6) and
           torch.allclose(norm, w / w.sum(1, keepdim=True), rtol=1e-6))
    ind = torch.randint(-1, 256, (4096, 8), device=dev)
    masked = tk.moe.mask_indices_by_tp(ind, 256, 8, 1, 2)
    m2 = torch.empty_like(ind)
    tilejit.ops.mask_indices_by_tp(ind, m2, n=256, num_ep_ranks=8,
                                   tp_rank=1, num_tp_ranks=2,
                                   stream=torch.cuda.current_stream()
                                   .cuda_stream)
    report("mask_indices_by_tp = tilejit.ops.mask_indices_by_tp",
           same(masked, m2))
    comb = torch.randn(2, 4096, 4, 4, device=dev)
    got = torch.empty_like(comb)
    r = tk.mhc.mhc_sinkhorn_fwd(comb, got, 10, 1e-6)
    want = torch.empty_like(comb)
    tilejit.ops.sinkhorn_normalize(comb, want, repeat=10, eps=1e-6,
                                   stream=torch.cuda.current_stream()
                                   .cuda_stream)
    report("mhc_sinkhorn_fwd writes its out (returns None)",
           r is None and same(got, want))


def swiglu():
    stream = torch.cuda.current_stream().cuda_stream
    T, H, E = 4096, 2048, 8
    xs = torch.randn(T, 2 * H, device=dev).bfloat16()
    # 2.1's psum layout: expert e's rows [align(psum[e - 1], 128), psum[e]).
    ends, end = [], 0
    for count in (500, 0, 700, 300, 900, 100, 400, 200):
        end = (end + 127) // 128 * 128 + count
        ends.append(end)
    psum = torch.tensor(ends, dtype=torch.int32, device=dev)  # 3528 <= T
    w = torch.rand(T, device=dev)
    # The forward forms leave padding rows unwritten (spec 2.1 §3.8): they
    # are compared on the valid rows, the backward's (zeroed) on all.
    valid, start = torch.zeros(T, dtype=torch.bool, device=dev), 0
    for e in ends:
        valid[(start + 127) // 128 * 128:e] = True
        start = e
    out = q.swiglu_forward(xs, "bf16", psum, w, 2.5, 10.0)
    want = torch.empty_like(out)
    tilejit.ops.swiglu_forward(xs, psum, w, want, None, fmt="bf16",
                               routed_scaling_factor=2.5, clamp_value=10.0,
                               token_alignment=128, stream=stream)
    report("swiglu_forward (2.1) = tilejit.ops.swiglu_forward (valid rows)",
           same(out[valid], want[valid]), differing(out[valid], want[valid]))
    o, sf = q.swiglu_forward_and_per_token_cast(xs, "e4m3", 128, psum, w,
                                                2.5)
    o2, sf2 = torch.empty_like(o), torch.empty_like(sf)
    tilejit.ops.swiglu_forward_and_per_token_cast_21(
        xs, psum, w, o2, sf2, None, fmt="e4m3", num_per_channels=128,
        routed_scaling_factor=2.5, stream=stream)
    report("swiglu_forward_and_per_token_cast (2.1) = its op (valid rows)",
           same(o[valid], o2[valid]) and same(sf[valid], sf2[valid]))
    g = torch.randn(T, H, device=dev).bfloat16()
    x_grad, weight_grad, act = q.swiglu_backward(xs, g, "bf16", psum, w, 2.5,
                                                 do_recompute=True)
    want = [torch.empty_like(x_grad), torch.empty_like(weight_grad),
            torch.empty_like(act)]
    tilejit.ops.swiglu_backward(xs, g, psum, w, *want, fmt="bf16",
                                routed_scaling_factor=2.5, stream=stream)
    report("swiglu_backward (2.1): x_grad, weight_grad, act_out = its op",
           all(same(a, b) for a, b in zip((x_grad, weight_grad, act), want)))


def swiglu_v1():
    from tilejit.tile_kernels import v1
    stream = torch.cuda.current_stream().cuda_stream
    E, H = 4096, 2048
    xs = torch.randn(E, 2 * H, device=dev).bfloat16()
    o, sf = v1.quant.swiglu_forward_and_per_token_cast(
        xs, "e4m3", 128, swiglu_clamp_value=10.0)
    o2, sf2 = torch.empty_like(o), torch.empty_like(sf)
    tilejit.ops.swiglu_forward_and_per_token_cast(
        xs, None, None, None, o2, sf2, None, fmt="e4m3", num_per_channels=128,
        swiglu_clamp_value=10.0, stream=stream)
    report("v1: 1.0's swiglu_forward_and_per_token_cast = its op",
           same(o, o2) and same(sf, sf2))


def reduce_and_weight_sf():
    stream = torch.cuda.current_stream().cuda_stream
    # 4096 tokens x top 8 over 32768 expanded rows, an eighth of them unused
    # (-1).
    xr = torch.randn(4096 * 8, 2048, device=dev).bfloat16()
    w = torch.rand(4096, 8, device=dev)
    pos = torch.randperm(4096 * 8, device=dev).view(4096, 8).int()
    pos[torch.rand(4096, 8, device=dev) < 0.125] = -1
    got = tk.moe.reduce_fused(xr, w, pos)
    want = torch.empty_like(got)
    tilejit.ops.reduce_fused(xr, None, w, pos, None, want, stream=stream)
    report("reduce_fused = tilejit.ops.reduce_fused (bf16)", same(got, want))
    sf = torch.tensor([0.5], device=dev)
    got = tk.moe.reduce_fused(xr, w, pos, "e4m3", sf)
    want = torch.empty_like(got)
    tilejit.ops.reduce_fused(xr, None, w, pos, sf, want, stream=stream)
    report("reduce_fused to e4m3 with a scale = its op",
           got.dtype == torch.float8_e4m3fn and same(got, want))
    scales = torch.exp2(torch.randint(-8, 8, (2, 56, 16), device=dev).float())
    (a, b), = q.batched_transpose_weight_sf([scales], 128, [True], [None])
    a2, b2 = torch.empty_like(a), torch.empty_like(b)
    tilejit.ops.batched_transpose_weight_sf(scales, a2, b2, block_size=128,
                                            transpose_sf1=True, stream=stream)
    report("batched_transpose_weight_sf = its op", same(a, a2) and
           same(b, b2))


def streams_and_graphs():
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        out, sf = q.per_token_cast(x, "e4m3", 128)
    s.synchronize()
    ref, ref_sf = q.per_token_cast(x, "e4m3", 128)
    report("on a side stream (the current torch stream)",
           same(out, ref) and same(sf, ref_sf))
    xg = x.clone()
    q.per_token_cast(xg, "e4m3", 128)  # compiled before capture
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        gout, gsf = q.per_token_cast(xg, "e4m3", 128)
    xg.copy_(x.flip(0))
    g.replay()
    torch.cuda.synchronize()
    ref, ref_sf = q.per_token_cast(x.flip(0), "e4m3", 128)
    report("captured in a CUDA graph, replayed on new inputs",
           same(gout, ref) and same(gsf, ref_sf))


def compiled():
    def layer(x, scores):
        out, sf = q.per_token_cast(x, "e4m3", 128, round_sf=True)
        return q.per_token_cast_back((out, sf), "bf16", 128), \
            tk.moe.topk_gate(scores, 8)
    scores = torch.randn(M, 256, device=dev)
    want = layer(x, scores)
    got = torch.compile(layer, fullgraph=True)(x, scores)
    report("torch.compile (inductor, fullgraph) = eager",
           same(got[0], want[0]) and same(got[1], want[1]))
    torch.library.opcheck(torch.ops.tilejit.topk_gate.default,
                          (scores, 8, [""], []))
    report("torch.library.opcheck of torch.ops.tilejit.topk_gate", True)


def errors():
    try:
        q.per_token_cast(x, "e4m3", 100)
        report("the op's rule raises ValueError", False, "no error")
    except ValueError as e:
        report("the op's rule raises ValueError with the C++ text",
               str(e) == "per_token_cast: argument 'num_per_channels' is "
               "100; requires 16, 32, 64, 128, or K = 7168 when K is a "
               "multiple of 64", str(e))


for f in (per_token_cast, per_block_cast, per_channel, casts, transposes, moe,
          swiglu, swiglu_v1, reduce_and_weight_sf, streams_and_graphs,
          compiled, errors):
    check(f.__name__, f)
print(f"tile_kernels on the GPU: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
