"""tilejit from Python: every registered op as a function, generated from
its declaration (tilejit._C.ops()).

This is the package's first layer: destination-passing calls on tensors of
any framework that has `data_ptr()`, `dtype`, `shape` and `stride()`
(PyTorch's tensors), outputs passed like inputs. TileKernels' allocating
API (`tilejit.tile_kernels`) is to be built on it.

    import tilejit
    tilejit.ops.per_token_cast(x, None, out, out_sf, fmt="e4m3",
                               num_per_channels=128)
"""
import inspect
import types

from . import _C

__all__ = ["ops", "declarations", "check", "signature", "output_layouts"]

_DECLS = {d["name"]: d for d in _C.ops()}

# torch's dtype names (str(torch.bfloat16) == "torch.bfloat16") to tilejit's.
_DTYPES = {
    "float32": "f32", "float": "f32", "float16": "f16", "half": "f16",
    "bfloat16": "bf16", "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2",
    "int8": "i8", "uint8": "u8", "int32": "i32", "int": "i32", "int64": "i64",
    "long": "i64", "float64": "f64", "double": "f64", "uint32": "u32",
}


def declarations():
    """Every op's declaration: name, summary, tensors, params (a dict each)."""
    return list(_DECLS.values())


def _tensor(name, t):
    if t is None:
        return None
    for attr in ("data_ptr", "dtype", "shape", "stride"):
        if not hasattr(t, attr):
            raise TypeError(f"argument '{name}' is a {type(t).__name__}; "
                            "requires a tensor (data_ptr(), dtype, shape, "
                            "stride()) or None")
    dtype = str(t.dtype).removeprefix("torch.")
    return (t.data_ptr(), _DTYPES.get(dtype, dtype), list(t.shape),
            list(t.stride()))


def signature(op):
    """The Python signature of `op`: its tensors in declaration order, an
    optional one (None: left out) defaulting to None where every tensor after
    it is optional too (else it is passed, as None or a tensor), then its
    parameters keyword-only with their defaults."""
    d = _DECLS[op]
    P = inspect.Parameter
    tensors, trailing = [], True
    for t in reversed(d["tensors"]):
        trailing = trailing and t["optional"]
        tensors.insert(0, P(t["name"], P.POSITIONAL_OR_KEYWORD,
                            default=None if trailing else P.empty))
    params = [P(p["name"], P.KEYWORD_ONLY, default=p["default"])
              for p in d["params"]]
    return inspect.Signature(tensors + params)


def _bind(op, args, kwargs):
    d = _DECLS[op]
    bound = signature(op).bind(*args, **kwargs)
    bound.apply_defaults()
    a = bound.arguments
    tensors = [_tensor(t["name"], a[t["name"]]) for t in d["tensors"]]
    params = [a[p["name"]] for p in d["params"]]
    return tensors, params


def check(op, *args, **kwargs):
    """Validates a call of `op` without launching (ValueError names the
    argument, its value and the requirement)."""
    if op not in _DECLS:
        raise ValueError(f"no op named '{op}'")
    tensors, params = _bind(op, args, kwargs)
    _C.check(op, tensors, params)


def output_layouts(op, *args, **kwargs):
    """The layouts of `op`'s outputs from its inputs and parameters alone:
    a list of (dtype name, shape, strides), in declaration order, for the
    caller to allocate (inputs as in a call, the outputs left out)."""
    if op not in _DECLS:
        raise ValueError(f"no op named '{op}'")
    d = _DECLS[op]
    P = inspect.Parameter
    inputs = [t for t in d["tensors"] if not t["output"]]
    sig = inspect.Signature(
        [P(t["name"], P.POSITIONAL_OR_KEYWORD,
           default=None if t["optional"] else P.empty) for t in inputs] +
        [P(p["name"], P.KEYWORD_ONLY, default=p["default"])
         for p in d["params"]])
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    a = bound.arguments
    tensors = [None if t["output"] else _tensor(t["name"], a[t["name"]])
               for t in d["tensors"]]
    return _C.output_layouts(op, tensors, [a[p["name"]] for p in d["params"]])


def _make(op):
    def call(*args, stream=0, **kwargs):
        tensors, params = _bind(op, args, kwargs)
        _C.call(op, tensors, params, stream)

    call.__name__ = op
    call.__qualname__ = op
    sig = signature(op)
    call.__signature__ = sig.replace(parameters=list(sig.parameters.values())
                                     + [inspect.Parameter(
                                         "stream",
                                         inspect.Parameter.KEYWORD_ONLY,
                                         default=0)])
    call.__doc__ = (f"{_DECLS[op]['summary']}\n\nValidates and launches on "
                    "`stream` (a CUstream as an int, e.g. torch.cuda."
                    "current_stream().cuda_stream; 0: the default stream).")
    return call


ops = types.SimpleNamespace(**{name: _make(name) for name in _DECLS})
