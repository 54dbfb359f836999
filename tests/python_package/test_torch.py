"""test_torch.py - tilejit.tile_kernels with torch, without a GPU: every
declared op with outputs to allocate is a torch custom op
(torch.ops.tilejit.<op>) whose fake implementation gives the outputs'
layouts, so TileKernels' calls on meta tensors return the right dtypes,
shapes and strides, and torch.compile traces them as single nodes with no
graph break (fullgraph=True). Plain Python; prints `torch: N passed, M
failed`; exits 1 when M > 0.
"""
import inspect

import torch
from torch._dynamo.testing import CompileCounter

import tilejit
from tilejit import tile_kernels as tk

from checks import finish, report

def meta(shape, dtype=torch.bfloat16):
    return torch.empty(shape, dtype=dtype, device="meta")


def layout(t):
    return (str(t.dtype).removeprefix("torch."), tuple(t.shape),
            tuple(t.stride()))


def expect(name, got, *want):
    got = [layout(t) for t in (got if isinstance(got, tuple) else (got,))]
    report(name, got == list(want), f"{got}")


# The first tilejit call of the process inside a trace (the custom ops were
# registered at import: they cannot be inside one).
first = CompileCounter()
got = torch.compile(lambda s: tk.moe.topk_gate(s, 8), fullgraph=True,
                    backend=first)(torch.empty(64, 256, device="meta"))
report("the process's first call traced (fullgraph)",
       first.frame_count == 1 and tuple(got.shape) == (64, 8),
       f"frames {first.frame_count}")

M, K = 4001, 7168
x = meta((M, K))
q = tk.quant
expect("per_token_cast", q.per_token_cast(x, "e4m3", 128),
       ("float8_e4m3fn", (M, K), (K, 1)), ("float32", (M, 56), (56, 1)))
expect("per_token_cast, packed UE8M0 column-major SF",
       q.per_token_cast(x, "e4m3", 128, use_tma_aligned_col_major_sf=True,
                        round_sf=True, use_packed_ue8m0=True),
       ("float8_e4m3fn", (M, K), (K, 1)), ("int32", (M, 14), (1, 4004)))
expect("per_token_cast, TMA-aligned column-major f32 SF",
       q.per_token_cast(x, "e4m3", 128, use_tma_aligned_col_major_sf=True),
       ("float8_e4m3fn", (M, K), (K, 1)), ("float32", (M, 56), (1, 4004)))
(nq, nsf), nb, nr, ni = q.norm_forward_and_per_token_cast(
    x, None, 1e-6, use_tma_aligned_col_major_sf=True, round_sf=True,
    use_packed_ue8m0=True, with_out_bf16=True, with_rstd=True)
expect("norm_forward_and_per_token_cast, packed UE8M0 column-major SF",
       (nq, nsf, nb, nr), ("float8_e4m3fn", (M, K), (K, 1)),
       ("int32", (M, 56), (1, 4004)), ("bfloat16", (M, K), (K, 1)),
       ("float32", (M,), (1,)))
report("norm_forward_and_per_token_cast's norm_input is x", ni is x)
x3 = meta((3, 77, 2048))
(nq, nsf), nb, nr, ni = q.norm_forward_and_per_token_cast(
    x3, None, 1e-6, round_sf=True, with_rstd=True)
expect("norm_forward_and_per_token_cast of a 3-D x, row-major SF",
       (nq, nsf, nr), ("float8_e4m3fn", (3, 77, 2048), (77 * 2048, 2048, 1)),
       ("float32", (3, 77, 64), (77 * 64, 64, 1)), ("float32", (3, 77), (77, 1)))
report("norm_forward_and_per_token_cast without out_bf16: None",
       nb is None and ni is x3)
from tilejit.tile_kernels.modeling import engram as _layer  # noqa: E402
expect("modeling.engram.engram_gate on meta tensors",
       _layer.engram_gate(meta((8, 4, 512)), meta((8, 5 * 512)),
                          meta((4, 512)), meta((4, 512)), 1e-6, 1e-20),
       ("bfloat16", (8, 4, 512), (2048, 512, 1)))
