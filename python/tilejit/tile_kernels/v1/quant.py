"""tile_kernels.quant as TileKernels 1.0 has it: tilejit.tile_kernels.quant
with 1.0's forms of the functions 2.1 changed incompatibly."""
from .. import quant as _quant
from .._binding import must_be_none, none_as, quant_tensor, tk_op

# Everything else is 2.1's, which extends 1.0's.
globals().update({k: v for k, v in vars(_quant).items()
                  if not k.startswith("_")})

_FLAGS = ("use_tma_aligned_col_major_sf=False, round_sf=False, "
          "use_packed_ue8m0=False")
_NO_INPUT_SF = "an input SF is not supported here, as in TileKernels"

per_token_cast_with_sf_only = tk_op(
    "per_token_cast_with_sf_only",
    f"x, fmt, num_per_channels, x_block_size=None, {_FLAGS}",
    convert=[must_be_none("x_block_size", _NO_INPUT_SF)], returns="out_sf")
per_token_cast_with_precomputed_sf = tk_op(
    "per_token_cast_with_precomputed_sf",
    f"x, fmt, num_per_channels, sf, x_block_size=None, {_FLAGS}",
    convert=[must_be_none("x_block_size", _NO_INPUT_SF)], returns="out")
swiglu_forward_and_per_token_cast = tk_op(
    "swiglu_forward_and_per_token_cast",
    "x, fmt, num_per_channels, pos_to_token_topk=None, topk_weights=None, "
    f"pos_to_expert=None, {_FLAGS}, swiglu_clamp_value=None, "
    "clamped_count=None, sf_clamp_min=None",
    convert=[none_as("swiglu_clamp_value", 0.0),
             none_as("sf_clamp_min", 0.0)],
    returns=("out", "out_sf"))
swiglu_backward_and_per_token_cast = tk_op(
    "swiglu_backward_and_per_token_cast",
    "x, grad_out, weight, pos_to_token_topk, token_topk_to_pos, "
    "num_per_channels, round_sf=False, swiglu_clamp_value=None",
    convert=[quant_tensor("x", required=True),
             none_as("swiglu_clamp_value", 0.0)],
    returns=lambda args, out: (out["out"],
                               (out["x_grad_fp8"], out["x_grad_sf"]),
                               out["x_grad"], out["weight_grad"]))
