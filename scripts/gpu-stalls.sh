#!/usr/bin/env bash
# Runs ON THE GPU MACHINE: why kernels stall. Nsight Compute over one CKKS operation (or the NTT
# bench's profile mode), per launch: duration, issue-slot and DRAM utilisation, occupancy and the
# stall breakdown (warps stalled per issued instruction, by reason). Needs .gpu-bin from
# scripts/gpu-build.sh. CSV and a short table under $OUT (default ./gpu-out).
#   bash scripts/gpu-stalls.sh [OP|ntt] [KERNEL_REGEX] [PRESET]
#   e.g. bash scripts/gpu-stalls.sh mul_relin 'bconv|ntt_' n16_logqp1560_levels24
set -uo pipefail
cd "$(dirname "$0")/.."
OP=${1:-mul_relin}
KRE=${2:-.}
PRESET=${3:-n16_logqp1560_levels24}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
# shellcheck source=scripts/gpu-env.sh
source scripts/gpu-env.sh
bin() { echo ".gpu-bin/$(awk -F'\t' -v t="$1" '$3 == t {print $4}' .gpu-bin/MANIFEST.tsv | head -1)"; }
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { echo "no ncu on this machine"; exit 2; }
if [ "$OP" = ntt ]; then
  CMD=("$(bin ntt_bench)" --profile)
else
  CMD=("$(bin rhea)" bench ckks --device cuda:0 --preset "$PRESET" --only "$OP" --reps 1)
fi
METRICS="gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,"
METRICS+="dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,"
METRICS+="launch__registers_per_thread,launch__grid_size,launch__block_size,"
METRICS+="launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,dram__bytes.sum,"
METRICS+="lts__t_sectors.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_active,"
METRICS+="regex:sm__pipe_(alu|fma|fmaheavy|fp64|shared|lsu|uniform)_cycles_active\.avg\.pct_of_peak_sustained_active,"
METRICS+="regex:sm__inst_executed_pipe_(alu|fma|fmaheavy|lsu|uniform)\.avg\.pct_of_peak_sustained_active,"
METRICS+="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
timeout 400 "$NCU" -k "regex:$KRE" --metrics "$METRICS" --csv --print-units base "${CMD[@]}" \
  > "$OUT/stalls-$OP.csv" 2> "$OUT/stalls-$OP.err"
python3 - "$OUT/stalls-$OP.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows:
    sys.exit("no rows")
h = rows[0]; ki, mi, vi, ii = h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value"), h.index("ID")
per = collections.OrderedDict()
for r in rows[1:]:
    per.setdefault((r[ii], r[ki]), {})[r[mi]] = r[vi]
agg = collections.OrderedDict()
for (_, k), m in per.items():
    agg.setdefault(k.split("(")[0], []).append(m)
for k, ms in agg.items():
    def avg(name):
        v = [float(m[name].replace(",", "")) for m in ms if name in m and m[name] not in ("", "n/a")]
        return sum(v) / len(v) if v else float("nan")
    stalls = {n.split("stalled_")[1].split("_per_issue")[0]: avg(n) for n in ms[0] if "stalled_" in n}
    top = sorted(stalls.items(), key=lambda x: -x[1])[:6]
    pipes = {n.replace("sm__", "").replace(".avg.pct_of_peak_sustained_active", ""): avg(n)
             for n in ms[0] if n.startswith("sm__pipe_") or n.startswith("sm__inst_executed_pipe_")}
    print(f"{k[:40]:40s} n={len(ms):3d} t={avg('gpu__time_duration.sum')/1e3:8.1f}us "
          f"issue={avg('smsp__issue_active.avg.pct_of_peak_sustained_active'):5.1f}% "
          f"dram={avg('dram__throughput.avg.pct_of_peak_sustained_elapsed'):5.1f}% "
          f"warps={avg('sm__warps_active.avg.pct_of_peak_sustained_active'):5.1f}% "
          f"regs={avg('launch__registers_per_thread'):.0f} "
          f"blk/SM(smem,regs)={avg('launch__occupancy_limit_shared_mem'):.0f},{avg('launch__occupancy_limit_registers'):.0f} "
          f"MB={avg('dram__bytes.sum')/1e6:.1f} "
          f"l2={avg('lts__t_sectors.avg.pct_of_peak_sustained_elapsed'):5.1f}% "
          f"l1={avg('l1tex__throughput.avg.pct_of_peak_sustained_active'):5.1f}% | "
          + " ".join(f"{a}={b:.2f}" for a, b in top))
    print("    pipes % of peak: " + " ".join(f"{a}={b:.0f}" for a, b in sorted(pipes.items())))
PY