from tilejit.tile_kernels.modeling import mhc as _mhc  # noqa: E402
B, S, H = 2, 77, 1280


def f32(*shape, grad=False):
    return meta(shape, torch.float32).requires_grad_(grad)


res = meta((B, S, 4, H)).requires_grad_()
fn, scale, base = f32(24, 4 * H, grad=True), f32(3, grad=True), f32(24)
layer_input, (post_mix, comb_mix) = _mhc.mhc_pre(
    res, fn, scale, base, norm_weight=f32(4 * H, grad=True))
expect("modeling.mhc.mhc_pre (autograd): layer_input, post_mix, comb_mix",
       (layer_input, post_mix, comb_mix),
       ("bfloat16", (B, S, H), (S * H, H, 1)),
       ("float32", (B, S, 4, 1), (S * 4, 4, 1, 1)),
       ("float32", (B, S, 4, 4), (S * 16, 16, 4, 1)))
report("and records its graph (layer_input has a grad_fn)",
       type(layer_input.grad_fn).__name__ == "MHCPreApplyMixBackward",
       f"{layer_input.grad_fn}")
with torch.no_grad():
    fused = _mhc.mhc_pre(res, fn, scale, base)
expect("modeling.mhc.mhc_pre without autograd (mhc_pre_big_fuse)",
       (fused[0], *fused[1]), ("bfloat16", (B, S, H), (S * H, H, 1)),
       ("float32", (B, S, 4, 1), (S * 4, 4, 1, 1)),
       ("float32", (B, S, 4, 4), (S * 16, 16, 4, 1)))
expect("modeling.mhc.ops.mhc_post",
       _mhc.ops.mhc_post(layer_input, res, post_mix, comb_mix),
       ("bfloat16", (B, S, 4, H), (S * 4 * H, 4 * H, H, 1)))
expect("modeling.mhc.mhc_head of 1.0's padded fn",
       _mhc.mhc_head(res, f32(24, 4 * H), f32(1), f32(4)),
       ("bfloat16", (B, S, H), (S * H, H, 1)))
expect("modeling.mhc.expand_from_embedding",
       _mhc.expand_from_embedding(meta((B, S, H))),
       ("bfloat16", (B, S, 4, H), (S * 4 * H, 4 * H, H, 1)))
try:
    _mhc.mhc_pre(res, fn, scale, base, mhc_mult=8)
    report("mhc_pre of a residual of 4 streams with mhc_mult=8 raises",
           False, "returned")
except ValueError as e:
    report("mhc_pre of a residual of 4 streams with mhc_mult=8 raises",
           str(e) == "argument 'residual' has shape [2, 77, 4, 1280]; "
           "requires (..., mhc_mult, H) with mhc_mult = 8", str(e))
try:
    _mhc.ops.mhc_pre_norm_fn(res, f32(24, 4 * 1024), None, 1e-6)
    report("mhc_pre_norm_fn of fn with the wrong width raises", False,
           "returned")
except ValueError as e:
    report("mhc_pre_norm_fn of fn with the wrong width raises",
           str(e) == "argument 'mhc_fn' has shape [24, 4096]; requires "
           "(mhc * (mhc + 2), mhc * H) of residual's (..., mhc, H) = "
           "[2, 77, 4, 1280]", str(e))
try:
    _mhc.ops.mhc_pre_norm_fn(meta((B, S, 4, 2 * H))[..., :H], fn, None, 1e-6)
    report("mhc_pre_norm_fn of a residual not contiguous raises", False,
           "returned")
except ValueError as e:
    report("mhc_pre_norm_fn of a residual not contiguous raises",
           str(e) == "argument 'residual' of shape [2, 77, 4, 1280] has "
           "strides [788480, 10240, 2560, 1]; requires a contiguous tensor "
           "(as TileKernels)", str(e))
