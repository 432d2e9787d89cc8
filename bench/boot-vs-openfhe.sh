#!/usr/bin/env bash
# CKKS bootstrapping side by side on this CPU: Rhea (`rhea bench boot --device cpu --preset
# boot_test_n{12,14}_insecure`) vs OpenFHE (bench/openfhe_boot.py) at the same N, full slots
# (N/2, complex) and the same number of levels left after bootstrapping (2 at N = 2^12, 4 at
# N = 2^14; OpenFHE's count is measured as multiplications the refreshed ciphertext still
# takes, see bench/openfhe_boot.py). Both are INSECURE at these N (tests / CPU comparisons).
#
#   bench/boot-vs-openfhe.sh [REPS]        (writes bench/out/boot-{rhea,openfhe}-n*-*.json)
#
# Env: LOGNS (default "12 14"; never 16 on a 2-core box), RUNS (runs of each side, interleaved,
# the fastest of each kept; default 1, or 2 when the 1-minute load average is at least half the
# cores), OPENFHE_PY (default .venv-openfhe/bin/python, made as for bench/cpu-vs-openfhe.sh if
# missing), OPENFHE_ARGS (extra arguments for openfhe_boot.py, e.g. "--scaling FLEXIBLEAUTO").
# OpenFHE runs with OMP_WAIT_POLICY=passive unless set (see openfhe_boot.py).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/openfhe-env.sh
REPS=${1:-3}
LOGNS=${LOGNS:-12 14}
OPENFHE_PY=${OPENFHE_PY:-$OPENFHE_VENV/bin/python}
OPENFHE_ARGS=${OPENFHE_ARGS:-}
if [ "$OPENFHE_PY" = "$OPENFHE_VENV/bin/python" ]; then
  ensure_openfhe_venv
fi
load1() { cut -d' ' -f1 /proc/loadavg; }
if [ -z "${RUNS:-}" ]; then
  RUNS=1
  if awk -v l="$(load1)" -v c="$(nproc)" 'BEGIN { exit !(l >= c / 2) }'; then
    RUNS=2
  fi
fi
mkdir -p bench/out
stamp=$(date -u +%Y%m%dT%H%M%S)
echo "== $(date -u) on $(nproc) cores; uptime before: $(uptime)"
echo "== $RUNS run(s) of each side, $REPS timed bootstraps each (median), fastest run kept"
cargo build --release -p rhea-cli
ofhe_version=$("$OPENFHE_PY" -c 'import openfhe; print(getattr(openfhe, "__version__", "?"))')
rows=()
for logn in $LOGNS; do
  preset=boot_test_n${logn}_insecure
  for run in $(seq 1 "$RUNS"); do
    rj=bench/out/boot-rhea-n$logn-$stamp-run$run.json
    oj=bench/out/boot-openfhe-n$logn-$stamp-run$run.json
    echo "== Rhea, $preset, run $run (load $(load1))"
    cargo run --release -q -p rhea-cli -- bench boot --device cpu --preset "$preset" \
      --reps "$REPS" --json "$rj"
    echo "== OpenFHE $ofhe_version, N = 2^$logn, run $run (load $(load1))"
    # shellcheck disable=SC2086 # OPENFHE_ARGS is a list of words on purpose
    if ! "$OPENFHE_PY" bench/openfhe_boot.py "$logn" --reps "$REPS" --json "$oj" $OPENFHE_ARGS \
      | grep -v '^{'; then
      echo "OpenFHE failed at N = 2^$logn (see above)"
      rm -f "$oj"
    fi
    rows+=("$logn $rj $oj")
  done
done
echo "== uptime after: $(uptime)"
# The table: per N, the fastest Rhea run and the fastest OpenFHE run.
"$OPENFHE_PY" - "${rows[@]}" <<'EOF'
import json, os, sys
best = {}
for row in sys.argv[1:]:
    logn, rj, oj = row.split()
    for side, path in (("rhea", rj), ("openfhe", oj)):
        if os.path.exists(path):
            r = json.load(open(path))
            k = (int(logn), side)
            if k not in best or r["latency_ms"] < best[k][0]["latency_ms"]:
                best[k] = (r, path)
for logn in sorted({k[0] for k in best}):
    r, rp = best.get((logn, "rhea"), (None, None))
    o, op = best.get((logn, "openfhe"), (None, None))
    print(f"\nN = 2^{logn}, full slots ({(1 << logn) // 2}), INSECURE parameters on both sides")
    print(f"  Rhea:    {rp}")
    print(f"  OpenFHE: {op}")
    def f(x, fmt):
        return "-" if x is None else format(x, fmt)
    def g(d, k):
        return None if d is None else d.get(k)
    lines = [("latency_ms (median)", g(r, "latency_ms"), g(o, "latency_ms"), ".1f")]
    for k in ("precision_bits_min", "precision_bits_mean", "precision_bits_min_real",
              "precision_bits_mean_real"):
        lines.append((k, g(r, k), g(o, k), ".1f"))
    lines += [("levels_left", g(r, "levels_left"), g(o, "levels_left"), "d"),
              ("key_bytes", g(r, "key_bytes"), g(o, "key_bytes"), ",d"),
              ("keygen_s", g(r, "keygen_s"), g(o, "keygen_s"), ".2f")]
    print(f"  {'':<26} {'Rhea':>16} {'OpenFHE':>16} {'Rhea/OpenFHE':>13}")
    for name, a, b, fmt in lines:
        ratio = f"{a / b:.3f}" if name.startswith(("latency", "key_bytes", "keygen")) \
            and a is not None and b else ""
        print(f"  {name:<26} {f(a, fmt):>16} {f(b, fmt):>16} {ratio:>13}")
    if r:
        print(f"  Rhea: Δ = 2^{r.get('output_scale_bits', 0):.0f}, depth {r.get('depth')}, "
              f"log QP {r.get('log_qp', 0):.0f}, {r.get('keyswitch_keys')} key-switching keys")
    if o:
        p = o["params"]
        print(f"  OpenFHE: Δ = 2^{p['scaling_mod_bits']}, {p['scaling_technique']}, "
              f"{p['ckks_data_type']}, {p['secret_key_dist']}, level budget "
              f"{p['level_budget']}, depth {p['multiplicative_depth']} "
              f"(bootstrap {p['bootstrap_depth']} + levelsAvailableAfterBootstrap "
              f"{p['levels_available_after_bootstrap']}), input at level "
              f"{p['input_level']}, threads {o.get('threads')}, "
              f"OMP_WAIT_POLICY {o.get('omp_wait_policy')}")
EOF
