#!/usr/bin/env bash
# Runs, ON THE GPU MACHINE (no Rust there), what scripts/gpu-build.sh put in .gpu-bin/:
# every test executable with --include-ignored (the GPU and NVRTC tests are #[ignore]d so that a
# machine without a GPU lists them as ignored; here they run, and a missing GPU fails them), then
# the GPU bench.
# Logs and JSON go to $OUT (default ./gpu-out); a summary table is printed last.
# Exits non-zero if any test binary failed.
#
#   bash scripts/gpu-run.sh                # all tests, then the bench
#   GPU_RUN_FILTER=rhea-cuda bash scripts/gpu-run.sh   # only binaries whose name contains it
#   GPU_RUN_ONLY="arith runtime" bash scripts/gpu-run.sh  # only these test targets
#   GPU_RUN_TIMEOUT=300                                  # seconds per test binary (default 600)
#   GPU_RUN_SKIP="a b"   # ignored tests not to run (default: the two that only print a report,
#                        # gpu_ckks_timings_n16 and sizes_at_n16)
#   GPU_RUN_NO_BENCH=1 bash scripts/gpu-run.sh
# Carry: here `scripts/gpu-build.sh && scripts/gpu-pack.sh`, then on the device (carry
# [".gpu-carry"]): `tar xzf .gpu-carry/bin.tgz && bash scripts/gpu-run.sh`.
#
#   GPU_RUN_PEERS=1 bash scripts/gpu-run.sh   # also: quick start, `rhea bench` at matched presets,
#                                             # the GPU NTT bench, and DESILO (wheel carried in .whl)
#   GPU_RUN_SUITES=1 (with PEERS)             # also seal-routines, he-booster and matmul
set -uo pipefail
cd "$(dirname "$0")/.."

BIN=.gpu-bin
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
LOG="$OUT/tests.log"
SUMMARY="$OUT/summary.txt"
: > "$LOG"
: > "$SUMMARY"

if [ ! -f "$BIN/MANIFEST.tsv" ]; then
  echo "no $BIN/MANIFEST.tsv: run scripts/gpu-build.sh and scripts/gpu-pack.sh first, carry .gpu-carry and untar it" >&2
  exit 2
fi

# ---- the device and its libraries -------------------------------------------------------------
{
  echo "== device"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 || true
  echo "== libraries"
} > "$OUT/device.txt"

# shellcheck source=scripts/gpu-env.sh
source scripts/gpu-env.sh
cat "$OUT/device.txt"

# ---- tests ----------------------------------------------------------------------------------------
fails=0
passes=0
# --include-ignored runs the #[ignore]d GPU and NVRTC tests; --skip leaves out the report printers.
SKIPS=()
# Tests that run the CLI (rhea-cli's cli_errors) find it here, away from cargo's build tree.
RHEA_CLI=$PWD/$BIN/$(awk -F'\t' '$1 == "bin" && $3 == "rhea" {print $4}' "$BIN/MANIFEST.tsv")
export RHEA_CLI
for t in ${GPU_RUN_SKIP-gpu_ckks_timings_n16 sizes_at_n16}; do SKIPS+=(--skip "$t"); done
while IFS=$'\t' read -r kind pkg target file; do
  [ "$kind" = test ] || continue
  case "$file" in *"${GPU_RUN_FILTER:-}"*) ;; *) continue ;; esac
  if [ -n "${GPU_RUN_ONLY:-}" ] && ! [[ " $GPU_RUN_ONLY " == *" $target "* ]]; then continue; fi
  echo "==== $file" | tee -a "$LOG"
  start=$(date +%s.%N)
  # Test binaries share one GPU; a few threads keep the host oracles fast.
  timeout "${GPU_RUN_TIMEOUT:-600}" "./$BIN/$file" --include-ignored ${SKIPS[@]+"${SKIPS[@]}"} --test-threads=4 >> "$LOG" 2>&1
  rc=$?
  secs=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)" 2>/dev/null || echo "?")
  counts=$(grep -E '^test result:' "$LOG" | tail -1 | sed 's/^test result: //')
  if [ $rc -eq 0 ]; then
    passes=$((passes + 1)); status=PASS
  else
    fails=$((fails + 1)); status="FAIL(rc=$rc)"
  fi
  printf '%-10s %-45s %6ss  %s\n' "$status" "$file" "$secs" "$counts" >> "$SUMMARY"
