"""How a TileKernels function becomes a call of a tilejit op: the function's
own signature (TileKernels' names, order and defaults), a few declarative
argument conversions, and which outputs it returns. Everything else comes
from the op's declaration: arguments named like the op's tensors and
parameters pass through by name, outputs not given are allocated with
torch in the layouts `OpDef::output_layouts` gives, and the call goes to
the current torch CUDA stream.

    per_token_cast = tk_op(
        "per_token_cast",
        "x, fmt, num_per_channels, x_block_size=None, ..., out=None",
        convert=[quant_tensor("x"), pair("x_block_size", "x_block_m",
                 "x_block_k", none=(0, 0)), out_pair("out", "out", "out_sf")],
        returns=("out", "out_sf"))
"""
import sys

import tilejit
from tilejit import _C

_TORCH_NAMES = {
    "f32": "float32", "f16": "float16", "bf16": "bfloat16",
    "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2", "i8": "int8",
    "u8": "uint8", "i32": "int32", "i64": "int64", "f64": "float64",
    "u32": "uint32", "u64": "uint64", "bool": "bool",
}
_torch = None
_dtypes = {}


def torch_dtype_name(name):
    """torch's name of tilejit's dtype `name` ("bf16" -> "bfloat16")."""
    return _TORCH_NAMES[name]


def tilejit_dtype_name(dtype):
    """tilejit's name of a torch dtype (torch.bfloat16 -> "bf16")."""
    name = str(dtype).removeprefix("torch.")
    for k, v in _TORCH_NAMES.items():
        if v == name:
            return k
    raise ValueError(f"dtype {dtype} has no tilejit name")


def _torch_op(op):
    """torch.ops.tilejit.<op>, or None (registered when
    tilejit.tile_kernels was imported; register() is idempotent)."""
    from . import _torch_ops
    return _torch_ops.register(torch()).get(op)


def _compiling():
    """Whether torch.compile is tracing (torch imported by anyone: the
    first tilejit call may come inside a trace)."""
    t = sys.modules.get("torch")
    return t is not None and t.compiler.is_compiling()


def torch():
    """torch, imported on first use (the package imports without it)."""
    global _torch
    if _torch is None:
        import torch as t
        _torch = t
        _dtypes.update({k: getattr(t, v) for k, v in _TORCH_NAMES.items()})
    return _torch


_raw_stream = None


def _stream(device):
    """The current torch CUDA stream of `device` as an int: torch's raw
    getter where it has one (what Triton uses: no Stream object a call)."""
    global _raw_stream
    if _raw_stream is None:
        t = torch()
        _raw_stream = getattr(t._C, "_cuda_getCurrentRawStream", None) or (
            lambda index: t.cuda.current_stream(index).cuda_stream)
    return _raw_stream(device.index)


# --- argument conversions: f(args, call) reads TileKernels' arguments
# (`args`, by name) and writes the op's (`call`, by name).

def quant_tensor(arg, data=None, sf=None, required=False):
    """TileKernels' QuantTensor argument: a tensor, or a (data, sf) pair;
    the op's tensors `data` (default: `arg`) and `sf` (`arg`_sf)."""
    data = data or arg
    sf = sf or f"{arg}_sf"

    def convert(args, call):
        x = args[arg]
        if isinstance(x, (tuple, list)):
            if len(x) != 2:
                raise ValueError(f"argument '{arg}' is a {type(x).__name__} "
                                 f"of {len(x)}; requires a tensor or a "
                                 "(data, sf) pair")
            call[data], call[sf] = x
        elif required:
            raise ValueError(f"argument '{arg}' is a {type(x).__name__}; "
                             "requires a (data, sf) pair")
        else:
            call[data] = x
    convert.doc = (arg, "a (data, sf) pair" if required else
                   "a tensor, or a (data, sf) pair (a QuantTensor)", data)
    return convert


def pair(arg, first, second, none=None):
    """A (first, second) tuple argument as two integer parameters; `none`:
    their values when the argument is None (else None is refused)."""
    def convert(args, call):
        v = args[arg]
        if v is None and none is not None:
            v = none
        if (not isinstance(v, (tuple, list)) or len(v) != 2):
            raise ValueError(f"argument '{arg}' is {v!r}; requires a pair "
                             "of ints")
        call[first], call[second] = v
    convert.doc = (arg, f"({first}, {second})", None)
    return convert


def none_as(arg, value, param=None):
    """An argument whose None is the op's `value` (a parameter or tensor of
    the same name, or `param`)."""
    def convert(args, call):
        v = args[arg]
        call[param or arg] = value if v is None else v
    return convert


