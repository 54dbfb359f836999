"""test_tile_kernels.py - tilejit.tile_kernels without a GPU or torch (the
torch calls run on the GPU machine, tests/python_gpu/): every name of
TileKernels 1.0's and 2.1's public modules is there; the bound ones have
TileKernels' signatures (the table below, from the wheels' sources) plus
tilejit's stated extensions; the unbound ones raise NotImplementedError
saying so; argument errors raise before any allocation. Plain Python;
prints `tile_kernels: N passed, M failed`; exits 1 when M > 0.
"""
import inspect

from checks import Tensor, finish, raises, report

import tilejit
from tilejit import tile_kernels as tk

# TileKernels' signatures: 2.1's where the name is in 2.1, else 1.0's.
FLAGS = ("use_tma_aligned_col_major_sf=False, round_sf=False, "
         "use_packed_ue8m0=False")
TK = {
    "quant.per_token_cast":
        f"(x, fmt, num_per_channels, x_block_size=None, {FLAGS}, "
        "use_e4m3_sf=False, stochastic_cast=False, out=None)",
    "quant.per_token_cast_with_sf_only":
        f"(x, fmt, num_per_channels, {FLAGS}, use_e4m3_sf=False, "
        "out_sf=None)",
    "quant.per_token_cast_with_precomputed_sf":
        f"(x, fmt, num_per_channels, sf, {FLAGS}, use_e4m3_sf=False, "
        "out=None)",
    "quant.per_block_cast": f"(x, fmt, block_size, {FLAGS}, out=None)",
    "quant.per_block_cast_with_sf_only":
        f"(x, fmt, block_size, {FLAGS}, out_sf=None)",
    "quant.per_block_cast_with_precomputed_sf":
        f"(x, fmt, block_size, sf, {FLAGS}, out=None)",
    "quant.per_block_cast_lossless":
        f"(x, fmt, x_block_size, out_block_size, {FLAGS})",
    "quant.per_channel_cast":
        "(x, fmt, num_per_tokens, round_sf=False, num_per_channels=None, "
        "use_packed_ue8m0=False)",
    "quant.per_channel_cast_fused":
        "(x, fmt, num_per_tokens, round_sf=False, num_per_channels=None, "
        "pos_to_token=None)",
    "quant.per_channel_cast_and_transpose":
        "(x, fmt, num_per_tokens, round_sf=False)",
    "quant.cast_back": "(x, fmt, x_block_size, x_special_fmt=None)",
    "quant.per_token_cast_back":
        "(x, fmt, num_per_channels, x_special_fmt=None)",
    "quant.cast": "(x, dtype, stochastic_rounding=False)",
    "quant.per_token_cast_and_cast_back":
        "(x, fmt, num_per_channels, round_sf=False, use_e4m3_sf=False)",
    "quant.unpack_from_e2m1fn_x2": "(x, out_dtype=torch.float32)",
    "quant.swiglu_forward":
        "(x, fmt, psum_num_tokens_per_expert=None, topk_weights=None, "
        "routed_scaling_factor=None, clamp_value=None, clamped_count=None)",
    "quant.swiglu_forward_and_per_token_cast":
        "(x, fmt, num_per_channels, psum_num_tokens_per_expert=None, "
        f"topk_weights=None, routed_scaling_factor=None, {FLAGS}, "
        "clamp_value=None, clamped_count=None)",
    "quant.swiglu_backward":
        "(x, act_x_grad, fmt, psum_num_tokens_per_expert=None, "
        "topk_weights=None, routed_scaling_factor=None, clamp_value=None, "
        "do_recompute=False)",
    "quant.swiglu_backward_and_per_token_cast":
        "(x, act_x_grad, fmt, num_per_channels, "
        "psum_num_tokens_per_expert=None, topk_weights=None, "
        f"routed_scaling_factor=None, {FLAGS}, clamp_value=None, "
        "do_recompute=False)",
    "quant.swiglu_forward_and_per_channel_cast_and_transpose":
        "(x, fmt, num_per_tokens, round_sf=False, without_transpose=False, "
        "swiglu_clamp_value=None)",
    "quant.batched_transpose_weight_sf":
        "(sf, block_size, transpose_sf1s, outs)",
    "moe.reduce_fused":
        "(x, topk_weights, token_topk_to_pos, fp8_format='', sf=None, "
        "out=None)",
    "transpose.transpose": "(x)",
    "transpose.batched_transpose": "(x)",
    "moe.topk_gate": "(scores, num_topk)",
    "moe.get_fused_mapping":
        "(topk_idx, num_experts, num_expanded_tokens, alignment, "
        "force_no_sync=False)",
    "moe.normalize_weight": "(topk_weights)",
    "moe.mask_indices_by_tp":
        "(indices, n, num_ep_ranks, tp_rank, num_tp_ranks)",
    "engram.fused_weight": "(weight_hidden, weight_embed)",
    "engram.grad_w_reduce": "(grad_w_partial, weight_hidden, weight_embed, "
                            "grad_weight_hidden, grad_weight_embed)",
    "engram.engram_gate_fwd":
        "(hidden_states, kv, weight_fused, eps, clamp_value, "
        "save_for_backward=True, image_token_mask=None, inplace=False)",
    "engram.engram_gate_bwd":
        "(grad_out, hidden_states, kv, weight_fused, dot, gate_score, "
        "rstd_x, rstd_k, clamp_value, image_token_mask=None)",
    "engram.engram_sinkhorn_momentum_update":
        "(grad, momentum_buffer, beta1, nesterov=True)",
    "engram.engram_sinkhorn_step": "(matrix, row_scale, col_scale, eps)",
    "engram.engram_sinkhorn_step_reduce": "(col_sumsq_partial, col_sumsq)",
    "engram.engram_sinkhorn_finalize":
        "(matrix, row_scale, col_scale, eps, alpha, out=None)",
    "mhc.mhc_reduce_partials_and_rmsnorm_fwd":
        "(out_mul_splitted, sqrsum_splitted, out_mul, sqrsum, out, "
        "rms_group_size, rms_eps, n_splits)",
    "mhc.mhc_reduce_partials_and_rmsnorm_bwd":
        "(out_grad, out_mul, sqrsum, out_mul_grad, sqrsum_grad, "
        "rms_group_size, rms_eps)",
    "quant.norm_forward":
        "(x, weight, eps, residual=None, out_scale=1.0, out=None, "
        "residual_out=None, with_rstd=False)",
    "mhc.mhc_multilayer_recompute":
        "(initial_residual, pre_mix_list, layer_output_list, post_mix_list, "
        "comb_mix_list, layer_input_list, residual_list)",
    "mhc.mhc_pre_big_fuse_fwd":
        "(gemm_out_mul, gemm_out_sqrsum, mhc_scale, mhc_base, residual, "
        "post_mix, comb_mix, layer_input, rms_eps, mhc_pre_eps, "
        "mhc_sinkhorn_eps, mhc_post_mult_value, sinkhorn_repeat, n_splits=16)",
    "quant.norm_forward_and_per_token_cast":
        "(x, weight, eps, fmt='e4m3', num_per_channels=32, residual=None, "
        f"out_scale=1.0, {FLAGS}, with_out_bf16=False, out=None, "
        "out_bf16=None, residual_out=None, mega_moe_sf=None, "
        "mega_moe_block_m=0, with_rstd=False)",
    "transform.apply_rotary":
        "(query, cos_sin_cache, key=None, positions=None, interleaved=False, "
        "conjugate=False, seqlen_offset=0)",
    "quant.norm_backward":
        "(out_grad, x, weight, rstd, residual_out_grad=None, out_scale=1.0, "
        "weight_grad=None)",
    "engram.engram_hash": "(ngram_token_ids, multipliers, vocab_sizes, "
                          "offsets, image_token_mask=None)",
    "mhc.mhc_sinkhorn_fwd": "(comb_res_mix, comb_res_mix_out, repeat, eps)",
    "mhc.mhc_sinkhorn_bwd": "(grad_output, x, grad_input, repeat, eps)",
    "mhc.expand_to_mhc_fwd": "(x, o)",
    "mhc.expand_to_mhc_bwd": "(o_grad, x_grad)",
    "mhc.mhc_pre_apply_mix_fwd": "(x, mix, o)",
    "mhc.mhc_post_fwd":
        "(x, residual, post_layer_mix, comb_res_mix, out=None)",
    "mhc.mhc_post_bwd": "(x, residual, post_layer_mix, comb_res_mix, d_o)",
    "mhc.mhc_pre_apply_mix_bwd": "(o_grad, x, mix, x_grad)",
    "mhc.mhc_fn_normw_merge_fwd": "(fn, normw, out_fn)",
    "mhc.mhc_head_compute_mix_bwd":
        "(output_mix_grad, input_mix, mhc_scale, mhc_base, input_mix_grad, "
        "mhc_scale_grad_partial, mhc_base_grad_partial, num_sms, "
        "token_block_size=0)",
    "mhc.mhc_fn_normw_merge_bwd":
        "(fn, normw, out_fn_grad, fn_grad, normw_grad)",
    "mhc.mhc_head_compute_mix_fwd":
        "(input_mix, mhc_scale, mhc_base, output_mix, mhc_pre_eps, "
        "token_block_size=0)",
    "mhc.mhc_pre_split_mixes_fwd":
        "(input_mixes, mhc_scale, mhc_base, pre_layer_mix, post_layer_mix, "
        "comb_res_mix, mhc_post_mult_value, mhc_pre_eps)",
    "mhc.mhc_pre_split_mixes_bwd":
        "(pre_grad, post_grad, comb_grad, input_mixes, post_layer_mix, "
        "mhc_scale, mhc_base, input_mixes_grad, mhc_scale_grad, "
        "mhc_base_grad, mhc_post_mult_value)",
}
# TileKernels 1.0's signatures (its wheel's sources), for
# tilejit.tile_kernels.v1.
TK10 = {
    "moe.get_fused_mapping":
        "(topk_idx, num_experts, num_expanded_tokens, alignment, "
        "force_no_sync=False)",
    "moe.reduce_fused":
        "(x, topk_weights, token_topk_to_pos, fp8_format='', sf=None, "
        "out=None)",
    "moe.expand_to_fused":
        "(x, token_topk_to_pos, pos_to_expert)",
    "moe.expand_to_fused_with_sf":
        "(x, num_per_channels, token_topk_to_pos, pos_to_expert, "
        "use_tma_aligned_col_major_sf=False)",
    "moe.inplace_unique_group_indices":
        "(group_indices, num_groups)",
    "moe.moe_topk_gate_backward":
        "(scores, topk_idx, topk_weights, grad_topk_weights, "
        "routed_scaling_factor, scoring_func='sqrtsoftplus', mask=None, "
        "grad_scores_sum=None, out=None)",
    "moe.topk_sum_and_topk_group_idx":
        "(scores, num_topk_sum, num_topk_groups)",
    "moe.aux_fi":
        "(topk_idx, num_experts, num_aux_topk)",
    "moe.group_count":
        "(group_idx, num_groups)",
    "moe.mask_indices_by_tp":
        "(indices, n, num_ep_ranks, tp_rank, num_tp_ranks)",
    "moe.normalize_weight":
        "(topk_weights)",
    "moe.top2_sum_gate":
        "(logits, bias, num_topk, num_topk_groups, num_groups, "
        "use_shared_as_routed, num_shared_experts, "
        "routed_scaling_factor, ep_rank, num_ep_ranks, tp_rank, "
        "num_tp_ranks, scoring_func, mask=None, fix_routing_mask=None, "
        "to_physical_map=None, logical_count=None, "
        "unmapped_topk_idx=None)",
    "moe.topk_gate":
        "(scores, num_topk)",
    "moe.moe_topk_gate_forward":
        "(logits, num_topk, use_shared_as_routed, num_shared_experts, "
        "routed_scaling_factor, ep_rank, scoring_func='sqrtsoftplus', "
        "mask=None, bias=None, image_bias=None, image_token_mask=None, "
        "fix_routing_mask=None, to_physical_map=None, logical_count=None, "
        "unmapped_topk_idx=None, force_random=None, out=None, scores=None)",
    "moe.moe_topk_gate_backward":
        "(scores, topk_idx, topk_weights, grad_topk_weights, "
        "routed_scaling_factor, scoring_func='sqrtsoftplus', mask=None, "
        "grad_scores_sum=None, out=None)",
    "moe.topk_sum_and_topk_group_idx":
        "(scores, num_topk_sum, num_topk_groups)",
    "quant.swiglu_forward_and_per_channel_cast_and_transpose":
        "(x, fmt, num_per_tokens, round_sf=False, "
        "without_transpose=False, swiglu_clamp_value=None)",
    "quant.per_channel_cast":
        "(x, fmt, num_per_tokens, round_sf=False)",
    "quant.per_channel_cast_fused":
        "(x, fmt, num_per_tokens, round_sf=False, "
        "num_per_channels=None, pos_to_token=None)",
    "quant.per_channel_cast_and_transpose":
        "(x, fmt, num_per_tokens, round_sf=False)",
    "quant.swiglu_forward_and_per_token_cast":
        "(x, fmt, num_per_channels, pos_to_token_topk=None, "
        "topk_weights=None, pos_to_expert=None, "
        "use_tma_aligned_col_major_sf=False, round_sf=False, "
        "use_packed_ue8m0=False, swiglu_clamp_value=None, "
        "clamped_count=None, sf_clamp_min=None)",
    "quant.swiglu_backward_and_per_token_cast":
        "(x, grad_out, weight, pos_to_token_topk, token_topk_to_pos, "
        "num_per_channels, round_sf=False, swiglu_clamp_value=None)",
    "quant.unpack_from_e2m1fn_x2":
        "(x, out_dtype=torch.float32)",
    "quant.per_token_cast":
        "(x, fmt, num_per_channels, x_block_size=None, "
        "use_tma_aligned_col_major_sf=False, round_sf=False, "
        "use_packed_ue8m0=False)",
    "quant.per_token_cast_with_precomputed_sf":
        "(x, fmt, num_per_channels, sf, x_block_size=None, "
        "use_tma_aligned_col_major_sf=False, round_sf=False, "
        "use_packed_ue8m0=False)",
    "quant.per_token_cast_with_sf_only":
        "(x, fmt, num_per_channels, x_block_size=None, "
        "use_tma_aligned_col_major_sf=False, round_sf=False, "
        "use_packed_ue8m0=False)",
    "quant.per_block_cast":
        "(x, fmt, block_size, use_tma_aligned_col_major_sf=False, "
        "round_sf=False, use_packed_ue8m0=False)",
    "quant.per_block_cast_with_precomputed_sf":
        "(x, fmt, block_size, sf, use_tma_aligned_col_major_sf=False, "
        "round_sf=False, use_packed_ue8m0=False)",
    "quant.per_block_cast_with_sf_only":
        "(x, fmt, block_size, use_tma_aligned_col_major_sf=False, "
        "round_sf=False, use_packed_ue8m0=False)",
    "quant.cast_back":
        "(x, fmt, x_block_size, x_special_fmt=None)",
    "quant.per_token_cast_back":
        "(x, fmt, num_per_channels, x_special_fmt=None)",
    "quant.per_block_cast_lossless":
        "(x, fmt, x_block_size, out_block_size, "
        "use_tma_aligned_col_major_sf=False, round_sf=False, "
        "use_packed_ue8m0=False)",
    "transpose.transpose":
        "(x)",
    "transpose.batched_transpose":
        "(x)",
}

