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


# --- argument conversions: each reads TileKernels' arguments (or the
# op's names an earlier conversion wrote) and writes the op's names; the
# generated function runs them in order on its locals.

class Conversion:
    """Writes the op's names `writes` with fn(*values of `reads`) (a tuple
    when it writes several; a name "dtype:OUT" is output OUT's dtype for
    the allocation). `doc`: (argument, its form, the op's name whose words
    follow) for the docstring, or None."""

    __slots__ = ("reads", "writes", "fn", "doc")

    def __init__(self, reads, writes, fn, doc=None):
        self.reads, self.writes, self.fn, self.doc = (
            tuple(reads), tuple(writes), fn, doc)


def quant_tensor(arg, data=None, sf=None, required=False):
    """TileKernels' QuantTensor argument: a tensor, or a (data, sf) pair;
    the op's tensors `data` (default: `arg`) and `sf` (`arg`_sf)."""
    def split(x):
        if isinstance(x, (tuple, list)):
            if len(x) != 2:
                raise ValueError(f"argument '{arg}' is a {type(x).__name__} "
                                 f"of {len(x)}; requires a tensor or a "
                                 "(data, sf) pair")
            return x[0], x[1]
        if required:
            raise ValueError(f"argument '{arg}' is a {type(x).__name__}; "
                             "requires a (data, sf) pair")
        return x, None
    return Conversion((arg,), (data or arg, sf or f"{arg}_sf"), split,
                      (arg, "a (data, sf) pair" if required else
                       "a tensor, or a (data, sf) pair (a QuantTensor)",
                       data or arg))


def pair(arg, first, second, none=None):
    """A (first, second) tuple argument as two integer parameters; `none`:
    their values when the argument is None (else None is refused)."""
    def split(v):
        if v is None and none is not None:
            v = none
        if not isinstance(v, (tuple, list)) or len(v) != 2:
            raise ValueError(f"argument '{arg}' is {v!r}; requires a pair "
                             "of ints")
        return v[0], v[1]
    return Conversion((arg,), (first, second), split,
                      (arg, f"({first}, {second})", None))


def none_as(arg, value, param=None):
    """An argument whose None is the op's `value` (a parameter or tensor of
    the same name, or `param`)."""
    return Conversion((arg,), (param or arg,),
                      lambda v: value if v is None else v)


def out_pair(arg, data, sf):
    """TileKernels' `out=(data, sf)`: pre-allocated outputs, either None."""
    def split(v):
        if v is None:
            return None, None
        if not isinstance(v, (tuple, list)) or len(v) != 2:
            raise ValueError(f"argument '{arg}' is {v!r}; requires None or "
                             "a (data, sf) pair of tensors or None")
        return v[0], v[1]
    return Conversion((arg,), (data, sf), split,
                      (arg, f"None, or pre-allocated ({data}, {sf}), either "
                       "None", None))


def must_be_none(arg, why):
    """A TileKernels argument the op does not take: refused unless None."""
    def check(v):
        if v is not None:
            raise ValueError(f"argument '{arg}' is {v!r}; requires None "
                             f"({why})")
    return Conversion((arg,), (), check, (arg, f"None ({why})", None))


def from_config(param, getter):
    """A parameter TileKernels takes from its config (getter())."""
    return Conversion((), (param,), getter)


def derive(param, reads, fn):
    """A parameter computed from the values of `reads` (arguments, or the
    op's names earlier conversions wrote): fn(*values), e.g. a group size
    from a scale tensor's shape."""
    return Conversion(reads, (param,), fn)


def want(output, reads, when):
    """An optional output allocated when when(*values of `reads`)
    (TileKernels returns it then), else left out."""
    return Conversion(reads, (output,),
                      lambda *v: ALLOCATE if when(*v) else None)


def same(name, arg):
    """The op's tensor `name` is argument `arg` (an input under another
    name, or an output written in place)."""
    return Conversion((arg,), (name,), lambda v: v)


def in_place(arg):
    """A buffer the op adds into: its input `arg` and output `arg`_out."""
    return Conversion((arg,), (arg, f"{arg}_out"), lambda v: (v, v),
                      (arg, "a buffer the gradient is added to in place",
                       None))


def out_dtype(name, arg, names=None):
    """Output `name`'s dtype is argument `arg`: a torch dtype, or (with
    `names`) one of the names it maps to torch dtype names."""
    def dtype(v):
        if names is not None:
            if v not in names:
                allowed = ", ".join(repr(n) for n in names)
                raise ValueError(f"argument '{arg}' is {v!r}; requires one "
                                 f"of {allowed}")
            return getattr(torch(), names[v])
        return v.resolve() if isinstance(v, _LazyDType) else v
    return Conversion((arg,), (f"dtype:{name}",), dtype)


# --- the generated function

ALLOCATE = object()  # an optional output wanted (want())


class _Spec:
    def __init__(self, op, returns, result_args):
        d = tilejit._DECLS[op]
        self.op = op
        self.tensors = [t["name"] for t in d["tensors"]]
        self.outputs = [t["name"] for t in d["tensors"] if t["output"]]
        # Optional outputs (a count only some calls want) are allocated
        # only where a conversion asks (want()).
        self.optional = {t["name"] for t in d["tensors"]
                         if t["output"] and t["optional"]}
        self.output_items = [(t, i) for i, t in enumerate(self.tensors)
                             if t in self.outputs]
        self.returns = returns
        self.result_args = result_args  # returns(args, ...) wants them
        # Where the returned outputs are among the outputs.
        position = {t: i for i, t in enumerate(self.outputs)}
        if returns is None or callable(returns):
            self.returns_index = None
        elif isinstance(returns, str):
            self.returns_index = position[returns]
        else:
            self.returns_index = tuple(position[n] for n in returns)


