#!/usr/bin/env python3
"""test_kernel_survey.py - tools/kernel_survey.py on a two-row benchmark log
with this build's tilejit, tilejit-opt and ptxas: a row whose label holds a
parameter spelled like a dtype (fmt=e4m3, retried as --set), the order
(slowest first), --below leaving the faster row out, and the messages for no
arguments, an unknown one, a --below that is not a number, no build and no
log.

    python3 test_kernel_survey.py BUILD_DIR
"""
import os
import subprocess
import sys
import tempfile

from checks import Checks

TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools",
                    "kernel_survey.py")

LOG = """NVIDIA H100 80GB HBM3 (132 SMs)
op                 shape        ms  MB moved      GB/s  copy GB/s  of copy    TK us  TK/ours  check
scale_copy                                                  4096x7168    0.0823     234.9    2853.1     2970.4    96.0%        -        -  unchecked
per_block_cast         8001x7168 bk=128 bm=128 fmt=e4m3 round_sf=true    0.0620     172.1    2773.9     2898.0    95.7%    45.49     0.73  unchecked
"""


def run(*args):
    p = subprocess.run([sys.executable, TOOL, *args], capture_output=True,
                       text=True)
    return p.returncode, p.stdout, p.stderr


def main():
    build = sys.argv[1]
    check = Checks()

    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "bench.log")
        with open(log, "w") as f:
            f.write(LOG)
        rc, out, err = run(log, "--build", build)
        lines = out.splitlines()
        check(rc == 0 and len(lines) == 2, "two rows, one kernel each",
              out + err)
        if len(lines) == 2:
            check(lines[0].startswith("  95.7%  per_block_cast")
                  and lines[1].startswith("  96.0%  scale_copy"),
                  "slowest row first", out)
            check("k0 width 8" in lines[0] and "256 threads" in lines[0]
                  and "registers" in lines[0], "fmt=e4m3 compiled (--set)",
                  out)
            check("k0 width 4" in lines[1] and "blocks an SM by registers"
                  in lines[1], "scale_copy's f32 vectors", out)
        rc, out, err = run(log, "--below", "96", "--build", build)
        check(rc == 0 and "per_block_cast" in out and "scale_copy" not in out,
              "--below 96 keeps the 95.7 % row only", out + err)
        rc, out, err = run()
        check(rc == 1 and "kernel_survey.py - On the CPU machine" in err,
              "usage without arguments", err)
        rc, out, err = run(log, "--below", "abc", "--build", build)
        check(rc == 1 and err.strip() == "kernel_survey.py: --below is 'abc'; "
              "requires a number (a % of copy)", "--below abc", err)
        rc, out, err = run(log, "--build", os.path.join(d, "none"))
        check(rc == 1 and err.strip() == f"kernel_survey.py: no {d}/none/bin/"
              "tilejit; requires a build (./dev.sh) or --build DIR",
              "no build", err)
        rc, out, err = run(os.path.join(d, "none.log"), "--build", build)
        check(rc == 1 and err.strip() == "kernel_survey.py: cannot read "
              f"{d}/none.log: No such file or directory", "no log", err)
        rc, out, err = run(log, "--fast")
        check(rc == 1 and err.strip() == "kernel_survey.py: unknown argument "
              "'--fast'; expected --below PCT or --build DIR",
              "unknown argument", err)
    print(f"kernel_survey.py: {'FAILED' if check.failures else 'passed'}")
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