# tilejit's extensions: 1.0's argument kept where 2.1 dropped it.
EXTENDED = {
    "quant.per_token_cast_with_sf_only": ", *, x_block_size=None",
    "quant.per_token_cast_with_precomputed_sf": ", *, x_block_size=None",
}
# Every other public name of TileKernels 1.0 and 2.1, per module.
UNBOUND = {
    "quant": [],
    "moe": [],
    "mhc": [],
}


def find(path):
    module, name = path.split(".")
    return getattr(getattr(tk, module), name, None)


for path, sig in TK.items():
    f = find(path)
    want = sig[:-1] + EXTENDED.get(path, "") + ")"
    got = str(inspect.signature(f)) if f else "missing"
    report(f"{path}{want}", got == want and f.tilejit_bound, got)
for module, names in UNBOUND.items():
    for name in names:
        f = getattr(getattr(tk, module), name, None)
        try:
            f()
            report(f"{module}.{name} raises", False, "returned")
        except NotImplementedError as e:
            report(f"{module}.{name} raises NotImplementedError",
                   str(e).startswith(f"tile_kernels.{module}.{name}: not in "
                                     "tilejit yet ("), str(e))
        except Exception as e:
            report(f"{module}.{name} raises", False, repr(e))
from tilejit.tile_kernels.modeling import engram as _layer  # noqa: E402
report("modeling.engram.engram_gate takes TileKernels 2.1's arguments",
       str(inspect.signature(_layer.engram_gate)) ==
       "(hidden_states, kv, weight_hidden, weight_embed, clamp_value, eps, "
       "image_token_mask=None)" and _layer.engram_gate.tilejit_bound,
       str(inspect.signature(_layer.engram_gate)))