def _run(spec, tensors, params, first, dtypes, args):
    """The call: `tensors` (a list, in declaration order; outputs None or
    ALLOCATE where they are to be allocated), `params`, the tensors' device
    that of `first` (a tensor, or a (data, sf) pair), `dtypes` the chosen
    dtypes of outputs by name (or None), `args` TileKernels' arguments by
    name where `returns` is a function of them."""
    allocate = []
    for name, i in spec.output_items:
        t = tensors[i]
        if t is ALLOCATE:
            allocate.append(name)
            tensors[i] = None
        elif t is None and name not in spec.optional:
            allocate.append(name)
    if isinstance(first, (tuple, list)):
        first = first[0]
    # is_meta is a plain bool (device makes an object). Anything else goes
    # to _C, which names a tensor not in CUDA memory, or not a tensor.
    if not getattr(first, "is_meta", False) and not _compiling():
        device = getattr(first, "device", None)
        outputs = _C.call_allocating(
            spec.op, tensors, params,
            _stream(device) if getattr(first, "is_cuda", False) else 0,
            allocate, None, device, dtypes)
        return _returns(spec, outputs, args)
    # Traced (torch.compile) or shapes only: the functional custom op,
    # which allocates the required outputs and the optional ones asked.
    if any(tensors[i] is not None for _, i in spec.output_items):
        raise ValueError(f"{spec.op}: given output buffers (out=) are "
                         "not supported under torch.compile or on meta "
                         "tensors yet")
    return _returns(spec, _traced(spec, tensors, params, dtypes, allocate),
                    args)


def _returns(spec, outputs, args=None):
    r = spec.returns
    if r is None:
        return None
    if spec.returns_index is None:
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
    outputs = {n for n, _ in spec.output_items}
    inputs = [t for n, t in zip(spec.tensors, tensors) if n not in outputs]
    names = [tilejit_dtype_name(dtypes[n]) if dtypes and n in dtypes else ""
             for n in spec.outputs]
    want = [n in allocate for n in spec.outputs if n in spec.optional]
    got = f(*inputs, *params, names, want)
    got = [got] if len(spec.outputs) == 1 else list(got)
    return [g if n not in spec.optional or n in allocate else None
            for n, g in zip(spec.outputs, got)]


def tk_op(op, signature, *, name=None, convert=(), returns, device_of=None):
    """The TileKernels function `name` (default: `op`) of the Python
    signature `signature` (its parameter list), calling tilejit op `op`:
    `convert` maps the arguments whose names or forms differ (Conversions,
    in order), `returns` names the outputs it returns (a name, a tuple of
    names, None, or a function of the arguments by name and the outputs by
    name), and the tensors go to the device of argument `device_of`
    (default: the first).

    Generated as Python source: the arguments bind as the signature says,
    each conversion is one line on the function's locals, and the op's
    tensors and parameters are read by name from them (a parameter no
    argument gives is its declared default), so that a call costs its
    conversions and one crossing into _C."""
    name = name or op
    d = tilejit._DECLS[op]
    arg_names = [a.split("=")[0].strip().lstrip("*")
                 for a in signature.split(",")]
    arg_names = [a for a in arg_names if a]
    for a in arg_names:
        assert a.isidentifier() and not a.startswith("_tj_"), a
    bound = set(arg_names)
    ns = {"_tj_run": _run, "torch": _LazyTorch()}
    lines, dtypes = [], []
    if callable(returns):
        lines.append("_tj_args = {" + ", ".join(f"{a!r}: {a}"
                                                for a in arg_names) + "}")
    lines.append(f"_tj_first = {device_of or arg_names[0]}")
    for i, c in enumerate(convert):
        for r in c.reads:
            assert r in bound, f"{name}: conversion {i} reads {r!r}"
        ns[f"_tj_c{i}"] = c.fn
        targets = []
        for w in c.writes:
            if w.startswith("dtype:"):
                dtypes.append(w[6:])
                w = f"_tj_dtype_{w[6:]}"
            assert w.isidentifier(), w
            targets.append(w)
            bound.add(w)
        call = f"_tj_c{i}({', '.join(c.reads)})"
        lines.append(f"{', '.join(targets)} = {call}" if len(targets) > 1
                     else f"{targets[0]} = {call}" if targets else call)
    tensors = ", ".join(t["name"] if t["name"] in bound else "None"
                        for t in d["tensors"])
    params = []
    for p in d["params"]:
        if p["name"] in bound:
            params.append(p["name"])
        else:
            ns[f"_tj_d_{p['name']}"] = p["default"]
            params.append(f"_tj_d_{p['name']}")
    chosen = ("{" + ", ".join(f"{o!r}: _tj_dtype_{o}" for o in dtypes) + "}"
              if dtypes else "None")
    lines.append(f"return _tj_run(_tj_spec, [{tensors}], ({', '.join(params)}"
                 f"{',' if len(params) == 1 else ''}), _tj_first, {chosen}, "
                 f"{'_tj_args' if callable(returns) else 'None'})")
    ns["_tj_spec"] = _Spec(op, returns, callable(returns))
    src = f"def {name}({signature}):\n" + "".join(f"    {ln}\n"
                                                   for ln in lines)
    exec(src, ns)  # noqa: S102 - a declared signature, checked names
    f = ns[name]
    f.tilejit_bound = True
    f.tilejit_source = src
    f.__doc__ = _doc(name, op, arg_names, convert)
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
        if c.doc:
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
