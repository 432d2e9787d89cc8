#!/usr/bin/env bash
# Runs ON THE GPU MACHINE: where the time of CKKS operations goes, kernel by kernel.
# Uses the `rhea` binary that scripts/gpu-build.sh put in .gpu-bin/ and Nsight Systems when the
# machine has it (per-kernel totals and the full GPU trace as CSV), else Nsight Compute (one
# duration per launch). Output under $OUT (default ./gpu-out):
#   prof-<op>-kern.csv    kernel name, total time, instances (nsys) — divide by the op count
#   prof-<op>-trace.csv   every launch with start and duration (nsys): gaps = host-bound time
#   ncu-<op>.csv          the fallback: one row per launch
#
#   bash scripts/gpu-profile.sh [PRESET] [OPS] [REPS]
#   e.g. bash scripts/gpu-profile.sh n16_logqp1560_levels24 "mul_relin rescale rotate1" 20
set -uo pipefail
cd "$(dirname "$0")/.."
PRESET=${1:-n16_logqp1560_levels24}
OPS=${2:-mul_relin rescale rotate1}
REPS=${3:-20}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
# shellcheck source=scripts/gpu-env.sh
source scripts/gpu-env.sh
RHEA=.gpu-bin/$(awk -F'\t' '$1 == "bin" && $3 == "rhea" {print $4}' .gpu-bin/MANIFEST.tsv | head -1)
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys \
  /usr/local/cuda/nsight-systems*/bin/nsys 2>/dev/null | head -1)
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
echo "nsys: ${NSYS:-none}  ncu: ${NCU:-none}"
for op in $OPS; do
  if [ -n "$NSYS" ]; then
    "$NSYS" profile -t cuda -o "/tmp/prof-$op" --force-overwrite true \
      "$RHEA" bench ckks --device cuda:0 --preset "$PRESET" --only "$op" --reps "$REPS" >/dev/null 2>&1
    "$NSYS" stats -q -r cuda_gpu_kern_sum --format csv -o "/tmp/prof-$op" "/tmp/prof-$op.nsys-rep" >/dev/null 2>&1
    "$NSYS" stats -q -r cuda_gpu_trace --format csv -o "/tmp/prof-$op" "/tmp/prof-$op.nsys-rep" >/dev/null 2>&1
    cp /tmp/prof-"$op"_cuda_gpu_kern_sum.csv "$OUT/prof-$op-kern.csv" 2>/dev/null
    # The trace of the last 4 calls only (keeps the file small).
    tail -n 400 /tmp/prof-"$op"_cuda_gpu_trace.csv > "$OUT/prof-$op-trace.csv" 2>/dev/null
    echo "== $op (nsys, $REPS reps x 2 + 2 warm-ups)"
    head -25 "$OUT/prof-$op-kern.csv"
  elif [ -n "$NCU" ]; then
    timeout 300 "$NCU" --metrics gpu__time_duration.sum --csv --print-units base \
      "$RHEA" bench ckks --device cuda:0 --preset "$PRESET" --only "$op" --reps 1 \
      > "$OUT/ncu-$op.csv" 2>/dev/null
    echo "== $op (ncu): $(wc -l < "$OUT/ncu-$op.csv") rows"
  fi
done
