"""test_package.py - tilejit's Python module on a machine without a GPU.

Imports the package (built and installed by run.cmake), and checks that
every registered op is a function with its declaration's signature, that a
valid call validates, and the text of each kind of argument error. Tensors
are stand-ins with torch's interface (data_ptr(), dtype, shape, stride())
and no memory: validation never reads it. Plain Python; prints a line per
check and `python package: N passed, M failed`; exits 1 when M > 0.
"""
import inspect

from checks import Tensor, finish, raises, report

import tilejit
from tilejit import _C

decls = _C.ops()
names = [d["name"] for d in decls]
report("ops are listed, in name order", len(names) > 30 and
       names == sorted(names), f"{names}")
missing = [n for n in names if not callable(getattr(tilejit.ops, n, None))]
report("every op is a function of tilejit.ops", not missing, f"{missing}")
report("the TileKernels names are there",
       {"per_token_cast", "topk_gate", "transpose",
        "swiglu_forward_and_per_channel_cast_and_transpose"} <= set(names))

sig = inspect.signature(tilejit.ops.per_token_cast)
want = ("(x, x_sf, out, out_sf, *, fmt='e4m3', num_per_channels=128, "
        "use_tma_aligned_col_major_sf=False, round_sf=False, "
        "use_packed_ue8m0=False, use_e4m3_sf=False, x_block_m=0, "
        "x_block_k=0, stochastic_cast=False, stream=None)")
report("per_token_cast's signature", str(sig) == want, str(sig))
bad = []
for d in decls:
    params = inspect.signature(getattr(tilejit.ops, d["name"])).parameters
    tensors = d["tensors"]
    for i, t in enumerate(tensors):
        trailing = all(u["optional"] for u in tensors[i:])
        if (params[t["name"]].default is None) != trailing:
            bad.append(f"{d['name']}.{t['name']}")
report("an optional tensor defaults to None where all after it are optional",
       not bad, f"{bad}")
report("the summary is the docstring",
       tilejit.ops.topk_gate.__doc__.startswith(
           decls[names.index("topk_gate")]["summary"]))

x = Tensor("bfloat16", (256, 7168))
out = Tensor("float8_e4m3fn", (256, 7168))
sf = Tensor("float32", (256, 56))
try:
    tilejit.check("per_token_cast", x, None, out, sf)
    tilejit.check("per_token_cast", x, None, out,
                  Tensor("float32", (256, 1)), fmt="e4m3",
                  num_per_channels=7168, round_sf=True)
    report("valid calls validate", True)
except Exception as e:
    report("valid calls validate", False, f"{type(e).__name__}: {e}")

layouts = tilejit.output_layouts("per_token_cast", x, fmt="e5m6",
                                 num_per_channels=7168)
report("outputs' layouts from the inputs", layouts ==
       [("u8", [256, 10752], [10752, 1]), ("f32", [256, 1], [1, 1])],
       f"{layouts}")
layouts = tilejit.output_layouts("batched_transpose",
                                 Tensor("bfloat16", (2, 64, 128)))
report("a declared output shape", layouts ==
       [("bf16", [2, 128, 64], [8192, 64, 1])], f"{layouts}")

op = "per_token_cast"
raises("a dtype the op does not take", ValueError,
       "per_token_cast: argument 'x' has dtype f16; requires bf16, f32, e4m3, "
       "or i8",
       lambda: tilejit.check(op, Tensor("float16", (256, 7168)), None, out,
                             sf))
raises("an output of another shape", ValueError,
       "per_token_cast: argument 'out' is e4m3[255, 7168] strides [7168, 1]; "
       "requires e4m3[256, 7168]",
       lambda: tilejit.check(op, x, None,
                             Tensor("float8_e4m3fn", (255, 7168)), sf))
raises("a float for an int", ValueError,
       "per_token_cast: argument 'num_per_channels' is 8.5; requires an int",
       lambda: tilejit.check(op, x, None, out, sf, num_per_channels=8.5))
raises("a bool for an int", ValueError,
       "per_token_cast: argument 'num_per_channels' is True; requires an int",
       lambda: tilejit.check(op, x, None, out, sf, num_per_channels=True))
raises("an int past 64 bits", ValueError,
       "per_token_cast: argument 'num_per_channels' is 1180591620717411303424; "
       "requires an int of 64 bits",
       lambda: tilejit.check(op, x, None, out, sf, num_per_channels=2**70))
raises("an int for a bool", ValueError,
       "per_token_cast: argument 'round_sf' is 2; requires a bool",
       lambda: tilejit.check(op, x, None, out, sf, round_sf=2))