# TileKernels 1.0's functional mHC layer (modeling.mhc, removed in 2.1) and
# its autograd functions (modeling.mhc.ops), as 1.0's sources have them.
MHC10 = {
    "expand_from_embedding": "(x, mhc_mult=4)",
    "mhc_pre": "(residual, fn, scale, base, *, norm_weight=None, "
               "norm_eps=1e-06, mhc_mult=4, post_mult_value=1.0, "
               "pre_eps=1e-06, sinkhorn_eps=1e-06, sinkhorn_repeat=10, "
               "n_splits=16)",
    "mhc_head": "(residual, fn, scale, base, *, norm_weight=None, "
                "norm_eps=1e-06, mhc_mult=4, pre_eps=1e-06, n_splits=16)",
    "ops.expand_to_mhc": "(hidden, mhc_mult, out=None)",
    "ops.mhc_head_compute_mix":
        "(input_mix, mhc_scale, mhc_base, mhc_pre_eps)",
    "ops.mhc_pre_norm_fn": "(residual, mhc_fn, mhc_norm_weight, "
                           "mhc_norm_eps, fuse_grad_acc=True, n_splits=16)",
    "ops.mhc_post": "(x, residual, post_layer_mix, comb_res_mix, out=None)",
    "ops.mhc_post_fwd":
        "(x, residual, post_layer_mix, comb_res_mix, out=None)",
    "ops.mhc_post_bwd": "(x, residual, post_layer_mix, comb_res_mix, d_o, "
                        "fuse_grad_acc=True)",
    "ops.mhc_pre_apply_mix": "(x, mix, out=None)",
    "ops.mhc_pre_big_fuse":
        "(residual, fn, mhc_scale, mhc_base, rms_eps, mhc_pre_eps, "
        "mhc_sinkhorn_eps, mhc_post_mult_value, sinkhorn_repeat, "
        "n_splits=16)",
    "ops.mhc_pre_split_mixes": "(input_mixes, mhc_scale, mhc_base, mhc_mult, "
                               "mhc_post_mult_value, mhc_pre_eps)",
    "ops.sinkhorn_normalize": "(x, repeat=10, eps=1e-06)",
    "ops.mhc_multilayer_recompute":
        "(initial_residual, pre_mix_list, layer_output_list, post_mix_list, "
        "comb_mix_list, layer_input_list, residual_list)",
}
import tilejit.tile_kernels.modeling.mhc as _mhc_layer  # noqa: E402
for path, sig in MHC10.items():
    f = _mhc_layer
    for part in path.split("."):
        f = getattr(f, part, None)
    got = str(inspect.signature(f)) if f else "missing"
    report(f"modeling.mhc.{path}{sig}",
           got == sig and getattr(f, "tilejit_bound", False), got)
