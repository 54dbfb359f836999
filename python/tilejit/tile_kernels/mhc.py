"""tile_kernels.mhc (TileKernels 2.1's raw entry points) on tilejit."""
from ._binding import Conversion, derive, in_place, not_bound, same, tk_op

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
mhc_head_compute_mix_fwd = tk_op(
    "mhc_head_compute_mix_fwd",
    "input_mix, mhc_scale, mhc_base, output_mix, mhc_pre_eps, "
    "token_block_size=0",
    convert=[Conversion(("token_block_size",), (), lambda v: None,
                        ("token_block_size", "accepted and unused (a "
                         "TileLang tiling choice)", None))],
    returns=None)


mhc_head_compute_mix_bwd = tk_op(
    "mhc_head_compute_mix_bwd",
    "output_mix_grad, input_mix, mhc_scale, mhc_base, input_mix_grad, "
    "mhc_scale_grad_partial, mhc_base_grad_partial, num_sms, "
    "token_block_size=0",
    convert=[Conversion(("token_block_size",), (), lambda v: None,
                        ("token_block_size", "accepted and unused (a "
                         "TileLang tiling choice)", None))],
    returns=None)


def _streams(input_mixes):
    """mhc from the mhc * (mhc + 2) mixes of a token."""
    return round((input_mixes.shape[-1] + 1) ** 0.5) - 1


mhc_pre_split_mixes_fwd = tk_op(
    "mhc_pre_split_mixes_fwd",
    "input_mixes, mhc_scale, mhc_base, pre_layer_mix, post_layer_mix, "
    "comb_res_mix, mhc_post_mult_value, mhc_pre_eps",
    convert=[derive("mhc_mult", ("input_mixes",), _streams)], returns=None)
mhc_pre_split_mixes_bwd = tk_op(
    "mhc_pre_split_mixes_bwd",
    "pre_grad, post_grad, comb_grad, input_mixes, post_layer_mix, "
    "mhc_scale, mhc_base, input_mixes_grad, mhc_scale_grad, mhc_base_grad, "
    "mhc_post_mult_value",
    returns=None)
mhc_post_bwd = tk_op(
    "mhc_post_bwd", "x, residual, post_layer_mix, comb_res_mix, d_o",
    returns=("d_x", "d_residual", "d_post", "d_comb"))
mhc_pre_apply_mix_bwd = tk_op(
    "mhc_pre_apply_mix_bwd", "o_grad, x, mix, x_grad",
    convert=[Conversion(("x_grad",), ("x_grad", "x_grad_out"),
                        lambda v: (v, v),
                        ("x_grad", "bf16 (..., mhc, H): mix * o_grad is "
                         "added to it in place", None))],
    returns="mix_grad")
mhc_fn_normw_merge_fwd = tk_op("mhc_fn_normw_merge_fwd", "fn, normw, out_fn",
                               returns=None)
mhc_fn_normw_merge_bwd = tk_op(
    "mhc_fn_normw_merge_bwd", "fn, normw, out_fn_grad, fn_grad, normw_grad",
    convert=[in_place("fn_grad"), in_place("normw_grad")], returns=None)
mhc_sinkhorn_bwd = tk_op("mhc_sinkhorn_bwd",
                         "grad_output, x, grad_input, repeat, eps",
                         returns=None)


def _check_splits(n_splits, out_mul_splitted):
    """TileKernels' n_splits, which the partials' first dimension gives."""
    if n_splits != out_mul_splitted.shape[0]:
        raise ValueError(f"argument 'n_splits' is {n_splits}; requires "
                         "out_mul_splitted's first dimension, "
                         f"{out_mul_splitted.shape[0]}")


mhc_reduce_partials_and_rmsnorm_fwd = tk_op(
    "mhc_reduce_partials_and_rmsnorm_fwd",
    "out_mul_splitted, sqrsum_splitted, out_mul, sqrsum, out, "
    "rms_group_size, rms_eps, n_splits",
    convert=[Conversion(("n_splits", "out_mul_splitted"), (), _check_splits,
                        ("n_splits", "out_mul_splitted's first dimension",
                         None))],
    returns=None)
mhc_reduce_partials_and_rmsnorm_bwd = tk_op(
    "mhc_reduce_partials_and_rmsnorm_bwd",
    "out_grad, out_mul, sqrsum, out_mul_grad, sqrsum_grad, rms_group_size, "
    "rms_eps",
    returns=None)
mhc_pre_big_fuse_fwd = tk_op(
    "mhc_pre_big_fuse_fwd",
    "gemm_out_mul, gemm_out_sqrsum, mhc_scale, mhc_base, residual, post_mix, "
    "comb_mix, layer_input, rms_eps, mhc_pre_eps, mhc_sinkhorn_eps, "
    "mhc_post_mult_value, sinkhorn_repeat, n_splits=16",
    returns=None)
mhc_multilayer_recompute = not_bound("mhc.mhc_multilayer_recompute")
