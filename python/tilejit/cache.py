"""tilejit.cache: the kernel cache from Python. Kernels are compiled per
specialisation key (the op, its static parameters, dtypes, the shape facts
its kernel specialises on) on first use and kept in memory and on disk
(TILEJIT_CACHE_DIR, default ~/.cache/tilejit; TILEJIT_CACHE=0: memory only).

    import tilejit.cache as cache
    spec = cache.tensor("bf16", (4096, 7168))
    cache.precompile("per_token_cast", spec, fmt="e4m3")   # no GPU needed
    cache.precompile_all([("topk_gate", (cache.tensor("f32", (8192, 256)),),
                           {"num_topk": 8})])
    cache.explain("per_token_cast", spec, fmt="e4m3", round_sf=True)
    # {'key': 'op=per_token_cast\\n...', 'on_disk': False,
    #  'nearest_differs': ['round_sf: false -> true'], ...}

Calls are given as `tilejit.output_layouts` takes them: the op's inputs in
declaration order (tensors, or `tensor(...)` specs of their dtype and
layout) and its parameters by name; the outputs follow from them.
"""
import tilejit
from . import _C

__all__ = ["tensor", "cache_dir", "stats", "entries", "clear", "precompile",
           "precompile_all", "explain"]


class TensorSpec:
    """A tensor's dtype, shape and strides, with no memory: what a call
    specialises on (at a 1 MiB-aligned stand-in address)."""

    def __init__(self, dtype, shape, strides=None):
        self.dtype = dtype
        self.shape = tuple(int(n) for n in shape)
        if strides is None:
            strides, step = [], 1
            for n in reversed(self.shape):
                strides.insert(0, step)
                step *= max(n, 1)
        self._strides = tuple(int(s) for s in strides)

    def data_ptr(self):
        return 1 << 20

    def stride(self):
        return self._strides

    def __repr__(self):
        return f"tensor({str(self.dtype)!r}, {self.shape}, {self._strides})"


def tensor(dtype, shape, strides=None):
    """A stand-in tensor: `dtype` a tilejit name ("bf16", "e4m3", ...) or a
    torch dtype, `shape`, and `strides` in elements (default row-major)."""
    return TensorSpec(dtype, shape, strides)


def _stand_in(t):
    """A tensor's layout only (a real tensor's memory is not needed)."""
    if t is None or isinstance(t, TensorSpec):
        return t
    return TensorSpec(t.dtype, t.shape, t.stride())


def _call(op, inputs, params):
    """The call's tensors (declaration order; the outputs as stand-ins in
    the layouts the inputs give) and parameters."""
    if op not in tilejit._DECLS:
        raise ValueError(f"no op named '{op}'")
    d = tilejit._DECLS[op]
    bound = tilejit.inputs_signature(op).bind(*inputs, **params)
    bound.apply_defaults()
    a = bound.arguments
    tensors = [None if t["output"] else _stand_in(a[t["name"]])
               for t in d["tensors"]]
    values = [a[p["name"]] for p in d["params"]]
    layouts = iter(_C.output_layouts(op, tensors, values))
    tensors = [TensorSpec(*next(layouts)) if t["output"] else v
               for t, v in zip(d["tensors"], tensors)]
    return tensors, values


def cache_dir():
    """The disk cache's directory."""
    return _C.cache_dir()


def stats():
    """Hits, compiles and compile time: this process's (`in_process`) and
    every process's that used the directory (`persistent`); `disk_problem`
    says why entries are not written to disk ("" while they are)."""
    return _C.cache_stats()


def entries():
    """The disk cache's entries: digest, op, key text, bytes, age, whether
    the cubin is in it."""
    return _C.cache_entries()


def clear():
    """Removes every disk entry; returns how many."""
    return _C.cache_clear()


def precompile(op, *inputs, **params):
    """Compiles the kernel of a call of `op` into the cache without
    launching it (no GPU needed): {"digest", "source": "memory", "disk" or
    "compiled", "ms"}. ValueError for a call the op would refuse."""
    tensors, values = _call(op, inputs, params)
    digest, source, ms = _C.precompile(op, tensors, values)
    return {"digest": digest, "source": source, "ms": ms}


def precompile_all(calls):
    """precompile for each (op, inputs, params) of `calls`; the results in
    order."""
    return [precompile(op, *inputs, **params) for op, inputs, params in calls]


def explain(op, *inputs, **params):
    """Why a call would compile or not: its key (text and digest), whether
    the disk cache holds it, and how the nearest entry of the same op
    differs (`nearest_differs`, `name: cached -> this call`; empty when
    none is cached)."""
    tensors, values = _call(op, inputs, params)
    return _C.explain(op, tensors, values)
