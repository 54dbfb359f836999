"""tile_kernels.mhc (TileKernels 2.1's raw entry points) on tilejit."""
from ._binding import Conversion, derive, in_place, same, tk_op

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
_LISTS = ("pre_mix", "layer_output", "post_mix", "comb_mix", "layer_input",
          "residual")
_GROUP = 10  # the layers one call of the op takes
_recompute = tk_op(
    "mhc_multilayer_recompute",
    "initial_residual, " + ", ".join(f"{name}_{i}=None" for name in _LISTS
                                     for i in range(_GROUP)),
    name="mhc_multilayer_recompute", returns=None)


def mhc_multilayer_recompute(initial_residual, pre_mix_list,
                             layer_output_list, post_mix_list, comb_mix_list,
                             layer_input_list, residual_list):
    """TileKernels' mhc_multilayer_recompute: every layer input and residual
    of a stack of L layers (P = L or L - 1 of them with their post step)
    recomputed into the tensors of layer_input_list and residual_list. One
    launch takes 10 layers; a longer stack goes in groups, each from the
    residual the group before wrote (the same bits as one pass)."""
    lists = (pre_mix_list, layer_output_list, post_mix_list, comb_mix_list,
             layer_input_list, residual_list)
    layers, posts = len(pre_mix_list), len(layer_output_list)
    # Checked whole before any launch (a later group's mistake would come
    # after an earlier group's writes).
    if layers == 0:
        raise ValueError("argument 'pre_mix_list' is empty; requires at "
                         "least one layer")
    if posts not in (layers - 1, layers):
        raise ValueError(f"argument 'layer_output_list' has {posts} tensors "
                         f"for {layers} layers; requires L - 1 or L (L = "
                         f"{layers}, len(pre_mix_list))")
    for name, items in zip(_LISTS[2:], lists[2:]):
        want = layers if name == "layer_input" else posts
        if len(items) != want:
            raise ValueError(f"argument '{name}_list' has {len(items)} "
                             f"tensors; requires {want} (len("
                             f"{'pre_mix' if want == layers else 'layer_output'}"
                             f"_list))")
    for first in range(0, layers, _GROUP):
        kwargs = {}
        for name, items in zip(_LISTS, lists):
            for i, t in enumerate(items[first:first + _GROUP]):
                kwargs[f"{name}_{i}"] = t
        start = initial_residual if first == 0 else residual_list[first - 1]
        _recompute(start, **kwargs)


mhc_multilayer_recompute.tilejit_bound = True
