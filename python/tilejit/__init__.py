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
import sys
import types

from . import _C

__all__ = ["ops", "declarations", "check", "signature", "output_layouts",
           "current_stream"]

_DECLS = {d["name"]: d for d in _C.ops()}


def declarations():
    """Every op's declaration: name, summary, tensors, params (a dict each)."""
    return list(_DECLS.values())


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


def _generate(op, sig, body):
    """A function of signature `sig` whose body is `body` (a Python
    expression over the parameters' names, `_C`, `_op` and the op's
    `_tensors` / `_params` tuples of names): Python binds the arguments
    itself, which costs a fraction of inspect.Signature.bind per call."""
    defaults = {}
    items, star = [], False
    for p in sig.parameters.values():
        assert p.name.isidentifier(), p.name
        if p.kind == p.KEYWORD_ONLY and not star:
            items.append("*")
            star = True
        if p.default is p.empty:
            items.append(p.name)
        else:
            defaults[f"_d_{p.name}"] = p.default
            items.append(f"{p.name}=_d_{p.name}")
    src = f"def {op}({', '.join(items)}):\n    return {body}\n"
    namespace = {"_C": _C, "_op": op, "_current_stream": current_stream,
                 **defaults}
    exec(src, namespace)  # noqa: S102 - names are checked identifiers
    f = namespace[op]
    f.__signature__ = sig
    return f


def _names(items):
    return "".join(f"{i['name']}, " for i in items)


def _checker(op):
    d = _DECLS[op]
    return _generate(op, signature(op),
                     f"_C.check(_op, ({_names(d['tensors'])}), "
                     f"({_names(d['params'])}))")


def inputs_signature(op):
    """The signature of a call given by its inputs alone (output_layouts,
    tilejit.cache): the inputs in declaration order (an optional one
    defaulting to None where every input after it is optional too), then
    the parameters, keyword-only with their defaults."""
    d = _DECLS[op]
    P = inspect.Parameter
    inputs, trailing = [], True
    for t in reversed([t for t in d["tensors"] if not t["output"]]):
        trailing = trailing and t["optional"]
        inputs.insert(0, P(t["name"], P.POSITIONAL_OR_KEYWORD,
                           default=None if trailing else P.empty))
    return inspect.Signature(inputs + [
        p for p in signature(op).parameters.values()
        if p.kind == P.KEYWORD_ONLY])


def _layouts(op):
    d = _DECLS[op]
    sig = inputs_signature(op)
    tensors = "".join("None, " if t["output"] else f"{t['name']}, "
                      for t in d["tensors"])
    return _generate(op, sig, f"_C.output_layouts(_op, ({tensors}), "
                              f"({_names(d['params'])}))")


def current_stream():
    """torch's current CUDA stream (of the current device) as an int where
    torch has initialised CUDA, else 0 (the default stream, which then is
    torch's current one too): where a call launches without `stream`."""
    t = sys.modules.get("torch")
    if t is None or not t.cuda.is_initialized():
        return 0
    return t._C._cuda_getCurrentRawStream(t._C._cuda_getDevice())


def _make(op):
    d = _DECLS[op]
    sig = signature(op)
    sig = sig.replace(parameters=list(sig.parameters.values()) + [
        inspect.Parameter("stream", inspect.Parameter.KEYWORD_ONLY,
                          default=None)])
    call = _generate(op, sig, f"_C.call(_op, ({_names(d['tensors'])}), "
                              f"({_names(d['params'])}), _current_stream() "
                              "if stream is None else stream)")
    call.__doc__ = (f"{d['summary']}\n\nValidates and launches on "
                    "`stream` (a CUstream as an int, e.g. torch.cuda."
                    "current_stream().cuda_stream; 0: the default stream; "
                    "None: torch's current stream, tilejit.current_stream()).")
    return call


_CHECK = {name: _checker(name) for name in _DECLS}
_LAYOUTS = {name: _layouts(name) for name in _DECLS}


def _known(op):
    if op not in _DECLS:
        raise ValueError(f"no op named '{op}'")


def check(op, *args, **kwargs):
    """Validates a call of `op` without launching (ValueError names the
    argument, its value and the requirement)."""
    _known(op)
    _CHECK[op](*args, **kwargs)


def output_layouts(op, *args, **kwargs):
    """The layouts of `op`'s outputs from its inputs and parameters alone:
    a list of (dtype name, shape, strides), in declaration order, for the
    caller to allocate (inputs as in a call, the outputs left out)."""
    _known(op)
    return _LAYOUTS[op](*args, **kwargs)


ops = types.SimpleNamespace(**{name: _make(name) for name in _DECLS})
