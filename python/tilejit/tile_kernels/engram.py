"""tile_kernels.engram on tilejit: no Engram kernel runs yet; every name
raises NotImplementedError saying so."""
from ._binding import not_bound

for _name in ("engram_hash", "fused_weight", "engram_gate_fwd",
              "engram_gate_bwd", "grad_w_reduce",
              "engram_sinkhorn_momentum_update", "engram_sinkhorn_step",
              "engram_sinkhorn_step_reduce", "engram_sinkhorn_finalize"):
    globals()[_name] = not_bound(f"engram.{_name}")
del _name
