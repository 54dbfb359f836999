#!/usr/bin/env python3
"""kernel_survey.py - On the CPU machine: for each row of a benchmark log
(tilejit_bench's output, e.g. a GPU run's bench.log), what the compiler made
of its kernels, without a GPU:

    python3 tools/kernel_survey.py bench.log [--below PCT] [--build DIR]

prints one line a kernel, slowest rows first: the row's % of copy, the
op, its label, the kernel's vector width in elements and the op that
narrowed it (tilejit-opt -tile-assign-layouts=report-vector-width), and
ptxas's registers, shared memory and spill bytes with the blocks an SM the
registers allow. --below keeps the rows under PCT % of copy (default 100);
gemm rows are left out. Session 65 found per_block_cast_lossless reading
its fp4 a byte at a time this way (a broadcast narrowed it to 1).

A label's tokens become the compile's arguments: AxB is --shape, a bare
dtype --dtype, NAME=DTYPE --dtype NAME=DTYPE unless the op has no tensor
NAME (then --set, as fmt=e4m3), anything else --set.
"""
import os
import re
import subprocess
import sys
import tempfile

PTXAS = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin",
                     "ptxas")
DTYPES = {"bf16", "f16", "f32", "e4m3", "e5m2", "i8", "u8", "i32", "i64"}
ROW = re.compile(r"^(\w+)\s+(.*?)\s+(\d+\.\d+)\s+(\d+\.\d+)\s+(\d+\.\d+)"
                 r"\s+(\d+\.\d+)\s+(\d+\.\d+)%")


def arguments(label, as_set=()):
    args = []
    for tok in label.split():
        if re.fullmatch(r"\d+(x\d+)*", tok):
            args += ["--shape", tok]
        elif tok in DTYPES:
            args += ["--dtype", tok]
        elif "=" in tok:
            name, value = tok.split("=", 1)
            if value in DTYPES and name not in as_set:
                args += ["--dtype", tok]
            else:
                args += ["--set", tok]
    return args


def compile_stage(build, op, args, stage, kernel):
    env = dict(os.environ, TILEJIT_CACHE="0")
    return subprocess.run([f"{build}/bin/tilejit", "compile", op, *args,
                           "--dump", stage, "--kernel", str(kernel)],
                          capture_output=True, text=True, env=env)


def survey(build, op, label):
    args, as_set = arguments(label), set()
    lines = []
    for kernel in range(8):
        tile = compile_stage(build, op, args, "tile", kernel)
        missing = re.search(r"has no tensor '(\w+)'", tile.stderr)
        if tile.returncode != 0 and missing and missing.group(1) not in as_set:
            as_set.add(missing.group(1))
            args = arguments(label, as_set)
            tile = compile_stage(build, op, args, "tile", kernel)
        if tile.returncode != 0:
            if kernel == 0:
                lines.append(f"compile failed: {tile.stderr.strip()[:120]}")
            break
        report = subprocess.run(
            [f"{build}/bin/tilejit-opt", "-tile-lower-pipelined",
             "-tile-assign-layouts=report-vector-width",
             "-mlir-print-op-on-diagnostic=false", "-o", "/dev/null"],
            input=tile.stdout, capture_output=True, text=True).stderr
        width = re.search(r"vector width (\d+)", report)
        by = re.search(r"narrowed to \d+ by this '([\w.]+)'", report)
        ptx = compile_stage(build, op, args, "ptx", kernel).stdout
        with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
            f.write(ptx)
            f.flush()
            info = subprocess.run(
                [PTXAS, "-arch=sm_90a", "-v", f.name, "-o", "/dev/null"],
                capture_output=True, text=True).stderr
        number = lambda pattern: int(m.group(1)) if (
            m := re.search(pattern, info)) else 0
        regs = number(r"Used (\d+) registers")
        threads = int(m.group(1)) if (
            m := re.search(r"\.(?:maxntid|reqntid) (\d+)", ptx)) else 0
        blocks = (65536 // (((regs + 7) // 8 * 8) * threads)
                  if regs and threads else 0)
        smem = number(r"(\d+) bytes smem")
        spilled = number(r"(\d+) bytes spill stores")
        narrowed = f" ({by.group(1)})" if by else ""
        lines.append(
            f"k{kernel} width {width.group(1) if width else '?'}{narrowed} | "
            f"{threads} threads, {regs} registers, {smem} B smem, {spilled} B "
            f"spilled, {min(blocks, 32)} blocks an SM by registers")
    return lines


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        sys.exit(__doc__)
    below, build = 100.0, "build/default"
    rest = argv[2:]
    while rest:
        flag = rest.pop(0)
        if flag == "--below" and rest:
            value = rest.pop(0)
            try:
                below = float(value)
            except ValueError:
                sys.exit(f"kernel_survey.py: --below is '{value}'; requires "
                         "a number (a % of copy)")
        elif flag == "--build" and rest:
            build = rest.pop(0)
        else:
            sys.exit(f"kernel_survey.py: unknown argument '{flag}'; expected "
                     "--below PCT or --build DIR")
    for tool in ("tilejit", "tilejit-opt"):
        if not os.access(os.path.join(build, "bin", tool), os.X_OK):
            sys.exit(f"kernel_survey.py: no {build}/bin/{tool}; requires a "
                     "build (./dev.sh) or --build DIR")
    try:
        with open(argv[1]) as log:
            text = log.read()
    except OSError as e:
        sys.exit(f"kernel_survey.py: cannot read {argv[1]}: {e.strerror}")
    rows, seen = [], set()
    for line in text.splitlines():
        m = ROW.match(line)
        if not m or m.group(1) == "gemm" or float(m.group(7)) >= below:
            continue
        if (m.group(1), m.group(2)) not in seen:
            seen.add((m.group(1), m.group(2)))
            rows.append((float(m.group(7)), m.group(1), m.group(2)))
    for pct, op, label in sorted(rows):
        for line in survey(build, op, label):
            print(f"{pct:6.1f}%  {op:34} {label[:48]:48}  {line}")


if __name__ == "__main__":
    main(sys.argv)
