#!/usr/bin/env bash
# cold_compile.sh - On the GPU machine: where a cold compile's time goes.
#  1. tilejit_bench --compile: DSL build -> PTX -> cubin -> loaded module, by
#     stage, with the driver's own PTX cache off (the bench turns it off).
#  2. ptxas alone on each proving kernel's PTX ("Compile time" as ptxas
#     reports it, at its default -O3 and at --Ofast-compile min): the part of
#     a cold compile that is NVIDIA's, for comparison with the column above.
#  3. Triton's cold compile of a WGMMA matmul (empty cache) in the same run.
# Output files go to $OUT when it is set.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/gpu/unpack.sh

echo "== tilejit_bench --compile"
bin/tilejit_bench --compile 2>&1 | tee "$out/cold_compile.log"

echo "== ptxas alone (sm_90a), ms as ptxas reports it"
ptx() { bin/tilejit compile "$@" --dump ptx 2>/dev/null; }
mkdir -p ptx
ptx scale_copy >ptx/scale_copy.ptx
ptx batched_transpose --dtype bf16 --shape 8x4096x7168 >ptx/batched_transpose.ptx
ptx per_token_cast --shape 8001x7168 --set use_packed_ue8m0=1 >ptx/per_token_cast.ptx
ptx topk_gate --shape 8001x256 --set num_topk=8 >ptx/topk_gate.ptx
ptx sinkhorn_normalize --shape 2x4096x4x4 >ptx/sinkhorn_normalize.ptx
ptx gemm --dtype bf16 --set m=8192 --set n=8192 --set k=8192 >ptx/gemm.ptx
for f in ptx/*.ptx; do
  for opt in "" "--Ofast-compile min"; do
    t=$(for i in 1 2 3; do ptxas -arch=sm_90a -v $opt "$f" -o /dev/null 2>&1 |
      sed -n 's/.*Compile time = \([0-9.]*\) ms.*/\1/p'; done | sort -n | sed -n 2p)
    printf "%-24s %-22s %8s ms\n" "$(basename "$f" .ptx)" "${opt:-default (-O3)}" "$t"
  done
done | tee "$out/ptxas.log"

echo "== Triton $(python3 -c 'import triton; print(triton.__version__)'), cold compile of a bf16 matmul (empty cache)"
export TRITON_CACHE_DIR=$work/triton-cache
# Triton reads a kernel's source from its file: write the script out first.
cat >triton_matmul.py <<'PY'
import time, torch, triton, triton.language as tl

@triton.jit
def matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + rn[:, None] * K + (k + rk)[None, :])
        acc += tl.dot(x, tl.trans(y))
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16))

M = N = K = 1024
a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
b = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
grid = (M // 128, N // 128)
torch.cuda.synchronize()
t = time.perf_counter()
h = matmul[grid](a, b, c, M, N, K, 128, 128, 64, num_warps=8, num_stages=3)
torch.cuda.synchronize()
first = (time.perf_counter() - t) * 1e3
t = time.perf_counter()
matmul[grid](a, b, c, M, N, K, 128, 128, 64, num_warps=8, num_stages=3)
torch.cuda.synchronize()
second = (time.perf_counter() - t) * 1e3
ok = torch.allclose(c.float(), (a.float() @ b.float().T), atol=1, rtol=0.05)
wgmma = "wgmma.mma_async" in h.asm["ptx"]
print(f"triton matmul first call {first:.1f} ms, second {second:.3f} ms, "
      f"correct {ok}, wgmma in its PTX {wgmma}")
PY
for i in 1 2 3; do
  rm -rf "$TRITON_CACHE_DIR"
  python3 triton_matmul.py 2>&1 | tee -a "$out/triton.log"
done