def out_pair(arg, data, sf):
    """TileKernels' `out=(data, sf)`: pre-allocated outputs, either None."""
    def convert(args, call):
        v = args[arg]
        if v is None:
            return
        if not isinstance(v, (tuple, list)) or len(v) != 2:
            raise ValueError(f"argument '{arg}' is {v!r}; requires None or "
                             "a (data, sf) pair of tensors or None")
        call[data], call[sf] = v
    convert.doc = (arg, f"None, or pre-allocated ({data}, {sf}), either "
                   "None", None)
    return convert


def must_be_none(arg, why):
    """A TileKernels argument the op does not take: refused unless None."""
    def convert(args, call):
        if args[arg] is not None:
            raise ValueError(f"argument '{arg}' is {args[arg]!r}; requires "
                             f"None ({why})")
    convert.doc = (arg, f"None ({why})", None)
    return convert


def from_config(param, getter):
    """A parameter TileKernels takes from its config (getter())."""
    def convert(args, call):
        call[param] = getter()
    return convert


def derive(param, fn):
    """A parameter computed from the op's converted arguments:
    fn(call) (e.g. a group size from a scale tensor's shape)."""
    def convert(args, call):
        call[param] = fn(call)
    return convert


def want(output, when):
    """An optional output allocated when when(args) (TileKernels returns it
    then), else left out."""
    def convert(args, call):
        if when(args):
            call[output] = ALLOCATE
    return convert


def same(name, arg):
    """The op's tensor `name` is argument `arg` (an input under another
    name, or an output written in place)."""
    def convert(args, call):
        call[name] = args[arg]
    return convert


def out_dtype(name, arg, names=None):
    """Output `name`'s dtype is argument `arg`: a torch dtype, or (with
    `names`) one of the names it maps to torch dtype names."""
    def convert(args, call):
        v = args[arg]
        if names is not None:
            if v not in names:
                allowed = ", ".join(repr(n) for n in names)
                raise ValueError(f"argument '{arg}' is {v!r}; requires one "
                                 f"of {allowed}")
            v = getattr(torch(), names[v])
        elif isinstance(v, _LazyDType):
            v = v.resolve()
        call.setdefault("__dtypes__", {})[name] = v
    return convert


# --- the generated function

ALLOCATE = object()  # call[output] = ALLOCATE: an optional output wanted

class _Spec:
    def __init__(self, op, convert, returns, device_of):
        d = {x["name"]: x for x in tilejit.declarations()}[op]
        self.op = op
        self.tensors = [t["name"] for t in d["tensors"]]
        self.outputs = [t["name"] for t in d["tensors"] if t["output"]]
        # Optional outputs (a count only some calls want) are allocated
        # only where a conversion asks (call[name] = ALLOCATE).
        self.optional = {t["name"] for t in d["tensors"]
                         if t["output"] and t["optional"]}
        self.required = [t for t in self.outputs if t not in self.optional]
        self.output_index = {t: i for i, t in enumerate(self.tensors)
                             if t in self.outputs}
        self.params = [(p["name"], p["default"]) for p in d["params"]]
        self.convert = convert
        self.returns = returns
        # Where the returned outputs are among the outputs.
        position = {t: i for i, t in enumerate(self.outputs)}
        if returns is None or callable(returns):
            self.returns_index = None
        elif isinstance(returns, str):
            self.returns_index = position[returns]
        else:
            self.returns_index = tuple(position[n] for n in returns)
        self.device_of = device_of


def _run(spec, args):
    call = {}
    for c in spec.convert:
        c(args, call)
    get = call.get
    tensors = [get(t, args.get(t)) for t in spec.tensors]
    params = [get(p, args.get(p, default)) for p, default in spec.params]
    device = args[spec.device_of]
    device = device[0].device if isinstance(device, (tuple, list)) else \
        device.device
    allocate = []
    for name, i in spec.output_index.items():
        t = tensors[i]
        if t is ALLOCATE or t is None and name not in spec.optional:
            allocate.append(name)
            tensors[i] = None
    if device.type == "meta" or device.type == "cuda" and _compiling():
        # Traced (torch.compile) or shapes only: the functional custom op,
        # which allocates the required outputs and the optional ones asked.
        if any(tensors[i] is not None for i in spec.output_index.values()):
            raise ValueError(f"{spec.op}: given output buffers (out=) are "
                             "not supported under torch.compile or on meta "
                             "tensors yet")
        return _returns(spec, _traced(spec, tensors, params,
                                      get("__dtypes__"), allocate), args)
    if device.type != "cuda":
        raise ValueError(f"tensors are on {device}; tilejit runs on CUDA "
                         "devices")
    outputs = _C.call_allocating(spec.op, tensors, params,
                                 lambda: _stream(device),
                                 allocate, _allocator(device, get(
                                     "__dtypes__")) if allocate else None)
    return _returns(spec, outputs, args)


