"""host_overhead.py - the host's cost of a call from Python (on the GPU
machine, with torch): 10,000 calls of topk_gate (8001x256 f32, top 8) and of
per_token_cast (4001x576 bf16, e4m3, 128 channels a scale), in batches of
100 (the time to enqueue a batch, divided by 100; a synchronize between
batches keeps the launch queue short, so the host's cost is what is timed,
not the GPU's), the median batch:

- tilejit.tile_kernels.<module>.<op>(...): TileKernels' call, outputs
  allocated with torch, the current stream;
- tilejit.ops.<op>(..., stream=torch.cuda.current_stream().cuda_stream):
  the Python layer, the stream asked of torch on every call, as an
  allocating layer does;
- the same with the stream fetched once;
- _C.call_repeated: the same call repeated from C++ (validation, lookup,
  launch), the C++ host cost;
- where the time between the two goes: _C.call from Python with the
  argument tuples built once (no generated function, no binding), _C.check
  (the tensors read and the call validated, no key and no launch), and the
  attributes _C reads of each tensor read from Python;
- a raw torch op of a similar size (torch.topk; x.abs() into a buffer);
- torch.empty_strided of the call's outputs (what the allocating layer
  spends in torch's allocator) and a bare launch (torch.cuda._sleep(0),
  one kernel through the CUDA runtime): the floors under the first row;
- what the allocating layer asks of torch besides: whether torch.compile
  is tracing (two ways) and the first tensor's device;
- the first row again, timed last (the first timing of a process may read
  otherwise).
"""
import statistics
import time

import torch

import tilejit
from tilejit import _C
from tilejit import tile_kernels as tk


def per_call_us(run_batch, batch=100, batches=100):
    us = []
    for _ in range(batches):
        start = time.perf_counter()
        run_batch(batch)
        us.append((time.perf_counter() - start) * 1e6 / batch)
        torch.cuda.synchronize()
    return statistics.median(us)


def report(what, op, tensors, params, raw, tile_kernels, outputs):
    f = getattr(tilejit.ops, op)
    stream = torch.cuda.current_stream().cuda_stream

    def fetched(n):
        for _ in range(n):
            f(*tensors, **params,
              stream=torch.cuda.current_stream().cuda_stream)

    def default(n):
        for _ in range(n):
            f(*tensors, **params)

    def once(n):
        for _ in range(n):
            f(*tensors, **params, stream=stream)

    decl = {d["name"]: d for d in tilejit.declarations()}[op]
    values = [params.get(p["name"], p["default"]) for p in decl["params"]]

    def cpp(n):
        _C.call_repeated(op, tensors, values, stream, n)

    tensor_tuple, value_tuple = tuple(tensors), tuple(values)

    def direct(n):
        for _ in range(n):
            _C.call(op, tensor_tuple, value_tuple, stream)

    def validate(n):
        for _ in range(n):
            _C.check(op, tensor_tuple, value_tuple)

    present = [t for t in tensors if t is not None]

    def attributes(n):
        for _ in range(n):
            for t in present:
                t.data_ptr(), t.dtype, t.shape, t.stride(), t.is_cuda

    def torch_op(n):
        for _ in range(n):
            raw()

    def tk_call(n):
        for _ in range(n):
            tile_kernels()

    layouts = [(o.shape, o.stride(), o.dtype, o.device) for o in outputs]

    def allocate(n):
        for _ in range(n):
            for shape, strides, dtype, device in layouts:
                torch.empty_strided(shape, strides, dtype=dtype,
                                    device=device)

    def bare_launch(n):
        for _ in range(n):
            torch.cuda._sleep(0)

    first = tensors[0]

    def compiling(n):
        for _ in range(n):
            torch.compiler.is_compiling()

    def dynamo_compiling(n):
        for _ in range(n):
            torch.compiler.is_dynamo_compiling()

    def device(n):
        for _ in range(n):
            first.device

    once(10)  # compile and load
    torch.cuda.synchronize()
    rows = [("tilejit.tile_kernels (allocates the outputs)", tk_call),
            ("tilejit.ops, torch's current stream each call", fetched),
            ("tilejit.ops, stream=None (tilejit.current_stream())", default),
            ("tilejit.ops, stream fetched once", once),
            ("C++ OpDef::call (_C.call_repeated)", cpp),
            ("  _C.call, the argument tuples built once", direct),
            ("  _C.check (read, validate; no key, no launch)", validate),
            ("  the tensors' attributes read in Python", attributes),
            ("raw torch op of a similar size", torch_op),
            (f"torch.empty_strided of the {len(outputs)} output(s)",
             allocate),
            ("a bare launch (torch.cuda._sleep(0))", bare_launch),
            ("  torch.compiler.is_compiling()", compiling),
            ("  torch.compiler.is_dynamo_compiling()", dynamo_compiling),
            ("  a tensor's device attribute", device),
            ("tilejit.tile_kernels again (timed last)", tk_call)]
    print(f"{what}: host cost per call, median of 100 batches of 100")
    for name, run in rows:
        print(f"  {name:<48} {per_call_us(run):7.2f} us")


torch.manual_seed(0)
scores = torch.randn(8001, 256, device="cuda")
idx = torch.empty(8001, 8, dtype=torch.int64, device="cuda")
report("topk_gate 8001x256 top 8", "topk_gate", [scores, idx],
       {"num_topk": 8}, lambda: torch.topk(scores, 8, dim=1),
       lambda: tk.moe.topk_gate(scores, 8), [idx])

x = torch.randn(4001, 576, device="cuda").bfloat16()
out = torch.empty(4001, 576, dtype=torch.float8_e4m3fn, device="cuda")
sf = torch.empty(4001, 5, dtype=torch.float32, device="cuda")
y = torch.empty_like(x)
report("per_token_cast 4001x576 e4m3", "per_token_cast", [x, None, out, sf],
       {"fmt": "e4m3", "num_per_channels": 128},
       lambda: torch.abs(x, out=y),
       lambda: tk.quant.per_token_cast(x, "e4m3", 128), [out, sf])
