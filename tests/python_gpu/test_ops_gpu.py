"""test_ops_gpu.py - every op's GPU cases launched from Python (on the GPU
machine, with torch): each case's inputs as the C++ harness fills them
(tilejit._testing), uploaded as torch CUDA tensors with the case's strides,
the outputs allocated with torch (poisoned where the op's table says), the
op called through tilejit.ops on a torch stream of its own, and the outputs
checked by the harness against the CPU reference, exactly as the C++ GPU
tests check them. Runs under pytest (a test per op and case) or alone
(`python test_ops_gpu.py [op,...]`: the cases prepared on every core at
once, a line per failure and a summary).

The inputs are drawn anew each run, as the C++ GPU tests draw theirs: case
i of an op's table from seed SEED + i, SEED random unless
TILEJIT_TEST_SEED gives it; a failure names its seed, and
TILEJIT_TEST_SEED=<SEED> replays the run.
"""
import os
import random
import sys

import torch

import tilejit
from tilejit import _testing

_TORCH = {
    "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
    "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2,
    "i8": torch.int8, "u8": torch.uint8, "i32": torch.int32,
    "i64": torch.int64, "f64": torch.float64, "u32": torch.uint32,
    "u64": torch.uint64, "bool": torch.bool,
}


def _extent(shape, strides):
    if any(n == 0 for n in shape):
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides))


def _device_tensor(dtype, shape, strides, data=None, fill=0):
    """A CUDA tensor of `dtype` with the given strides over a flat buffer of
    exactly its extent, holding `data` (bytes) or `fill` in every byte; and
    the flat byte buffer."""
    item = torch.empty((), dtype=_TORCH[dtype]).element_size()
    nbytes = _extent(shape, strides) * item
    if data is not None:
        flat = torch.frombuffer(bytearray(data), dtype=torch.uint8) \
            if nbytes else torch.empty(0, dtype=torch.uint8)
        flat = flat.cuda()
    else:
        flat = torch.full((nbytes,), fill, dtype=torch.uint8, device="cuda")
    if nbytes == 0:  # no elements: a tensor of the shape, of no storage
        return torch.empty_strided(shape, strides, dtype=_TORCH[dtype],
                                   device="cuda"), flat
    t = flat.view(_TORCH[dtype]).as_strided(shape, strides)
    return t, flat


def launch(op, case):
    """Launches a prepared case (_testing.Prepared) through tilejit.ops on a
    torch stream of its own; the outputs' bytes, for case.check."""
    decl = _DECLS[op]
    tensors, outputs = [], []
    for name, output, absent, dtype, shape, strides, data in case.tensors():
        if absent:
            tensors.append(None)
            if output:
                outputs.append(None)
            continue
        if output:
            t, flat = _device_tensor(dtype, shape, strides,
                                     fill=0xFF if case.poison else 0)
            outputs.append(flat)
        else:
            t, _ = _device_tensor(dtype, shape, strides, data=data)
        tensors.append(t)
    params = {p["name"]: v for p, v in zip(decl["params"], case.params())}
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        getattr(tilejit.ops, op)(*tensors, **params,
                                 stream=stream.cuda_stream)
    stream.synchronize()
    return [None if f is None else f.cpu().numpy().tobytes()
            for f in outputs]


def launch_and_check(op, case):
    """(passed, what was checked or the first difference)."""
    return case.check(launch(op, case))


_DECLS = {d["name"]: d for d in tilejit.declarations()}


def gpu_cases(ops=None):
    out = []
    for d in tilejit.declarations():
        if ops and d["name"] not in ops:
            continue
        try:
            cases = _testing.cases(d["name"])
        except ValueError:  # no case table
            continue
        out += [(d["name"], i, label) for i, label, kind in cases
                if kind & _testing.GPU and not kind & _testing.BIG]
    return out


SEED = int(os.environ.get("TILEJIT_TEST_SEED") or
           random.SystemRandom().randrange(2**31))


