"""tile_kernels.mhc (TileKernels 2.1's raw entry points) on tilejit."""
from ._binding import derive, not_bound, same, tk_op

mhc_sinkhorn_fwd = tk_op(
    "sinkhorn_normalize", "comb_res_mix, comb_res_mix_out, repeat, eps",
    name="mhc_sinkhorn_fwd",
    convert=[same("x", "comb_res_mix"), same("out", "comb_res_mix_out")],
    returns=None)
expand_to_mhc_fwd = tk_op(
    "expand_to_mhc_fwd", "x, o",
    convert=[derive("mhc_mult", ("o",), lambda o: o.shape[-2])], returns=None)
expand_to_mhc_bwd = tk_op("expand_to_mhc_bwd", "o_grad, x_grad", returns=None)
mhc_pre_apply_mix_fwd = tk_op("mhc_pre_apply_mix_fwd", "x, mix, o",
                              returns=None)
mhc_post_fwd = tk_op(
    "mhc_post_fwd", "x, residual, post_layer_mix, comb_res_mix, out=None",
    returns="out")
for _name in ("mhc_sinkhorn_bwd", "mhc_pre_apply_mix_bwd", "mhc_post_bwd",
              "mhc_pre_split_mixes_fwd", "mhc_pre_split_mixes_bwd", "mhc_head_compute_mix_fwd",
              "mhc_head_compute_mix_bwd", "mhc_pre_big_fuse_fwd",
              "mhc_multilayer_recompute", "mhc_fn_normw_merge_fwd",
              "mhc_fn_normw_merge_bwd", "mhc_reduce_partials_and_rmsnorm_fwd",
              "mhc_reduce_partials_and_rmsnorm_bwd"):
    globals()[_name] = not_bound(f"mhc.{_name}")
del _name
