#!/usr/bin/env python3
"""test_stalls.py - tools/gpu/stalls.py on a small CSV in the form of ncu's
`--page source --csv --print-source sass`: the totals, the reasons' shares,
the running shares at the marked and heavy instructions, and its messages
for a file without the columns and a file that is not there."""
import os
import subprocess
import sys
import tempfile

from checks import Checks

TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "gpu",
                    "stalls.py")

CSV = '''"Kernel Name","get_fused_mapping_place"
"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)","stall_barrier","stall_long_sb","stall_long_sb (Not Issued)","stall_wait"
"0x10","LDC R1, c[0x0][0x28]","1","1","0","0","0","1"
"0x20","LDG.E R2, desc[UR4][R2.64]","0","0","0","0","0","0"
"0x30","ISETP.GE.AND P0, PT, R2, RZ, PT","6","6","0","6","6","0"
"0x40","BAR.SYNC.DEFER_BLOCKING 0x0","2","2","2","0","0","0"
"0x50","IADD3 R3, R3, 0x1, RZ","1","1","0","0","0","1"
"0x60","EXIT","0","0","0","0","0","0"
'''


def run(*args):
    p = subprocess.run([sys.executable, TOOL, *args], capture_output=True,
                       text=True)
    return p.returncode, p.stdout, p.stderr


def main():
    check = Checks()

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "sass.csv")
        open(path, "w").write(CSV)
        rc, out, err = run(path)
        lines = out.splitlines()
        check(rc == 0, f"exit 0, got {rc}: {err}")
        check(lines[0] == "10 samples over 6 instructions", lines[0])
        check(lines[1] == "long_sb 60%  barrier 20%  wait 20%", lines[1])
        # The load's latency on its user (60 %), the barrier and the exit
        # marked, the rest (10 % each) over 1.5 % too.
        body = [l.split() for l in lines[2:]]
        check([b[0] for b in body] == ["0", "2", "3", "4", "5"],
              f"rows {[b[0] for b in body]}")
        check(body[1][:4] == ["2", "70.0%", "60.0%", "long_sb"], body[1])
        check(body[2][:4] == ["3", "90.0%", "20.0%", "barrier"], body[2])
        check(body[4][:3] == ["5", "100.0%", "0.0%"] and body[4][3] == "EXIT",
              body[4])
        rc, out, _ = run(path, "--top", "1")
        rows = [l.split()[0] for l in out.splitlines()[2:]]
        check(rows == ["2", "3", "5"], f"--top 1 rows {rows}")

        bad = os.path.join(d, "bad.csv")
        open(bad, "w").write("a,b\n1,2\n")
        rc, _, err = run(bad)
        check(rc == 1 and err.strip() == (
            f"stalls.py: {bad} has no 'Source' column; requires the CSV of "
            "ncu --page source --csv --print-source sass"), err)
        rc, _, err = run(os.path.join(d, "none.csv"))
        check(rc == 1 and err.strip() == (
            f"stalls.py: cannot read {os.path.join(d, 'none.csv')}: No such "
            "file or directory"), err)
    print(f"stalls.py: {'FAILED' if check.failures else 'passed'}")
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