def _run_case(op, index):
    """A case prepared (its inputs from SEED + index), launched (on a
    stream of its own: torch's current stream is a thread's own) and
    checked: (label, passed, what; a failure's what names the run's
    seed)."""
    case = _testing.Prepared(op, index, SEED + index)
    try:
        passed, what = launch_and_check(op, case)
    except Exception as e:  # a case that throws fails alone
        passed, what = False, f"{type(e).__name__}: {e}"
    if not passed:
        what += f" (TILEJIT_TEST_SEED={SEED})"
    return case.label, passed, what


class _Ahead:
    """Under pytest: the selected cases (conftest.py hands them over once
    collected, in the order they run) run on every core ahead of the test
    that asserts each one's result, a window of them in memory at once."""

    def __init__(self):
        self.order, self.position, self.next = [], {}, 0
        self.futures, self.pool = {}, None

    def will_run(self, cases):
        self.order, self.next = list(cases), 0
        self.position = {key: i for i, key in enumerate(self.order)}

    def result(self, op, index):
        from concurrent.futures import ThreadPoolExecutor
        window = os.cpu_count() or 1
        if self.pool is None:
            self.pool = ThreadPoolExecutor(max_workers=window)
        self.next = max(self.next, self.position.get((op, index), -1) + 1)
        while len(self.futures) < window and self.next < len(self.order):
            key = self.order[self.next]
            self.next += 1
            if key not in self.futures:
                self.futures[key] = self.pool.submit(_run_case, *key)
        future = self.futures.pop((op, index), None)
        return future.result() if future else _run_case(op, index)

    def stop(self):
        """Cases not started are dropped (an interrupted session ends
        without waiting for them)."""
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)


_AHEAD = _Ahead()
will_run, stop = _AHEAD.will_run, _AHEAD.stop

try:
    import pytest

    @pytest.mark.parametrize("op,index,label", gpu_cases())
    def test_case(op, index, label):
        label, passed, what = _AHEAD.result(op, index)
        assert passed, f"{op} {label}: {what}"
except ImportError:
    pass


def main(only):
    """Every case: inputs and references made on every core at once
    (Prepared and check release the GIL), launched one by one, checked on
    every core again. SIGTERM (a timeout) prints the summary so far."""
    import signal
    from concurrent.futures import ThreadPoolExecutor
    cases = gpu_cases(only)
    counts = {"passed": 0, "failed": 0}

    def summary(note=""):
        ops = sorted({op for op, _, _ in cases})
        print(f"python GPU cases: {counts['passed']} passed, "
              f"{counts['failed']} failed of {len(cases)} ({len(ops)} ops, "
              f"TILEJIT_TEST_SEED={SEED}){note}", flush=True)

    def stopped(signum, frame):
        summary("; stopped by a timeout")
        os._exit(1)
    signal.signal(signal.SIGTERM, stopped)

    def record(op, label, ok, what):
        counts["passed" if ok else "failed"] += 1
        if not ok:
            print(f"FAIL {op} {label}: {what} (TILEJIT_TEST_SEED={SEED})",
                  flush=True)

    # Cases in memory at once, and threads (TILEJIT_TEST_THREADS when
    # several processes share the machine: tools/gpu/python.sh's JOBS).
    window = int(os.environ.get("TILEJIT_TEST_THREADS", 0)) or \
        os.cpu_count() or 1
    with ThreadPoolExecutor(max_workers=window) as pool:
        for first in range(0, len(cases), window):
            batch = cases[first:first + window]
            prepared = [pool.submit(_testing.Prepared, op, index,
                                    SEED + index)
                        for op, index, _ in batch]
            checks = []
            for (op, index, label), future in zip(batch, prepared):
                try:
                    case = future.result()
                    label = case.label
                    got = launch(op, case)
                    checks.append((op, label, pool.submit(case.check, got)))
                except Exception as e:  # a case that throws fails alone
                    record(op, label, False, f"{type(e).__name__}: {e}")
            for op, label, check in checks:
                try:
                    ok, what = check.result()
                except Exception as e:
                    ok, what = False, f"{type(e).__name__}: {e}"
                record(op, label, ok, what)
    summary()
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(set(sys.argv[1].split(",")) if len(sys.argv) > 1 else None))
