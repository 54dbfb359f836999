"""cuBLAS through torch on the GPU machine: the gemm roofline at the
benchmark's shapes (bf16 8192^3, 4096^3, 8192x7168x2048; e4m3 and tf32
8192^3), 30 calls after 5 warm-ups, timed with CUDA events. run.sh runs it
after tilejit_bench, in the same run."""
import torch
for m, n, k in [(8192, 8192, 8192), (4096, 4096, 4096), (8192, 7168, 2048)]:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    for _ in range(5): torch.matmul(a, b.T)
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(30): torch.matmul(a, b.T)
    e.record(); torch.cuda.synchronize()
    ms = s.elapsed_time(e) / 30
    print(f"cublas {m}x{n}x{k} bf16  {ms:.4f} ms  {2*m*n*k/ms/1e9:.1f} TFLOP/s")
# fp8 e4m3 (unit scales, bf16 out) through torch._scaled_mm (cuBLASLt).
m = n = k = 8192
a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
one = torch.tensor(1.0, device="cuda")
mm = lambda: torch._scaled_mm(a, b.T, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
for _ in range(5): mm()
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
s.record()
for _ in range(30): mm()
e.record(); torch.cuda.synchronize()
ms = s.elapsed_time(e) / 30
print(f"cublas {m}x{n}x{k} e4m3  {ms:.4f} ms  {2*m*n*k/ms/1e9:.1f} TFLOP/s")
# f32 inputs multiplied as tf32.
torch.backends.cuda.matmul.allow_tf32 = True
a = torch.randn(m, k, device="cuda")
b = torch.randn(n, k, device="cuda")
for _ in range(5): torch.matmul(a, b.T)
s.record()
for _ in range(30): torch.matmul(a, b.T)
e.record(); torch.cuda.synchronize()
ms = s.elapsed_time(e) / 30
print(f"cublas {m}x{n}x{k} tf32  {ms:.4f} ms  {2*m*n*k/ms/1e9:.1f} TFLOP/s")
