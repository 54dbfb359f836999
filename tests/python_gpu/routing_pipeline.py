"""One MoE layer's routing on the GPU, end to end (issue 23's figure):
gate (top 8 of 256 experts) -> fused mapping (alignment 128, no sync: N the
bound) -> expand x (8192 x 7168 bf16) to the fused rows -> reduce the fused
rows back to tokens with the gate's weights, through tilejit.tile_kernels,
against a plain PyTorch composition of the same steps. Each step and the
whole chain timed as CUDA graph replays (median of 7 runs of 20 replays),
so that launches, not Python, are what is measured. Prints a table in us.

    python routing_pipeline.py [T E K H]"""
import statistics
import sys

import torch

from tilejit import tile_kernels as tk


def graph_us(fn, replays=20, runs=7):
    """Median us per call of fn captured in a CUDA graph (after a warm-up
    call outside the capture)."""
    fn()
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        with torch.cuda.graph(graph, stream=stream):
            for _ in range(replays):
                fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000 / replays)
    return statistics.median(times)


def main():
    t, e, k, h = (int(a) for a in sys.argv[1:5]) if len(sys.argv) > 4 else (
        8192, 256, 8, 7168)
    align = 128
    n = (t * k + (align - 1) * e) // align * align
    torch.manual_seed(0)
    scores = torch.randn(t, e, device="cuda")
    x = torch.randn(t, h, device="cuda").bfloat16()
    weights = torch.rand(t, k, device="cuda")

    # tilejit: each step's inputs made once, so that a step runs alone.
    idx = tk.moe.topk_gate(scores, k)
    maps = tk.moe.get_fused_mapping(idx, e, n, align, force_no_sync=True)
    to_pos, to_expert = maps[3], maps[0]
    fused = tk.moe.expand_to_fused(x, to_pos, to_expert)
    ours = {
        "gate (topk_gate)": lambda: tk.moe.topk_gate(scores, k),
        "fused mapping": lambda: tk.moe.get_fused_mapping(
            idx, e, n, align, force_no_sync=True),
        "expand_to_fused": lambda: tk.moe.expand_to_fused(x, to_pos,
                                                          to_expert),
        "reduce_fused": lambda: tk.moe.reduce_fused(fused, weights, to_pos),
    }

    def chain():
        i = tk.moe.topk_gate(scores, k)
        m = tk.moe.get_fused_mapping(i, e, n, align, force_no_sync=True)
        f = tk.moe.expand_to_fused(x, m[3], m[0])
        return tk.moe.reduce_fused(f, weights, m[3])

    # The same steps in PyTorch (capturable: counts by scatter_add, no
    # host sync; the slots of an expert in flat order, as ours).
    ar = torch.arange(t * k, device="cuda")
    ones = torch.ones(t * k, dtype=torch.int64, device="cuda")

    def torch_gate():
        return torch.topk(scores, k, dim=1).indices

    def torch_mapping(i):
        flat = i.flatten()
        counts = torch.zeros(e, dtype=torch.int64,
                             device="cuda").scatter_add_(0, flat, ones)
        aligned = (counts + align - 1) // align * align
        starts = torch.cumsum(aligned, 0) - aligned
        firsts = torch.cumsum(counts, 0) - counts
        order = torch.argsort(flat, stable=True)
        sorted_e = flat[order]
        pos = torch.empty_like(flat)
        pos[order] = starts[sorted_e] + ar - firsts[sorted_e]
        return pos

    def torch_expand(pos):
        out = torch.zeros(n, h, dtype=x.dtype, device="cuda")
        out[pos] = x.repeat_interleave(k, 0)
        return out

    def torch_reduce(f, pos):
        rows = f[pos].view(t, k, h).float()
        return (rows * weights.unsqueeze(-1)).sum(1).bfloat16()

    tpos = torch_mapping(torch_gate())
    tfused = torch_expand(tpos)
    plain = {
        "gate (topk_gate)": torch_gate,
        "fused mapping": lambda: torch_mapping(idx),
        "expand_to_fused": lambda: torch_expand(tpos),
        "reduce_fused": lambda: torch_reduce(tfused, tpos),
    }

    def torch_chain():
        p = torch_mapping(torch_gate())
        return torch_reduce(torch_expand(p), p)

    # Both chains compute the same tokens (identity experts: out = x * sum
    # of the weights), checked loosely (bf16 sums in other orders).
    want = (x.float() * weights.sum(1, keepdim=True)).bfloat16()
    for name, got in (("tilejit", chain()), ("torch", torch_chain())):
        err = (got.float() - want.float()).abs().max().item()
        print(f"{name} chain max |error| against x * sum(w): {err:.3g}")

    print(f"\nrouting of one MoE layer: T={t}, E={e}, top {k}, H={h}, "
          f"alignment {align}, N={n} (us, CUDA graph replay, "
          f"{torch.cuda.get_device_name()})")
    print(f"{'step':<20} {'tilejit':>10} {'torch':>10}")
    total = [0.0, 0.0]
    for name in ours:
        a, b = graph_us(ours[name]), graph_us(plain[name])
        total[0] += a
        total[1] += b
        print(f"{name:<20} {a:10.1f} {b:10.1f}")
    print(f"{'sum of the steps':<20} {total[0]:10.1f} {total[1]:10.1f}")
    print(f"{'chain, one graph':<20} {graph_us(chain):10.1f} "
          f"{graph_us(torch_chain):10.1f}")


if __name__ == "__main__":
    main()
