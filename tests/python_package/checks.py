"""checks.py - what the package's CPU tests share: a line per check and a
summary, the text of an expected error, and a stand-in tensor (torch's
interface, row-major at a 1 MiB-aligned address, no memory: validation
never reads it)."""
import sys

counts = {"passed": 0, "failed": 0}


def report(name, ok, detail=""):
    counts["passed" if ok else "failed"] += 1
    print(f"{'ok  ' if ok else 'FAIL'} {name}{'' if ok else ': ' + detail}")


def raises(name, kind, text, f):
    """Checks that f() raises `kind` with exactly `text`."""
    try:
        f()
    except kind as e:
        report(name, str(e) == text, f"got {str(e)!r}, want {text!r}")
        return
    except Exception as e:  # the wrong kind
        report(name, False, f"raised {type(e).__name__}: {e}")
        return
    report(name, False, "no error")


def finish(what):
    """Prints `what: N passed, M failed` and exits 1 when M > 0."""
    print(f"{what}: {counts['passed']} passed, {counts['failed']} failed")
    sys.exit(1 if counts["failed"] else 0)


class Tensor:
    """torch's tensor interface, row-major, on a CUDA device, no memory."""

    class device:
        type, index = "cuda", 0

    def __init__(self, dtype, shape):
        self.dtype, self.shape = f"torch.{dtype}", tuple(shape)
        strides, step = [], 1
        for n in reversed(self.shape):
            strides.insert(0, step)
            step *= n
        self._strides = tuple(strides)

    def data_ptr(self):
        return 0x100000

    def stride(self):
        return self._strides
