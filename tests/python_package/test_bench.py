"""test_bench.py - tilejit.bench's chart of a tilejit_bench report (a
report written here in its format): a bar a memory-bound row, in
proportion to its fraction of the copy, TileKernels' tick where its time
is known (at its fraction of the H200's copy), failed checks in red, valid
SVG; the CLI's summary, the ratio to TileKernels, and errors.
Plain Python; prints `bench: N passed, M failed`; exits 1 when M > 0.
"""
import contextlib
import io
import json
import os
import tempfile
import xml.etree.ElementTree as ET

from checks import finish, report

from tilejit import bench

rows = [
    {"op": "per_token_cast", "shape": "8001x7168 bf16", "us": 44.0,
     "bytes": 1.7e8, "gbps": 3870.0, "copy_gbps": 4100.0, "of_copy": 0.944,
     "peer_us": 43.6, "check": "ok"},
    {"op": "topk_gate", "shape": "8001x256", "us": 11.1, "bytes": 8.7e6,
     "gbps": 790.0, "copy_gbps": 2900.0, "of_copy": 0.272, "peer_us": None,
     "check": "FAILED"},
    {"op": "gemm", "shape": "8192x8192x8192", "us": 1500.0, "tflops": 730.0,
     "check": "ok"},
]
path = os.path.join(tempfile.mkdtemp(), "bench.json")
with open(path, "w") as f:
    json.dump({"device": "NVIDIA H200 (132 SMs)", "rows": rows}, f)

svg = bench.chart(bench.load(path))
root = ET.fromstring(svg)
ns = "{http://www.w3.org/2000/svg}"
bars = [e for e in root.iter(f"{ns}rect") if e.get("class") == "bar"]
report("a bar a memory-bound row (the gemm row left out)", len(bars) == 2,
       f"{len(bars)}")
w = [float(b.get("width")) for b in bars]
report("bars in proportion to the fraction of the copy",
       abs(w[0] / w[1] - 0.944 / 0.272) < 0.01, f"{w}")
report("a failed check is red, a passed one not",
       bars[1].get("fill") == "#c62828" and bars[0].get("fill") != "#c62828")
ticks = [e for e in root.iter(f"{ns}line") if e.get("class") == "peer"]
peer = 1.7e8 / (43.6e3) / bench.PEER_COPY_GBPS  # of the H200 copy
left = float(bars[0].get("x"))
report("TileKernels' tick where its time is known, at its fraction",
       len(ticks) == 1 and abs((float(ticks[0].get("x1")) - left) / w[0]
                               - peer / 0.944) < 0.01,
       f"{[t.attrib for t in ticks]}")
labels = [e.text for e in root.iter(f"{ns}text")]
report("rows labelled op and shape", "per_token_cast 8001x7168 bf16" in labels
       and "topk_gate 8001x256" in labels, f"{labels}")

out = io.StringIO()
svg_path = path.replace(".json", ".svg")
with contextlib.redirect_stdout(out):
    rc = bench.main([path, svg_path])
report("the CLI writes the chart and a summary", rc == 0 and
       os.path.exists(svg_path) and "2 memory-bound rows on NVIDIA H200 "
       "(132 SMs): geometric mean 50.7% of copy" in out.getvalue(),
       out.getvalue())
# per_token_cast: 0.944 of the copy against TileKernels' 1.7e8 B in 43.6 us
# of 4264 GB/s (0.914): 1.03x; topk_gate has no TileKernels time.
report("the ratio to TileKernels' fraction of its own copy",
       "against TileKernels (fractions of each one's copy): geometric mean "
       "1.03x over 1 row\n" in out.getvalue(), out.getvalue())
slow = dict(rows[0], of_copy=0.5)
slow_path = path.replace(".json", "-slow.json")
with open(slow_path, "w") as f:
    json.dump({"device": "NVIDIA H100", "rows": [slow]}, f)
out = io.StringIO()
with contextlib.redirect_stdout(out):
    rc = bench.main([slow_path])
report("a row below TileKernels' fraction is listed with its ratio",
       rc == 0 and "   0.55x  per_token_cast 8001x7168 bf16" in out.getvalue(),
       out.getvalue())
err = io.StringIO()
with contextlib.redirect_stderr(err):
    rc = bench.main([])
report("usage without a report", rc == 2 and "usage:" in err.getvalue())
bad = path.replace(".json", "-bad.json")
with open(bad, "w") as f:
    json.dump([1, 2], f)
err = io.StringIO()
with contextlib.redirect_stderr(err):
    rc = bench.main([bad])
report("a file that is no report", rc == 1 and err.getvalue() ==
       f"tilejit.bench: {bad}: not a tilejit_bench report (no 'rows')\n",
       err.getvalue())
finish("bench")
