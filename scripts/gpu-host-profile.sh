#!/usr/bin/env bash
# Runs ON THE GPU MACHINE: where the HOST's time goes in CKKS operations (launch overhead,
# encoding's FFT, allocation), sampled by the perf that scripts/gpu-perf-pack.sh carried in
# .gpu-carry/perf.tgz. Each operation first runs once unprofiled (the kernels compile and land
# in the disk cache), then under `perf record` (user and kernel samples); a flat profile by
# library and symbol goes under $OUT (default ./gpu-out) as perf-<op>.txt.
#   bash scripts/gpu-host-profile.sh [PRESET] [OPS] [REPS]
#   e.g. bash scripts/gpu-host-profile.sh n13_logqp200_levels2 "encode encrypt mul_relin" 3000
set -uo pipefail
cd "$(dirname "$0")/.."
PRESET=${1:-n13_logqp200_levels2}
OPS=${2:-encode encrypt mul_relin add}
REPS=${3:-3000}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
# shellcheck source=scripts/gpu-env.sh
source scripts/gpu-env.sh >/dev/null 2>&1 || true
PF=$(mktemp -d)
tar xzf .gpu-carry/perf.tgz -C "$PF" || { echo "no .gpu-carry/perf.tgz (scripts/gpu-perf-pack.sh)"; exit 2; }
PERF="$PF/perf/perf"
export LD_LIBRARY_PATH="$PF/perf/lib:${LD_LIBRARY_PATH:-}"
RHEA=.gpu-bin/$(awk -F'\t' '$1 == "bin" && $3 == "rhea" {print $4}' .gpu-bin/MANIFEST.tsv | head -1)
for op in $OPS; do
  args=(bench ckks --device cuda:0 --preset "$PRESET" --only "$op")
  "$RHEA" "${args[@]}" --reps 3 > /dev/null 2>&1
  "$PERF" record -F 4999 -o "$PF/$op.data" "$RHEA" "${args[@]}" --reps "$REPS" \
    > "$OUT/run-$op.txt" 2> "$OUT/perf-$op.err"
  "$PERF" report -i "$PF/$op.data" --no-children --sort dso,sym --stdio 2>/dev/null \
    | grep -v '^#' | grep -v '^$' | head -60 > "$OUT/perf-$op.txt"
  "$PERF" report -i "$PF/$op.data" --no-children --sort dso --stdio 2>/dev/null \
    | grep -v '^#' | grep -v '^$' | head -12 > "$OUT/perf-$op-dso.txt"
  echo "== $op ($PRESET, $REPS reps: latency and stream phases both sampled)"
  tail -1 "$OUT/run-$op.txt"
  cat "$OUT/perf-$op-dso.txt"
  head -25 "$OUT/perf-$op.txt"
done
rm -rf "$PF"
