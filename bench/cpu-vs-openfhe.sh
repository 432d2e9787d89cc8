#!/usr/bin/env bash
# Side by side on this CPU, in one run: Rhea's CPU backend vs OpenFHE (CKKS), N = 2^16, 20 levels
# of 50-bit primes over a 60-bit base prime, hybrid key switching with dnum = 3 — Rhea's preset
# n16_logqp1426_levels20 and OpenFHE with the same depth, scaling size, first modulus and dnum.
# Needs Python 3.10 for the openfhe wheel: the script makes .venv-openfhe on first use.
#   bench/cpu-vs-openfhe.sh [REPS]       (writes bench/out/cpu-vs-openfhe-*.json)
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${1:-5}
mkdir -p bench/out
if [ ! -x .venv-openfhe/bin/python ]; then
  PY310=$(command -v python3.10 || ls -d "$HOME"/.pyenv/versions/3.10*/bin/python3 | head -1)
  "$PY310" -m venv .venv-openfhe
  .venv-openfhe/bin/pip install -q openfhe
fi
cargo build --release -p rhea-cli
stamp=$(date -u +%Y%m%dT%H%M)
echo "== Rhea (CPU, $(nproc) threads)"
target/release/rhea bench ckks --device cpu --preset n16_logqp1426_levels20 --reps "$REPS" \
  --json "bench/out/cpu-vs-openfhe-rhea-$stamp.json"
echo "== OpenFHE $(.venv-openfhe/bin/pip show openfhe 2>/dev/null | awk '/^Version/{print $2}')"
.venv-openfhe/bin/python bench/openfhe_ckks.py 16 20 50 60 3 "$REPS" | tee "bench/out/cpu-vs-openfhe-openfhe-$stamp.json"