# `from <module> import <name>` of 1.0's code with the import changed: the
# modules v1 shares are importable under its name, submodules included; the
# layer's functions import without torch (the import system's __path__
# lookup must not build the autograd Functions).
from tilejit.tile_kernels.modeling.mhc.ops import mhc_post  # noqa: E402
from tilejit.tile_kernels.v1.modeling.mhc.ops import (  # noqa: E402
    mhc_post as v1_mhc_post)
from tilejit.tile_kernels.v1.moe import topk_gate as v1_topk_gate  # noqa
report("from tilejit.tile_kernels.v1.moe import topk_gate: the shared one",
       v1_topk_gate is tk.moe.topk_gate)
report("from tilejit.tile_kernels.v1.modeling.mhc.ops import mhc_post",
       v1_mhc_post is mhc_post)
try:
    import torch  # noqa: F401
    has_torch = True
except ImportError:
    has_torch = False
if not has_torch:
    try:
        from tilejit.tile_kernels.modeling.mhc.ops import MHCPost  # noqa
        report("an autograd Function without torch raises ImportError", False,
               "imported")
    except ImportError as e:
        report("an autograd Function without torch raises ImportError "
               "naming torch", "torch" in str(e), str(e))
# 1.0's code through tilejit.tile_kernels.v1: every bound 1.0 function
# takes 1.0's parameters in 1.0's order with 1.0's defaults (2.1 may have
# appended more).
import tilejit.tile_kernels.v1 as v1  # noqa: E402
for path, sig in TK10.items():
    module, name = path.split(".")
    f = getattr(getattr(v1, module), name, None)
    if f is None or not f.tilejit_bound:
        report(f"v1.{path} is there, unbound", f is not None, "missing")
        continue
    got = str(inspect.signature(f))
    report(f"v1.{path} takes 1.0's {sig}",
           got == sig or got.startswith(sig[:-1] + ", "), got)