done < "$BIN/MANIFEST.tsv"

# ---- benches --------------------------------------------------------------------------------------
if [ -z "${GPU_RUN_NO_BENCH:-}" ]; then
  while IFS=$'\t' read -r kind pkg target file; do
    [ "$kind" = example ] || continue
    [ "$target" = gpu_bench ] || continue
    echo "==== $file (N=2^16, L=30, 61-bit, ciphertext)" | tee -a "$LOG"
    timeout 300 "./$BIN/$file" "$OUT/bench.json" 2>&1 | tee "$OUT/bench.txt"
    echo "==== $file (N=2^17, L=30, 30-bit)" | tee -a "$LOG"
    timeout 200 "./$BIN/$file" "$OUT/bench-n17.json" --degree 131072 --bits 30 --suite elementwise \
      2>&1 | tee -a "$OUT/bench.txt"
  done < "$BIN/MANIFEST.tsv"
fi

# ---- the quick start, scheme benchmarks and the DESILO peer, in the same run ------------------------
if [ -n "${GPU_RUN_PEERS:-}" ]; then
  PEERS="$OUT/peers.txt"
  : > "$PEERS"
  file_of() { awk -F'\t' -v t="$1" '$1 != "test" && $3 == t {print $4}' "$BIN/MANIFEST.tsv" | head -1; }
  QS=$(file_of quickstart); RHEA=$(file_of rhea)
  [ -n "$QS" ] && { echo "==== quickstart"; timeout 120 "./$BIN/$QS"; } 2>&1 | tee -a "$PEERS"
  if [ -n "$RHEA" ]; then
    for preset in n14_logqp400_levels7 n16_logqp1520_levels26 n16_logqp1440_levels24 n16_logqp1560_levels24; do
      echo "==== rhea bench ckks $preset" | tee -a "$PEERS"
      timeout 180 "./$BIN/$RHEA" bench ckks --device cuda:0 --preset "$preset" --reps 50 2>&1 | tee -a "$PEERS"
    done
    for preset in he_booster_n13_logqp218 he_booster_n14_logqp438 he_booster_n15_logqp881; do
      echo "==== rhea bench bgv $preset" | tee -a "$PEERS"
      timeout 120 "./$BIN/$RHEA" bench bgv --device cuda:0 --preset "$preset" --reps 50 2>&1 | tee -a "$PEERS"
    done
    echo "==== rhea bench ntt" | tee -a "$PEERS"
    timeout 180 "./$BIN/$RHEA" bench ntt --json "$OUT/ntt.json" 2>&1 | tee -a "$PEERS"
    if [ -n "${GPU_RUN_SUITES:-}" ]; then
      for suite in seal-routines he-booster matmul; do
        echo "==== rhea bench $suite" | tee -a "$PEERS"
        timeout 200 "./$BIN/$RHEA" bench "$suite" --device cuda:0 --reps 20 2>&1 | tee -a "$PEERS"
      done
    fi
  fi
  if ls .whl/desilofhe*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --target /tmp/desilo-site .whl/desilofhe*.whl \
      && for mode in "" n16; do
        echo "==== DESILO gpu $mode" | tee -a "$PEERS"
        PYTHONPATH=/tmp/desilo-site timeout 240 python3 bench/desilo_ckks.py gpu $mode 2>&1 | tail -3 | tee -a "$PEERS"
      done
  fi
fi

echo
echo "================ summary ================"
grep -E 'panicked|FAILED' "$LOG" | head -20
cat "$SUMMARY"
[ -f "$OUT/bench.txt" ] && grep -E 'device:|memcpy|elementwise' "$OUT/bench.txt"
echo "test binaries: $passes passed, $fails failed"
[ $fails -eq 0 ]
