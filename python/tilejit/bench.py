"""tilejit.bench: the benchmark report as a chart.

`tilejit_bench` (the C++ benchmark, tools/gpu/run.sh on the GPU machine)
writes every op x shape row as JSON when TILEJIT_BENCH_JSON names a file:
µs, bytes, GB/s, the copy's GB/s in the same run, the fraction of the copy,
TileKernels' µs where measured, the check. This draws it:

    python -m tilejit.bench bench.json chart.svg

a bar a row of its % of a device-to-device copy (the roofline of a
memory-bound op), TileKernels' own % where measured as a tick on the bar
(of the copy of the H200 its times were taken on), failed checks in red;
and prints the lowest rows and, against TileKernels, the ratio of the two
fractions (their geometric mean, and the rows below 1). The chart is
SVG written directly (no plotting library needed).
"""
import json
import math
import sys
from xml.sax.saxutils import escape

__all__ = ["load", "chart", "main"]


def load(path):
    """The report: {"device": str, "rows": [row, ...]}; a memory-bound row
    has "of_copy", a compute-bound one "tflops"."""
    with open(path) as f:
        report = json.load(f)
    if not isinstance(report, dict) or not isinstance(report.get("rows"),
                                                      list):
        raise ValueError(f"{path}: not a tilejit_bench report (no 'rows')")
    return report


# The device-to-device copy of the machine TileKernels' times were taken on
# (an H200: shared/perf/tilekernels_h200.md, 4264 GB/s). TileKernels' fraction
# of a copy is of that one, so that a report from another card (an H100's copy
# is two thirds of it) compares fractions of each machine's own roofline.
PEER_COPY_GBPS = 4264.0


def _peer_of_copy(row):
    """TileKernels' fraction of its machine's copy on the same row, or
    None."""
    peer = row.get("peer_us")
    if not peer or not row.get("bytes"):
        return None
    return row["bytes"] / (peer * 1e3) / PEER_COPY_GBPS


def chart(report, width=900):
    """The SVG text of the % of copy chart of a report's memory-bound
    rows."""
    rows = [r for r in report["rows"] if "of_copy" in r]
    bar_h, gap, left, top = 16, 4, 430, 48
    right = 60
    plot_w = width - left - right
    most = max([1.0] + [r["of_copy"] for r in rows] +
               [p for p in map(_peer_of_copy, rows) if p])
    scale = plot_w / (math.ceil(most * 10) / 10)
    height = top + len(rows) * (bar_h + gap) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
           f'height="{height}" font-family="sans-serif" font-size="11">',
           f'<text x="{left}" y="18" font-size="14">tilejit: % of a '
           f'device-to-device copy ({escape(report.get("device", ""))})'
           '</text>',
           f'<text x="{left}" y="34" fill="#555">bar: tilejit; tick: '
           'TileKernels on the same call; red: check failed</text>']
    for i, r in enumerate(rows):
        y = top + i * (bar_h + gap)
        w = r["of_copy"] * scale
        color = "#c62828" if r.get("check") == "FAILED" else "#1565c0"
        label = escape(f'{r["op"]} {r["shape"]}')
        out.append(f'<text x="{left - 6}" y="{y + 12}" text-anchor="end">'
                   f'{label}</text>')
        out.append(f'<rect class="bar" x="{left}" y="{y}" width="{w:.1f}" '
                   f'height="{bar_h}" fill="{color}"/>')
        out.append(f'<text x="{left + w + 4:.1f}" y="{y + 12}">'
                   f'{100 * r["of_copy"]:.0f}%</text>')
        peer = _peer_of_copy(r)
        if peer:
            x = left + peer * scale
            out.append(f'<line class="peer" x1="{x:.1f}" y1="{y - 2}" '
                       f'x2="{x:.1f}" y2="{y + bar_h + 2}" stroke="#ef6c00" '
                       'stroke-width="3"/>')
    full = left + scale
    bottom = top + len(rows) * (bar_h + gap)
    out.append(f'<line x1="{full:.1f}" y1="{top - 4}" x2="{full:.1f}" '
               f'y2="{bottom}" stroke="#333" stroke-dasharray="4 3"/>')
    out.append(f'<text x="{full:.1f}" y="{bottom + 14}" '
               'text-anchor="middle">100% (copy)</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) not in (1, 2):
        print("usage: python -m tilejit.bench REPORT.json [CHART.svg]\n"
              "  REPORT.json: tilejit_bench's rows (TILEJIT_BENCH_JSON=FILE)",
              file=sys.stderr)
        return 2
    try:
        report = load(argv[0])
    except (OSError, ValueError) as e:
        print(f"tilejit.bench: {e}", file=sys.stderr)
        return 1
    rows = [r for r in report["rows"] if "of_copy" in r]
    if rows:
        mean = math.exp(sum(math.log(max(r["of_copy"], 1e-9)) for r in rows)
                        / len(rows))
        print(f"{len(rows)} memory-bound rows on {report.get('device', '?')}: "
              f"geometric mean {100 * mean:.1f}% of copy")
        for r in sorted(rows, key=lambda r: r["of_copy"])[:10]:
            print(f"  {100 * r['of_copy']:5.1f}%  {r['op']} {r['shape']}")
    # Against TileKernels: each one's fraction of its own machine's copy.
    peers = [(r["of_copy"] / p, r) for r in rows
             if (p := _peer_of_copy(r))]
    if peers:
        mean = math.exp(sum(math.log(max(q, 1e-9)) for q, _ in peers)
                        / len(peers))
        print(f"against TileKernels (fractions of each one's copy): "
              f"geometric mean {mean:.2f}x over {len(peers)} "
              f"row{'' if len(peers) == 1 else 's'}")
        for q, r in sorted(peers, key=lambda p: p[0]):
            if q < 1:
                print(f"  {q:5.2f}x  {r['op']} {r['shape']}")
    if len(argv) == 2:
        with open(argv[1], "w") as f:
            f.write(chart(report))
        print(f"chart: {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