doc = tk.quant.per_token_cast.__doc__
report("a docstring from the declaration and the conversions",
       doc.startswith("TileKernels' per_token_cast, on tilejit's op "
                      "per_token_cast: ") and
       "\n    x_block_size: (x_block_m, x_block_k)\n" in doc and
       "\n    out: None, or pre-allocated (out, out_sf), either None\n" in doc
       and "\n    round_sf: scales rounded up to powers of two\n" in doc, doc)
report("config is there", callable(tk.config.get_num_sms) and
       callable(tk.config.set_num_sms))
tk.config.set_token_alignment(64)
report("the token alignment is TileKernels' config knob",
       tk.config.get_token_alignment() == 64)
tk.config.reset_runtime_config()
report("and resets to 128", tk.config.get_token_alignment() == 128)
raises("a token alignment not a power of two", ValueError,
       "argument 'token_alignment' is 96; requires a power of two",
       lambda: tk.config.set_token_alignment(96))


x16 = Tensor("bfloat16", (8, 1024))
raises("norm_forward_and_per_token_cast's mega_moe_sf of too few rows",
       ValueError,
       "argument 'mega_moe_sf' has strides (8, 1); requires (1, R) with R >= "
       "128 (ceil(T / bm) align(bm, 128) rows)",
       lambda: tk.quant.norm_forward_and_per_token_cast(
           x16, None, 1e-6, round_sf=True, mega_moe_sf=Tensor("int32", (8, 8)),
           mega_moe_block_m=64))
