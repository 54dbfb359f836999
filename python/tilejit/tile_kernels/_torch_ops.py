"""tilejit's ops as torch custom ops (`torch.ops.tilejit.<op>`), generated
from the declarations: functional (the inputs and parameters in, the
outputs a call allocates out), with a CUDA implementation (tilejit's launch
on the current stream) and a fake one (the outputs' layouts from
`OpDef::output_layouts`, on the inputs' device), so that torch.compile
traces a TileKernels call as one node and meta tensors get their shapes.

Registered when tilejit.tile_kernels is imported (not inside a trace,
where torch refuses it). Optional outputs are returned too: allocated when
`want` asks, else as empty tensors.
"""
from tilejit import _C
import tilejit

_TYPES = {"bool": "bool", "int": "int", "float": "float", "choice": "str"}
_registered = {}


class _Layout:
    """A fake tensor's dtype, shape and strides behind torch's interface,
    with an aligned stand-in address: what output_layouts reads."""

    __slots__ = ("dtype", "shape", "_strides")

    def __init__(self, t):
        self.dtype = t.dtype
        self.shape = tuple(int(n) for n in t.shape)  # a SymInt specialises
        self._strides = tuple(int(n) for n in t.stride())

    def data_ptr(self):
        return 1 << 20

    def stride(self):
        return self._strides

    @classmethod
    def of(cls, dtype, shape, strides):
        """A layout output_layouts gave (dtype a tilejit name)."""
        t = cls.__new__(cls)
        t.dtype, t.shape, t._strides = dtype, tuple(shape), tuple(strides)
        return t


def schema(decl):
    """The custom op's schema: the inputs (Tensor, or Tensor? for an
    optional one), the parameters by type, the outputs' dtype names (str[],
    one an output: "" keeps the layout's), whether each optional output is
    wanted (bool[]), and every output (an empty tensor for an optional one
    not wanted)."""
    args = []
    for t in decl["tensors"]:
        if not t["output"]:
            args.append(f"Tensor{'?' if t['optional'] else ''} {t['name']}")
    for p in decl["params"]:
        args.append(f"{_TYPES[p['type']]} {p['name']}")
    args += ["str[] out_dtypes", "bool[] want"]
    outs = [t for t in decl["tensors"] if t["output"]]
    ret = "Tensor" if len(outs) == 1 else \
        "(" + ", ".join("Tensor" for _ in outs) + ")"
    return f"({', '.join(args)}) -> {ret}"


def _split(decl, args):
    """The custom op's arguments as _C's tensors (outputs None), the
    parameters, the outputs' dtype names and the optional outputs wanted."""
    it = iter(args)
    tensors = [None if t["output"] else next(it) for t in decl["tensors"]]
    params = [next(it) for _ in decl["params"]]
    return tensors, params, next(it), next(it)


def register(torch):
    """Defines torch.ops.tilejit.<op> for every declared op with outputs
    (once)."""
    if _registered:
        return _registered
    from . import _binding
    lib = torch.library.Library("tilejit", "DEF")
    _registered["__lib__"] = lib
    for decl in tilejit.declarations():
        op = decl["name"]
        outs = [t for t in decl["tensors"] if t["output"]]
        if not outs:
            continue
        lib.define(op + schema(decl))

        def wanted(want, _outs=outs):
            """Per output: allocated (required, or optional and wanted)."""
            it = iter(want)
            return [not t["optional"] or bool(next(it)) for t in _outs]

        def cuda(*args, _op=op, _decl=decl, _outs=outs, _wanted=wanted):
            tensors, params, dtypes, want = _split(_decl, args)
            device = next(t for t in tensors if t is not None).device
            alloc = _wanted(want)
            names = [t["name"] for t, a in zip(_outs, alloc) if a]
            chosen = {t["name"]: getattr(torch, _binding.torch_dtype_name(d))
                      for t, d in zip(_outs, dtypes) if d}
            got = _C.call_allocating(
                _op, tensors, params, _binding._stream(device), names,
                None, device, chosen)
            got = [g if a else torch.empty(0, device=device)
                   for g, a in zip(got, alloc)]
            return got[0] if len(got) == 1 else tuple(got)

        def fake(*args, _op=op, _decl=decl, _outs=outs, _wanted=wanted):
            tensors, params, dtypes, want = _split(_decl, args)
            device = next(t for t in tensors if t is not None).device
            alloc = _wanted(want)
            views = [None if t is None else _Layout(t) for t in tensors]
            layouts = _C.output_layouts(_op, views, params)
            chosen = [d or layout[0] for d, layout in zip(dtypes, layouts)]
            # The whole call validated, as the launch would (its op's own
            # rules too), on stand-ins of the outputs it writes.
            it = iter(zip(layouts, chosen, alloc))
            stand_ins = []
            for t, v in zip(_decl["tensors"], views):
                if t["output"]:
                    (_, shape, strides), dtype, a = next(it)
                    v = _Layout.of(dtype, shape, strides) if a else None
                stand_ins.append(v)
            _C.check(_op, stand_ins, params)
            got = [torch.empty_strided(
                shape, strides, device=device,
                dtype=getattr(torch, _binding.torch_dtype_name(dtype)))
                if a else torch.empty(0, device=device)
                for (_, shape, strides), dtype, a in zip(layouts, chosen,
                                                          alloc)]
            return got[0] if len(got) == 1 else tuple(got)

        lib.impl(op, cuda, "CUDA")
        torch.library.register_fake(f"tilejit::{op}", fake, lib=lib)
        _registered[op] = getattr(torch.ops.tilejit, op)
    return _registered
