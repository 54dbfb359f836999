#!/usr/bin/env bash
# profile.sh - On the GPU machine: where one op's kernels spend their time,
# a line each, from ncu's counters over one launch (`tilejit bench OP
# ARGS... --iters 1`, the cache off so that every variant compiles):
#
#   bash tools/gpu/profile.sh engram_gate_bwd --set grad_w=global
#   engram_gate_bwd: 1931.3 us | dram 44.1% (2.28 GB read, 1.82 GB written)
#     | L2 33.8% (9.87 GB), L1 hit 18.1% | sm 41.4% | warps 25.0% of peak
#     | 128 regs, local 0.05 GB
#
# (the H200, session 55: the backward with grad_w=global; ncu's own run
# flushes the caches between passes, so its time reads above the bench's)
#
# dram/L2/sm: throughput in % of peak over the kernel's time (the busiest of
# each unit's pipes); L2's bytes are every request that reached it (reads,
# writes, atomics). KERNEL=regex picks the kernels (default: the op's name);
# LAUNCHES=n profiles n of them (default 1). The CPU reference runs too
# (tilejit bench checks), so the biggest shapes take it a while.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/gpu/unpack.sh
op=${1:?usage: profile.sh OP [tilejit bench arguments]}
shift
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,dram__bytes_read.sum,dram__bytes_write.sum
metrics+=,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum
metrics+=,l1tex__t_sector_hit_rate.pct
metrics+=,sm__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,launch__registers_per_thread,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum
metrics+=,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum
TILEJIT_CACHE=0 timeout "${PROFILE_S:-240}" ncu --csv --metrics "$metrics" \
  -k "regex:${KERNEL:-$op}" -c "${LAUNCHES:-1}" \
  bin/tilejit bench "$op" "$@" --iters 1 >"$out/profile-$op.csv" 2>&1
rc=$?
python3 - "$out/profile-$op.csv" <<'EOF'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows or rows[0][0] != "ID":
    print("profile: ncu printed no metrics; its output:")
    print(open(sys.argv[1]).read()[-2000:])
    sys.exit(1)
head = rows[0]
col = {n: head.index(n) for n in ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value")}
kernels = {}
for r in rows[1:]:
    k = kernels.setdefault(r[col["ID"]], {"name": r[col["Kernel Name"]]})
    value = float(r[col["Metric Value"]].replace(",", "") or 0)
    unit = r[col["Metric Unit"]]
    scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "ns": 1e-3,
             "us": 1, "ms": 1e3, "nsecond": 1e-3, "usecond": 1,
             "msecond": 1e3}.get(unit, 1)
    k[r[col["Metric Name"]]] = value * scale
for k in kernels.values():
    g = lambda m: k.get(m, float("nan"))
    gb = lambda m: g(m) / 1e9
    print(f"{k['name'].split('(')[0]}: {g('gpu__time_duration.sum'):.1f} us"
          f" | dram {g('dram__throughput.avg.pct_of_peak_sustained_elapsed'):.1f}%"
          f" ({gb('dram__bytes_read.sum'):.2f} GB read, {gb('dram__bytes_write.sum'):.2f} GB written)"
          f" | L2 {g('lts__t_sectors.avg.pct_of_peak_sustained_elapsed'):.1f}% ({gb('lts__t_bytes.sum'):.2f} GB)"
          f", L1 hit {g('l1tex__t_sector_hit_rate.pct'):.1f}%"
          f" | sm {g('sm__throughput.avg.pct_of_peak_sustained_elapsed'):.1f}%"
          f" | warps {g('sm__warps_active.avg.pct_of_peak_sustained_active'):.1f}% of peak"
          f" | {g('launch__registers_per_thread'):.0f} regs, local"
          f" {gb('l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum') + gb('l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum'):.2f} GB")
EOF
[ "$rc" = 0 ] || echo "profile: ncu exited $rc (log: $out/profile-$op.csv)"
exit "$rc"