raises("a choice not declared", ValueError,
       "per_token_cast: argument 'fmt' is 'e9'; requires e4m3, e2m1, or e5m6",
       lambda: tilejit.check(op, x, None, out, sf, fmt="e9"))
raises("the op's own rule", ValueError,
       "per_token_cast: argument 'num_per_channels' is 100; requires 16, 32, "
       "64, 128, or K = 7168 when K is a multiple of 64",
       lambda: tilejit.check(op, x, None, out, sf, num_per_channels=100))
raises("a dtype tilejit does not know", ValueError,
       "per_token_cast: argument 'x' has dtype 'complex64', which tilejit "
       "does not know",
       lambda: tilejit.check(op, Tensor("complex64", (256, 7168)), None, out,
                             sf))
raises("a rank past TensorView's", ValueError,
       "per_token_cast: argument 'x' has more than 6 dimensions; requires at "
       "most 6",
       lambda: tilejit.check(op, Tensor("bfloat16", (1,) * 7), None, out,
                             sf))
raises("not a tensor", TypeError,
       "argument 'x' is a list; requires a tensor (data_ptr(), dtype, shape, "
       "stride(); or DLPack) or None",
       lambda: tilejit.check(op, [1, 2], None, out, sf))
raises("a missing tensor", TypeError,
       "per_token_cast() missing 1 required positional argument: 'out_sf'",
       lambda: tilejit.check(op, x, None, out))
raises("an unknown parameter", TypeError,
       "per_token_cast() got an unexpected keyword argument 'num_topk'",
       lambda: tilejit.check(op, x, None, out, sf, num_topk=8))
raises("an int for a str", ValueError,
       "per_token_cast: argument 'fmt' is 3; requires a str",
       lambda: tilejit.check(op, x, None, out, sf, fmt=3))
swiglu = "swiglu_forward_and_per_channel_cast_and_transpose"
raises("a str for a float", ValueError,
       f"{swiglu}: argument 'swiglu_clamp_value' is 'big'; requires a float",
       lambda: tilejit.check(swiglu, Tensor("bfloat16", (128, 256)),
                             Tensor("float8_e4m3fn", (128, 128)),
                             Tensor("float32", (1, 128)),
                             swiglu_clamp_value="big"))
raises("the generic entry counts the parameters", ValueError,
       "per_token_cast: 0 parameters given; the op takes 9",
       lambda: _C.check("per_token_cast", [x, None, out, sf], []))
raises("layouts refuse what a call would", ValueError,
       "batched_transpose: argument 'x' has shape [2, 60, 64] (X = 60); "
       "requires X a multiple of 64",
       lambda: tilejit.output_layouts("batched_transpose",
                                      Tensor("float32", (2, 60, 64))))
raises("an op that does not exist", ValueError, "no op named 'nope'",
       lambda: tilejit.check("nope"))
raises("the generic entry counts the tensors", ValueError,
       "per_token_cast: 0 tensors given; the op takes 4",
       lambda: _C.check("per_token_cast", [], []))


class ListTensor(Tensor):
    """The same, its shape and strides lists (sequences that are no tuple)."""

    def __init__(self, dtype, shape):
        super().__init__(dtype, shape)
        self.shape, self._strides = list(self.shape), list(self._strides)


values = ["e4m3", 128, False, False, False, False, 0, 0, False]
for what, tensors, params in [
        ("tuples", (x, None, out, sf), tuple(values)),
        ("lists", [x, None, out, sf], values),
        ("shapes and strides as lists",
         (ListTensor("bfloat16", (256, 7168)), None,
          ListTensor("float8_e4m3fn", (256, 7168)),
          ListTensor("float32", (256, 56))), tuple(values))]:
    try:
        _C.check("per_token_cast", tensors, params)
        report(f"the generic entry reads {what}", True)
    except Exception as e:  # noqa: BLE001 - the check reports it
        report(f"the generic entry reads {what}", False, repr(e))
try:  # a name made at run time: another str object than the interned one
    _C.check("".join(["per_token", "_cast"]), (x, None, out, sf),
             tuple(values))
    report("an op named by a str made at run time", True)
except Exception as e:  # noqa: BLE001
    report("an op named by a str made at run time", False, repr(e))
try:
    _C.check(7, (x, None, out, sf), tuple(values))
    report("an op name that is no str: TypeError", False, "no error")
except TypeError as e:  # nanobind's own text, which lists the signature
    report("an op name that is no str: TypeError",
           str(e).startswith("check(): incompatible function arguments"),
           str(e))

finish("python package")
