#!/usr/bin/env python3
"""stalls.py - Where one kernel's warps wait, from ncu's per-instruction
warp-state samples (the CSV of `ncu -i REP --page source --csv
--print-source sass`, which tools/gpu/stalls.sh writes):

    python3 tools/gpu/stalls.py sass.csv [--top N]

prints the samples' total, the stall reasons' shares, then the SASS in
order with the running share of the samples: every barrier, grid-dependency
wait (ACQBULK) and trigger (PREEXIT), warp match, exit, and every
instruction holding at least 1.5 % of the samples (or the N heaviest with
--top), each with its main reason. A stall is charged to the instruction
that waits, so a load's latency shows on its first user (long_sb: global
or local memory, short_sb: shared memory, barrier, wait: a fixed latency,
drain: stores draining at exit).
"""
import csv
import sys

MARKS = ("BAR.", "ACQBULK", "PREEXIT", "MATCH", "EXIT", "WARPSYNC")


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    top = int(argv[argv.index("--top") + 1]) if "--top" in argv else 0
    try:
        rows = list(csv.reader(open(argv[1], newline="")))
    except OSError as e:
        print(f"stalls.py: cannot read {argv[1]}: {e.strerror}",
              file=sys.stderr)
        return 1
    start = next((i for i, r in enumerate(rows) if "Source" in r), None)
    if start is None:
        print(f"stalls.py: {argv[1]} has no 'Source' column; requires the CSV "
              "of ncu --page source --csv --print-source sass",
              file=sys.stderr)
        return 1
    head = rows[start]
    data = [r for r in rows[start + 1:] if len(r) == len(head)]
    samples = head.index("Warp Stall Sampling (All Samples)")
    source = head.index("Source")
    reasons = [j for j, h in enumerate(head)
               if h.startswith("stall_") and "Not Issued" not in h]
    value = lambda r, j: float(r[j] or 0)
    total = sum(value(r, samples) for r in data)
    if total == 0:
        print("stalls.py: no samples (a kernel too short for ncu's sampling "
              "interval?)")
        return 1
    print(f"{int(total)} samples over {len(data)} instructions")
    shares = sorted(((sum(value(r, j) for r in data), head[j][6:])
                     for j in reasons), key=lambda s: (-s[0], s[1]))
    print("  ".join(f"{name} {s / total * 100:.0f}%" for s, name in shares
                    if s / total >= 0.01))
    heaviest = set()
    if top:
        order = sorted(range(len(data)), key=lambda n: -value(data[n], samples))
        heaviest = set(order[:top])
    running = 0.0
    for n, r in enumerate(data):
        v = value(r, samples)
        running += v
        text = r[source].strip()
        mark = any(m in text for m in MARKS)
        if not (mark or n in heaviest or (not top and v / total >= 0.015)):
            continue
        why = max(reasons, key=lambda j: value(r, j))
        print(f"{n:5d} {running / total * 100:5.1f}% {v / total * 100:5.1f}%"
              f"  {head[why][6:] if v else '':16s} {text[:72]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