raises("norm_forward_and_per_token_cast's out_bf16 without with_out_bf16",
       ValueError,
       "argument 'out_bf16' is given while with_out_bf16 is False; requires "
       "with_out_bf16=True",
       lambda: tk.quant.norm_forward_and_per_token_cast(
           x16, None, 1e-6, out_bf16=Tensor("bfloat16", (8, 1024))))


r4 = Tensor("bfloat16", (8, 4, 64))
raises("mhc_multilayer_recompute with two layer outputs short", ValueError,
       "argument 'layer_output_list' has 1 tensors for 3 layers; requires L "
       "- 1 or L (L = 3, len(pre_mix_list))",
       lambda: tk.mhc.mhc_multilayer_recompute(r4, [None] * 3, [None],
                                               [None], [None], [None] * 3,
                                               [None]))
raises("mhc_multilayer_recompute with a layer input short", ValueError,
       "argument 'layer_input_list' has 11 tensors; requires 12 "
       "(len(pre_mix_list))",
       lambda: tk.mhc.mhc_multilayer_recompute(r4, [None] * 12, [None] * 11,
                                               [None] * 11, [None] * 11,
                                               [None] * 11, [None] * 11))


q16, cache = Tensor("bfloat16", (9, 4, 128)), Tensor("float32", (64, 128))
raises("apply_rotary's key of other tokens", ValueError,
       "argument 'key' is torch.bfloat16 (8, 2, 128); requires query's dtype "
       "torch.bfloat16, rank 3 and tokens (9,)",
       lambda: tk.transform.apply_rotary(
           q16, cache, key=Tensor("bfloat16", (8, 2, 128))))
raises("apply_rotary's query of R = 96", ValueError,
       "apply_rotary: argument 'x' has shape [9, 4, 96] (R = 96); requires "
       "64 <= R <= 128 and R a multiple of 64",
       lambda: tk.transform.apply_rotary(Tensor("bfloat16", (9, 4, 96)),
                                         Tensor("float32", (64, 96))))

