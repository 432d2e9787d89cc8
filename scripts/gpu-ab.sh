#!/usr/bin/env bash
# A/B runs ON THE GPU MACHINE, in one process tree: the same `rhea` command (or any binary from
# .gpu-bin) under several environment settings, interleaved round by round so that the variants
# see the same machine state. Each variant is a space-separated list of VAR=value assignments
# ("-" for none). The library reads no A/B switch from the environment: compare two builds
# (copy the old binary into .gpu-bin and name each as the target), or kernel -D options through
# RHEA_NVRTC_DEFINES in binaries built with `--features dev-kernel-defines`.
#
#   GPU_AB_ROUNDS=2 bash scripts/gpu-ab.sh "-" "RHEA_NVRTC_DEFINES=BCONV_ACC3=0" -- \
#       rhea bench ckks --device cuda:0 --preset n16_logqp1440_levels24 --only mul_relin --reps 30
#
# Output: $OUT/ab.txt (default ./gpu-out), also on stdout.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=.gpu-bin
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
variants=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do variants+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "usage: gpu-ab.sh VARIANT... -- TARGET [ARGS...]" >&2; exit 2; }
target=$1; shift
file=$(awk -F'\t' -v t="$target" '$1 != "test" && $3 == t {print $4}' "$BIN/MANIFEST.tsv" | head -1)
[ -n "$file" ] || { echo "no $target in $BIN/MANIFEST.tsv" >&2; exit 2; }
# shellcheck source=scripts/gpu-env.sh
source scripts/gpu-env.sh >/dev/null 2>&1 || true
for round in $(seq 1 "${GPU_AB_ROUNDS:-1}"); do
  for v in "${variants[@]}"; do
    echo "==== round $round variant [$v]: $target $*" | tee -a "$OUT/ab.txt"
    if [ "$v" = "-" ]; then
      timeout "${GPU_AB_TIMEOUT:-300}" "./$BIN/$file" "$@" 2>&1 | tee -a "$OUT/ab.txt"
    else
      # shellcheck disable=SC2086
      env $v timeout "${GPU_AB_TIMEOUT:-300}" "./$BIN/$file" "$@" 2>&1 | tee -a "$OUT/ab.txt"
    fi
  done
done
