#!/usr/bin/env bash
# Side by side on this CPU, from Python: Rhea's package vs OpenFHE's Python bindings (1.6.1).
# CKKS at N = 2^16, 20 levels of 50-bit primes over a 60-bit base prime, dnum 3 (Rhea's preset
# n16_logqp1426_levels20 and OpenFHE with the same depth, scaling size, first modulus and dnum, as
# bench/cpu-vs-openfhe.sh): encrypt from a numpy vector, add, mul+relin, rotate by 1, decrypt, the
# median of REPS single calls each. Bootstrapping: Rhea's boot_test_n12_insecure against
# bench/openfhe_boot.py at N = 2^12 (both INSECURE test sizes; see that script for its settings).
#   bench/py-vs-openfhe.sh [REPS]        (writes bench/out/py-vs-openfhe-*.json)
# RHEA_PY: a Python with the `rhea` package (default .venv-py/bin/python, made with
# `python3 -m venv .venv-py && .venv-py/bin/pip install ./crates/rhea-py`); OPENFHE_PY: one with
# openfhe (default: bench/openfhe-env.sh's .venv-openfhe, made on first use).
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${1:-5}
RHEA_PY=${RHEA_PY:-.venv-py/bin/python}
if [ -z "${OPENFHE_PY:-}" ]; then
  . bench/openfhe-env.sh
  ensure_openfhe_venv
  OPENFHE_PY=$OPENFHE_VENV/bin/python
fi
if [ ! -x "$RHEA_PY" ]; then
  python3 -m venv .venv-py
  .venv-py/bin/pip install --quiet ./crates/rhea-py numpy
fi
mkdir -p bench/out
stamp=$(date -u +%Y%m%dT%H%M%S)
r=bench/out/py-vs-openfhe-rhea-$stamp.json
o=bench/out/py-vs-openfhe-openfhe-$stamp.json
ob=bench/out/py-vs-openfhe-openfhe-boot-$stamp.json
echo "== $(date -u) on $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== Rhea $("$RHEA_PY" -c 'import rhea; print(rhea.__version__)') from Python (CPU)"
"$RHEA_PY" bench/py_rhea_ops.py --device cpu --preset n16_logqp1426_levels20 --reps "$REPS" \
  --mode median --boot-preset boot_test_n12_insecure --json "$r" >/dev/null
echo "== OpenFHE $("$OPENFHE_PY" -c 'import openfhe; print(getattr(openfhe, "__version__", "?"))') from Python (CPU)"
"$OPENFHE_PY" bench/py_openfhe_ops.py 16 20 50 60 3 "$REPS" >"$o"
"$OPENFHE_PY" bench/openfhe_boot.py 12 --reps 3 --json "$ob" >/dev/null 2>&1
python3 - "$r" "$o" "$ob" <<'PY'
import json, sys
r, o, ob = (json.load(open(p)) for p in sys.argv[1:4])
o["bootstrap_ms"] = ob.get("latency_ms")
o["boot_precision_bits"] = ob.get("precision_bits_min")
print(f"{'op (ms, from Python)':<24} {'Rhea':>10} {'OpenFHE':>10} {'OpenFHE/Rhea':>13}")
for op in ["encrypt", "add", "mul_relin", "rotate1", "decrypt", "bootstrap"]:
    a, b = r.get(op + "_ms"), o.get(op + "_ms")
    print(f"{op:<24} {a:>10.3f} {b:>10.3f} {b / a:>12.2f}x")
for k in ["slots", "mul_precision_bits", "boot_precision_bits"]:
    print(f"{k:<24} {r.get(k)!s:>10} {o.get(k)!s:>10}")
PY
echo "== JSON: $r $o $ob"