x = Tensor("bfloat16", (256, 7168))
q = tk.quant
raises("a block size that is no pair", ValueError,
       "argument 'x_block_size' is (128,); requires a pair of ints",
       lambda: q.per_token_cast(x, "e4m3", 128, x_block_size=(128,)))
raises("a QuantTensor of three", ValueError,
       "argument 'x' is a tuple of 3; requires a tensor or a (data, sf) pair",
       lambda: q.per_token_cast((x, x, x), "e4m3", 128))
raises("cast_back needs a QuantTensor", ValueError,
       "argument 'x' is a Tensor; requires a (data, sf) pair",
       lambda: q.cast_back(x, "bf16", (1, 128)))
raises("cast_back's fmt", ValueError,
       "argument 'fmt' is 'f16'; requires one of 'bf16', 'fp32'",
       lambda: q.cast_back((x, x), "f16", (1, 128)))
raises("1.0's x_block_size where 2.1 dropped it", ValueError,
       "argument 'x_block_size' is (128, 128); requires None (an input SF "
       "is not supported here, as in TileKernels)",
       lambda: q.per_token_cast_with_sf_only(x, "e4m3", 128,
                                             x_block_size=(128, 128)))
raises("the declaration's rule, before any allocation", ValueError,
       "per_token_cast: argument 'x' has dtype f16; requires bf16, f32, e4m3, "
       "or i8",
       lambda: q.per_token_cast(Tensor("float16", (256, 7168)), "e4m3", 128))
raises("swiglu_backward_and_per_token_cast needs a QuantTensor", ValueError,
       "argument 'x' is a Tensor; requires a (data, sf) pair",
       lambda: q.swiglu_backward_and_per_token_cast(x, x, "e4m3", 128))
raises("reduce_fused's fp8_format", ValueError,
       "argument 'fp8_format' is 'e5m2'; requires '' or 'e4m3'",
       lambda: tk.moe.reduce_fused(x, None, Tensor("int32", (64, 8)),
                                   "e5m2"))
raises("batched_transpose_weight_sf's lists", ValueError,
       "arguments 'sf', 'transpose_sf1s' and 'outs' have 1, 2 and 1 items; "
       "requires as many each",
       lambda: q.batched_transpose_weight_sf([x], 128, [False, True],
                                             [None]))
raises("out= of one tensor", ValueError,
       "argument 'out' is 3; requires None or a (data, sf) pair of tensors "
       "or None",
       lambda: q.per_token_cast(x, "e4m3", 128, out=3))


hs = Tensor("bfloat16", (16, 4, 2048))
raises("engram_gate_fwd's kv of the heads alone", ValueError,
       "argument 'kv' has shape [16, 4, 2048]; requires (T, hc + 1, D) of "
       "hidden_states' (T, hc, D) = [16, 4, 2048]",
       lambda: tk.engram.engram_gate_fwd(hs, hs, Tensor("float32", (4, 2048)),
                                         1e-20, 1e-6))
raises("engram_gate_fwd in place, saving for the backward", ValueError,
       "argument 'inplace' is True with save_for_backward=True; requires "
       "save_for_backward=False (the backward needs the original "
       "hidden_states)",
       lambda: tk.engram.engram_gate_fwd(hs, hs, Tensor("float32", (4, 2048)),
                                         1e-20, 1e-6, inplace=True))


raises("mhc_reduce_partials_and_rmsnorm_fwd's n_splits", ValueError,
       "argument 'n_splits' is 8; requires out_mul_splitted's first "
       "dimension, 16",
       lambda: tk.mhc.mhc_reduce_partials_and_rmsnorm_fwd(
           Tensor("float32", (16, 64, 1, 24)), Tensor("float32", (16, 64, 1)),
           Tensor("float32", (64, 1, 24)), Tensor("float32", (64, 1)),
           Tensor("float32", (64, 24)), 16384, 1e-6, 8))


class CpuTensor(Tensor):
    class device:
        type, index = "cpu", None

        def __str__(self):
            return "cpu"
    device = device()


raises("a tensor on the CPU", ValueError,
       "topk_gate: argument 'scores' is on cpu; requires a CUDA tensor",
       lambda: tk.moe.topk_gate(CpuTensor("float32", (8, 64)), 4))

finish("tile_kernels")
