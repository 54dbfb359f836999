"""tilejit.tile_kernels under torch on the GPU: the current torch stream (a
side stream), capture in a CUDA graph replayed on new inputs,
torch.compile (inductor, fullgraph) against eager, torch.library.opcheck of
the registered custom ops."""
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal

q = tk.quant


def test_side_stream():
    x = torch.randn(4001, 7168, device="cuda").bfloat16()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        out, sf = q.per_token_cast(x, "e4m3", 128)
    s.synchronize()
    ref, ref_sf = q.per_token_cast(x, "e4m3", 128)
    assert_equal(out, ref)
    assert_equal(sf, ref_sf)


def test_cuda_graph_replays_on_new_inputs():
    x = torch.randn(4001, 7168, device="cuda").bfloat16()
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
    assert_equal(gout, ref)
    assert_equal(gsf, ref_sf)


def test_torch_compile_fullgraph_equals_eager():
    def layer(x, scores):
        out, sf = q.per_token_cast(x, "e4m3", 128, round_sf=True)
        return q.per_token_cast_back((out, sf), "bf16", 128), \
            tk.moe.topk_gate(scores, 8)
    x = torch.randn(4001, 7168, device="cuda").bfloat16()
    scores = torch.randn(4001, 256, device="cuda")
    want = layer(x, scores)
    got = torch.compile(layer, fullgraph=True)(x, scores)
    assert_equal(got[0], want[0])
    assert_equal(got[1], want[1])


def test_opcheck():
    scores = torch.randn(4001, 256, device="cuda")
    torch.library.opcheck(torch.ops.tilejit.topk_gate.default,
                          (scores, 8, [""], []))
    x = torch.randn(4001, 7168, device="cuda").bfloat16()
    out, _ = q.per_token_cast(x, "e4m3", 128)
    assert out.shape == x.shape
