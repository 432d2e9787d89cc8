#!/usr/bin/env bash
# Side by side on this CPU, in one run: Rhea's linear-algebra and polynomial machinery
# (`rhea bench linalg|poly`) vs OpenFHE's (bench/openfhe_machinery.py) at N = 2^15, 7 levels of
# 40-bit primes over a 60-bit base prime, dnum = 8: Rhea's preset n15_logqp400_levels7 and
# OpenFHE with the same ring, depth, scaling size, first modulus and dnum (FLEXIBLEAUTO).
# The OpenFHE virtual environment is made on first use as for bench/cpu-vs-openfhe.sh.
#   bench/machinery-vs-openfhe.sh [REPS]     (writes bench/out/machinery-*.json)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/openfhe-env.sh
REPS=${1:-3}
mkdir -p bench/out
ensure_openfhe_venv
cargo build --release -p rhea-cli
stamp=$(date -u +%Y%m%dT%H%M)
for suite in poly linalg; do
  echo "== Rhea $suite (CPU, $(nproc) threads)"
  "$RHEA_BIN" bench "$suite" --device cpu --preset n15_logqp400_levels7 --reps "$REPS" \
    --json "bench/out/machinery-$suite-rhea-$stamp.json"
done
echo "== OpenFHE $(.venv-openfhe/bin/pip show openfhe 2>/dev/null | awk '/^Version/{print $2}')"
.venv-openfhe/bin/python bench/openfhe_machinery.py 15 7 40 60 8 "$REPS" | tee "bench/out/machinery-openfhe-$stamp.json"
# OpenFHE's degree-63 Chebyshev evaluation needs one level more than Rhea's (depth 7 fails with
# "multiplicative depth [7] is insufficient"): its polynomial cases again at depth 8.
echo "== OpenFHE at depth 8 (its sigmoid63 needs 8 levels)"
.venv-openfhe/bin/python bench/openfhe_machinery.py 15 8 40 60 9 "$REPS" --poly-only | tee "bench/out/machinery-openfhe-depth8-$stamp.json"