def _returns(spec, outputs, args=None):
    r = spec.returns
    if r is None:
        return None
    if callable(r):
        return r(args, {n: t for n, t in zip(spec.outputs, outputs)
                        if t is not None})
    if isinstance(r, str):
        return outputs[spec.returns_index]
    return tuple(outputs[i] for i in spec.returns_index)


def _traced(spec, tensors, params, dtypes, allocate):
    """The outputs (in declaration order, None for optional ones not asked
    for) through torch.ops.tilejit.<op>, which returns every output (an
    empty tensor for an optional one not asked for)."""
    f = _torch_op(spec.op)
    inputs = [t for n, t in zip(spec.tensors, tensors)
              if n not in spec.output_index]
    names = [tilejit_dtype_name(dtypes[n]) if dtypes and n in dtypes else ""
             for n in spec.outputs]
    want = [n in allocate for n in spec.outputs if n in spec.optional]
    got = f(*inputs, *params, names, want)
    got = [got] if len(spec.outputs) == 1 else list(got)
    return [g if n not in spec.optional or n in allocate else None
            for n, g in zip(spec.outputs, got)]


def _allocator(device, dtypes):
    """alloc(name, dtype name, shape, strides) for _C.call_allocating:
    torch.empty_strided on `device`, of the dtype `dtypes` names for the
    output, else of the layout's (torch imported on the first call)."""
    def alloc(name, dtype, shape, strides):
        t = torch()
        return t.empty_strided(shape, strides, device=device,
                               dtype=dtypes.get(name) or _dtypes[dtype]
                               if dtypes else _dtypes[dtype])
    return alloc


def tk_op(op, signature, *, name=None, convert=(), returns, device_of=None):
    """The TileKernels function `name` (default: `op`) of the Python
    signature `signature` (its parameter list), calling tilejit op `op`:
    `convert` maps the arguments whose names or forms differ, `returns`
    names the outputs it returns (a name, a tuple of names, None, or a
    function of the arguments and the outputs by name), and
    the tensors go to the device of argument `device_of` (default: the
    first)."""
    name = name or op
    first = signature.split(",")[0].split("=")[0].strip()
    spec = _Spec(op, list(convert), returns, device_of or first)
    arg_names = [a.split("=")[0].strip().lstrip("*")
                 for a in signature.split(",")]
    arg_names = [a for a in arg_names if a]
    for a in arg_names:
        assert a.isidentifier(), a
    body = ", ".join(f"{a!r}: {a}" for a in arg_names)
    src = (f"def {name}({signature}):\n"
           f"    return _run(_spec, {{{body}}})\n")
    namespace = {"_run": _run, "_spec": spec, "torch": _LazyTorch()}
    exec(src, namespace)  # noqa: S102 - a declared signature
    f = namespace[name]
    f.tilejit_bound = True
    f.__doc__ = _doc(name, op, arg_names, spec.convert)
    return f


def _doc(name, op, arg_names, convert):
    """The docstring: the op's summary, then each argument named like one of
    the op's tensors or parameters with the declaration's words for it, or
    as its conversion describes it."""
    d = tilejit._DECLS[op]
    words = {t["name"]: (t["doc"] or t["shape"]) for t in d["tensors"]}
    for p in d["params"]:
        allowed = f" ({', '.join(p['choices'])})" if p["choices"] else ""
        words[p["name"]] = f"{p['doc']}{allowed}"
    for c in convert:
        if hasattr(c, "doc"):
            arg, form, like = c.doc
            words[arg] = form + (f"; {words[like]}" if words.get(like) else
                                 "")
    lines = [f"TileKernels' {name}, on tilejit's op {op}: {d['summary']}."]
    args = [f"    {a}: {words[a]}" for a in arg_names if words.get(a)]
    if args:
        lines += ["", "Args (as the op declares them):"] + args
    lines += ["", "Outputs are allocated with torch on the inputs' device; "
              "the launch goes to the current torch CUDA stream."]
    return "\n".join(lines)


class _LazyTorch:
    """`torch` in a signature's defaults (out_dtype=torch.float32) without
    importing torch: an attribute is a dtype named like torch's."""

    def __getattr__(self, attr):
        return _LazyDType(attr)


class _LazyDType:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"

    def resolve(self):
        return getattr(torch(), self.name)


def not_bound(name, what="tilejit has its CPU reference; its kernel is not "
                         "written yet"):
    """A TileKernels function tilejit does not bind yet: calling it raises
    NotImplementedError saying what is missing."""
    def f(*args, **kwargs):
        raise NotImplementedError(f"tile_kernels.{name}: not in tilejit yet "
                                  f"({what})")
    f.__name__ = f.__qualname__ = name.rsplit(".", 1)[-1]
    f.__doc__ = f"Not in tilejit yet: {what}."
    f.tilejit_bound = False
    return f