report("modeling.mhc.ops has 1.0's autograd functions by name",
       all(issubclass(getattr(_mhc.ops, n), torch.autograd.Function)
           for n in ("ExpandToMHCFn", "MHCPreNormFn", "MHCPreSplitMixes",
                     "MHCPreApplyMix", "MHCPost", "MHCHeadComputeMix")))
expect("per_token_cast e2m1: packed int8", q.per_token_cast(x, "e2m1", 32),
       ("int8", (M, K // 2), (K // 2, 1)), ("float32", (M, 224), (224, 1)))
expect("per_token_cast e5m6: 12-bit codes as bytes",
       q.per_token_cast(meta((M, 4096)), "e5m6", 4096),
       ("uint8", (M, 6144), (6144, 1)), ("float32", (M, 1), (1, 1)))
expect("per_block_cast", q.per_block_cast(meta((4096, K)), "e4m3",
                                          (128, 128)),
       ("float8_e4m3fn", (4096, K), (K, 1)), ("float32", (32, 56), (56, 1)))
data = meta((M, K), torch.float8_e4m3fn)
expect("cast_back: (M, K) from the data's shape",
       q.cast_back((data, meta((M, 56), torch.float32)), "bf16", (1, 128)),
       ("bfloat16", (M, K), (K, 1)))
expect("per_token_cast_back of packed e2m1 to f32",
       q.per_token_cast_back((meta((M, K // 2), torch.int8),
                              meta((M, 224), torch.float32)), "fp32", 32),
       ("float32", (M, K), (K, 1)))
expect("cast to a dtype argument", q.cast(x, torch.float8_e4m3fn),
       ("float8_e4m3fn", (M, K), (K, 1)))
expect("per_channel_cast_and_transpose",
       q.per_channel_cast_and_transpose(meta((4096, 2048)), "e4m3", 128),
       ("float8_e4m3fn", (2048, 4096), (4096, 1)),
       ("float32", (32, 2048), (2048, 1)))
T, H = 4096, 2048
psum = meta((8,), torch.int32)
expect("swiglu_forward_and_per_token_cast (2.1, psum rows)",
       q.swiglu_forward_and_per_token_cast(meta((T, 2 * H)), "e4m3", 128,
                                           psum, meta((T,), torch.float32),
                                           2.5),
       ("float8_e4m3fn", (T, H), (H, 1)), ("float32", (T, 16), (16, 1)))
got = q.swiglu_backward(meta((T, 2 * H)), meta((T, H)), "bf16", psum,
                        meta((T,), torch.float32), 2.5, do_recompute=True)
report("swiglu_backward's optional outputs when asked: x_grad, weight_grad, "
       "act_out", [layout(t) for t in got] ==
       [("bfloat16", (T, 2 * H), (2 * H, 1)), ("float32", (T,), (1,)),
        ("bfloat16", (T, H), (H, 1))], f"{[layout(t) for t in got]}")
got = q.swiglu_backward(meta((T, 2 * H)), meta((T, H)), "bf16", psum)
report("and only x_grad when none is", len(got) == 1, f"{got}")
expect("swiglu_forward to fp32", q.swiglu_forward(meta((T, 2 * H)), "fp32"),
       ("float32", (T, H), (H, 1)))
got = q.swiglu_backward_and_per_token_cast(
    (meta((T, 2 * H), torch.float8_e4m3fn), meta((T, 32), torch.float32)),
    meta((T, H)), "e4m3", 128, psum)
report("swiglu_backward_and_per_token_cast: x_grad, (x_grad_fp8, sf)",
       len(got) == 2 and layout(got[0]) == ("bfloat16", (T, 2 * H),
                                            (2 * H, 1)) and
       layout(got[1][0]) == ("float8_e4m3fn", (T, 2 * H), (2 * H, 1)) and
       layout(got[1][1]) == ("float32", (T, 32), (32, 1)), f"{got}")
expect("reduce_fused to e4m3 with a scale",
       tk.moe.reduce_fused(meta((8192, 7168)), meta((4096, 8), torch.float32),
                           meta((4096, 8), torch.int32), "e4m3",
                           meta((1,), torch.float32)),
       ("float8_e4m3fn", (4096, 7168), (7168, 1)))
expect("reduce_fused of (x, x_sf) keeps x's dtype",
       tk.moe.reduce_fused((meta((8192, 7168)), meta((8192,), torch.float32)),
                           None, meta((4096, 8), torch.int32)),
       ("bfloat16", (4096, 7168), (7168, 1)))
(a, b), (c, d) = q.batched_transpose_weight_sf(
    [meta((56, 16), torch.float32), meta((2, 56, 16), torch.float32)], 128,
    [False, True], [None, None])
report("batched_transpose_weight_sf: 2-D and 3-D weights, sf1 transposed",
       [layout(t) for t in (a, b, c, d)] ==
       [("int32", (7168, 4), (1, 7168)), ("int32", (2048, 14), (1, 2048)),
        ("int32", (2, 7168, 4), (28672, 1, 7168)),
        ("int32", (2, 14, 2048), (28672, 2048, 1))],
       f"{[layout(t) for t in (a, b, c, d)]}")
from tilejit.tile_kernels import v1  # noqa: E402
expect("v1: 1.0's swiglu_forward_and_per_token_cast (expanded rows)",
       v1.quant.swiglu_forward_and_per_token_cast(meta((T, 2 * H)), "e4m3",
                                                  128),
       ("float8_e4m3fn", (T, H), (H, 1)), ("float32", (T, 16), (16, 1)))
got = v1.quant.swiglu_backward_and_per_token_cast(
    (meta((T, 2 * H), torch.float8_e4m3fn), meta((T, 32), torch.float32)),
    meta((T, H)), meta((2048, 8), torch.float32), meta((T,), torch.int32),
    meta((2048, 8), torch.int32), 128)
report("v1: 1.0's swiglu_backward_and_per_token_cast returns "
       "(out, (x_grad_fp8, sf), x_grad, weight_grad)",
       len(got) == 4 and layout(got[0]) == ("bfloat16", (T, H), (H, 1)) and
       layout(got[1][1]) == ("float32", (T, 32), (32, 1)) and
       layout(got[3]) == ("float32", (2048, 8), (8, 1)), f"{got}")
expect("batched_transpose", tk.transpose.batched_transpose(
    meta((3, 256, 448))), ("bfloat16", (3, 448, 256), (114688, 256, 1)))
expect("topk_gate", tk.moe.topk_gate(meta((M, 256), torch.float32), 8),
       ("int64", (M, 8), (8, 1)))
expect("normalize_weight", tk.moe.normalize_weight(
    meta((M, 8), torch.float32)), ("float32", (M,), (1,)),
    ("float32", (M, 8), (8, 1)))

with_outputs = [d["name"] for d in tilejit.declarations()
                if any(t["output"] for t in d["tensors"])]
missing = [n for n in with_outputs if not hasattr(torch.ops.tilejit, n)]
report(f"every op with outputs is torch.ops.tilejit.<op> "
       f"({len(with_outputs)})", not missing, f"{missing}")
schema = str(torch.ops.tilejit.topk_gate.default._schema)
report("a schema from the declaration", schema ==
       "tilejit::topk_gate(Tensor scores, int num_topk, str[] out_dtypes, "
       "bool[] want) -> Tensor", schema)

try:
    q.per_token_cast(x, "e4m3", 100)
    report("the op's rule on meta tensors", False, "no error")
except ValueError as e:
    report("the op's rule on meta tensors raises the C++ text", str(e) ==
           "per_token_cast: argument 'num_per_channels' is 100; requires 16, "
           "32, 64, 128, or K = 7168 when K is a multiple of 64", str(e))
try:
    q.per_token_cast(x, "e4m3", 128, out=(meta((M, K), torch.float8_e4m3fn),
                                          None))
    report("out= on meta tensors", False, "no error")
except ValueError as e:
    report("out= on meta tensors is refused, saying so", str(e) ==
           "per_token_cast: given output buffers (out=) are not supported "
           "under torch.compile or on meta tensors yet", str(e))


class DLPackOnly:
    """A tensor seen through DLPack alone (as NumPy's, CuPy's or JAX's
    arrays reach tilejit)."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, **kwargs):
        return self.t.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


try:
    import numpy
    a = numpy.zeros((8001, 256), numpy.float32)
    layouts = tilejit.output_layouts("topk_gate", a, num_topk=8)
    report("a NumPy array through DLPack", layouts ==
           [("i64", [8001, 8], [8, 1])], f"{layouts}")
except ImportError:
    print("(no NumPy: its DLPack check left out)")
cpu = torch.zeros(256, 7168, dtype=torch.bfloat16)
layouts = tilejit.output_layouts("per_token_cast", DLPackOnly(cpu),
                                 fmt="e4m3")
report("DLPack tensors are read (output layouts of a DLPack input)",
       layouts == [("e4m3", [256, 7168], [7168, 1]),
                   ("f32", [256, 56], [56, 1])], f"{layouts}")
out_cpu = torch.empty(256, 7168, dtype=torch.float8_e4m3fn)
sf_cpu = torch.empty(256, 56)
for what, args, want in [
        ("a launch refuses torch's CPU tensors",
         (cpu, None, out_cpu, sf_cpu),
         "per_token_cast: argument 'x' is on cpu; requires a CUDA tensor"),
        ("a launch refuses DLPack host memory",
         (DLPackOnly(cpu), None, DLPackOnly(out_cpu), DLPackOnly(sf_cpu)),
         "per_token_cast: argument 'x' is in DLPack device type 1; requires "
         "CUDA memory (2)")]:
    try:
        tilejit.ops.per_token_cast(*args)
        report(what, False, "no error")
    except ValueError as e:
        report(what, str(e) == want, str(e))
report("without CUDA initialised a call's default stream is 0",
       tilejit.current_stream() == 0 and
       inspect.signature(tilejit.ops.topk_gate).parameters["stream"].default
       is None)
try:
    tilejit.check("per_token_cast", DLPackOnly(cpu), None,
                  DLPackOnly(out_cpu), DLPackOnly(sf_cpu))
    report("check validates DLPack tensors (no launch)", True)
except Exception as e:
    report("check validates DLPack tensors (no launch)", False, repr(e))


def layer(x, scores):
    out, sf = q.per_token_cast(x, "e4m3", 128, round_sf=True)
    back = q.per_token_cast_back((out, sf), "bf16", 128)
    return back.float().sum(), tk.moe.topk_gate(scores, 8)


def backward(x, g, psum, w):
    return q.swiglu_backward(x, g, "bf16", psum, w, 2.5, do_recompute=True)


counter = CompileCounter()
got = torch.compile(backward, fullgraph=True, backend=counter)(
    meta((T, 2 * H)), meta((T, H)), psum, meta((T,), torch.float32))
report("torch.compile traces optional outputs (swiglu_backward, fullgraph)",
       counter.frame_count == 1 and len(got) == 3, f"{counter.frame_count}")

counter = CompileCounter()
compiled = torch.compile(layer, fullgraph=True, backend=counter)
total, idx = compiled(x, meta((M, 256), torch.float32))
report("torch.compile traces TileKernels calls in one graph (fullgraph)",
       counter.frame_count == 1 and layout(idx) == ("int64", (M, 8), (8, 1)),
       f"frames {counter.frame_count}, {layout(idx)}")
report("the custom ops are nodes of the graph", counter.op_count >= 3,
       f"{counter.op_count} ops")

finish("torch")
