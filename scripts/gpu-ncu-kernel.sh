#!/usr/bin/env bash
# Runs ON THE GPU MACHINE: Nsight Compute metrics of one launch of the kernels matching a regex,
# under several environment settings (A/B of kernel variants through RHEA_NVRTC_DEFINES, which
# needs binaries built with `--features dev-kernel-defines`), for any binary of .gpu-bin. Prints one line per variant and kernel: duration, occupancy, issue,
# pipes, shared-memory bank conflicts and the top stall reasons. CSV under $OUT.
#   bash scripts/gpu-ncu-kernel.sh KERNEL_REGEX SKIP VARIANT... -- TARGET [ARGS...]
#   e.g. bash scripts/gpu-ncu-kernel.sh 'ntt_fwd_cols_15' 3 - "RHEA_NVRTC_DEFINES=NTT_TW_SMEM=0" \
#          -- ntt_bench --quick --default-split
set -uo pipefail
cd "$(dirname "$0")/.."
KRE=${1:?usage}; SKIP=${2:?usage}; shift 2
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
variants=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do variants+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
target=$1; shift
file=$(awk -F'\t' -v t="$target" '$1 != "test" && $3 == t {print $4}' .gpu-bin/MANIFEST.tsv | head -1)
# shellcheck source=scripts/gpu-env.sh
source scripts/gpu-env.sh >/dev/null 2>&1 || true
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { echo "no ncu on this machine"; exit 2; }
M="gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,"
M+="sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,"
M+="launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,"
M+="l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,"
M+="l1tex__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex.sum,dram__bytes.sum,"
M+="regex:sm__pipe_(alu|fmaheavy|fp64|shared|lsu)_cycles_active\.avg\.pct_of_peak_sustained_active,"
M+="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
i=0
for v in "${variants[@]}"; do
  i=$((i + 1))
  csv="$OUT/ncu-$i.csv"
  if [ "$v" = "-" ]; then envs=(); else read -r -a envs <<< "$v"; fi
  env "${envs[@]}" timeout 300 "$NCU" -k "regex:$KRE" --launch-skip "$SKIP" --launch-count 1 \
    --metrics "$M" --csv --print-units base "./.gpu-bin/$file" "$@" > "$csv" 2> "$OUT/ncu-$i.err"
  python3 - "$csv" "$v" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows:
    sys.exit(f"[{sys.argv[2]}] no rows")
h = rows[0]; ki, mi, vi = h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value")
m = {r[mi]: r[vi] for r in rows[1:]}
f = lambda n: float(m.get(n, "nan").replace(",", "") or "nan")
stalls = sorted(((n.split("stalled_")[1].split("_per_issue")[0], f(n)) for n in m if "stalled_" in n),
                key=lambda x: -x[1])[:6]
pipes = " ".join(f"{n.split('pipe_')[1].split('_cycles')[0]}={f(n):.0f}" for n in m if n.startswith("sm__pipe_"))
print(f"[{sys.argv[2]}] {rows[1][ki][:30]} t={f('gpu__time_duration.sum')/1e3:.1f}us "
      f"warps={f('sm__warps_active.avg.pct_of_peak_sustained_active'):.1f}% "
      f"issue={f('smsp__issue_active.avg.pct_of_peak_sustained_active'):.1f}% "
      f"regs={f('launch__registers_per_thread'):.0f} "
      f"blk(smem,regs)={f('launch__occupancy_limit_shared_mem'):.0f},{f('launch__occupancy_limit_registers'):.0f} "
      f"smem wavefronts={f('l1tex__data_pipe_lsu_wavefronts_mem_shared.sum'):.3g} "
      f"conflicts={f('l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum'):.3g} "
      f"l1hit={f('l1tex__t_sector_hit_rate.pct'):.0f}% l2sect={f('lts__t_sectors_srcunit_tex.sum'):.3g} "
      f"dramMB={f('dram__bytes.sum')/1e6:.1f}")
print("    pipes%: " + pipes + " | stalls: " + " ".join(f"{a}={b:.2f}" for a, b in stalls))
PY
done
