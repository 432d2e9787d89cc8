#!/usr/bin/env bash
# Side by side on this CPU, in one run: Rhea's CPU backend vs OpenFHE. CKKS: N = 2^16, 20 levels
# of 50-bit primes over a 60-bit base prime, hybrid key switching with dnum = 3 — Rhea's preset
# n16_logqp1426_levels20 and OpenFHE with the same depth, scaling size, first modulus and dnum.
# Needs a Python (3.10 preferred, 3.11/3.12 tried; PYTHON=... to choose) with network access for
# `pip install openfhe` on first use: the script makes .venv-openfhe (bench/openfhe-env.sh picks
# a Python that actually runs, and stops with a clear message when something is missing).
#   bench/cpu-vs-openfhe.sh [REPS]       (writes bench/out/cpu-vs-openfhe-*.json)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/openfhe-env.sh
REPS=${1:-5}
mkdir -p bench/out
ensure_openfhe_venv
cargo build --release -p rhea-cli
stamp=$(date -u +%Y%m%dT%H%M)
echo "== Rhea (CPU, $(nproc) threads)"
"$RHEA_BIN" bench ckks --device cpu --preset n16_logqp1426_levels20 --reps "$REPS" \
  --json "bench/out/cpu-vs-openfhe-rhea-$stamp.json"
echo "== OpenFHE $(.venv-openfhe/bin/pip show openfhe 2>/dev/null | awk '/^Version/{print $2}')"
.venv-openfhe/bin/python bench/openfhe_ckks.py 16 20 50 60 3 "$REPS" | tee "bench/out/cpu-vs-openfhe-openfhe-$stamp.json"

# BGV at HE-Booster's three sets (log N / log QP = 13/218, 14/438, 15/881; t = 65537): Rhea's
# presets and OpenFHE at the same ring, depth and dnum (OpenFHE picks its own prime sizes and
# prints its log2 Q).
for set in "13 3 4 he_booster_n13_logqp218" "14 7 8 he_booster_n14_logqp438" "15 14 15 he_booster_n15_logqp881"; do
  read -r logn depth dnum preset <<<"$set"
  echo "== BGV $preset: Rhea (CPU)"
  "$RHEA_BIN" bench bgv --device cpu --preset "$preset" --reps "$REPS" \
    --json "bench/out/cpu-vs-openfhe-bgv-$preset-rhea-$stamp.json"
  echo "== BGV logN=$logn depth=$depth dnum=$dnum: OpenFHE"
  .venv-openfhe/bin/python bench/openfhe_bgv.py "$logn" "$depth" "$dnum" "$REPS" | tee "bench/out/cpu-vs-openfhe-bgv-$preset-openfhe-$stamp.json"
done
