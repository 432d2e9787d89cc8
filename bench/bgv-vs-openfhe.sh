#!/usr/bin/env bash
# Rhea's CPU BGV against OpenFHE at HE-Booster's sets, interleaved round by round (Rhea, then
# OpenFHE, then the next round) so that both see the same machine state, with the `vmstat` steal
# column of each round; prints per-round Rhea/OpenFHE ratios and their medians. Makes
# .venv-openfhe on first use, as bench/cpu-vs-openfhe.sh does (bench/openfhe-env.sh).
#   bench/bgv-vs-openfhe.sh [ROUNDS] [SETS...]      (SETS: 13 14 15; default all three)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/openfhe-env.sh
ensure_openfhe_venv
PY=.venv-openfhe/bin/python
ROUNDS=${1:-5}
shift || true
SETS=${*:-13 14 15}
cargo build --release -q -p rhea-cli
stamp=$(date -u +%Y%m%dT%H%M)
mkdir -p bench/out
log=bench/out/bgv-vs-openfhe-$stamp.tsv
printf 'set\tround\tsteal\top\trhea_ms\topenfhe_ms\tratio\n' > "$log"
for s in $SETS; do
  case $s in
    13) depth=3 dnum=4 reps=30 preset=he_booster_n13_logqp218 ;;
    14) depth=7 dnum=8 reps=15 preset=he_booster_n14_logqp438 ;;
    15) depth=14 dnum=15 reps=6 preset=he_booster_n15_logqp881 ;;
    *) echo "unknown set $s (13, 14 or 15)" >&2; exit 2 ;;
  esac
  for r in $(seq 1 "$ROUNDS"); do
    steal=$(vmstat 1 2 | tail -1 | awk '{print $17}')
    "$RHEA_BIN" bench bgv --device cpu --preset "$preset" --reps "$reps" \
      --json /tmp/bgv-ab-rhea.json > /dev/null
    .venv-openfhe/bin/python bench/openfhe_bgv.py "$s" "$depth" "$dnum" "$reps" > /tmp/bgv-ab-ofhe.json
    "$PY" - "$s" "$r" "$steal" >> "$log" <<'PY'
import json, sys
s, r, steal = sys.argv[1:4]
rh = {o["op"]: o["median_ms"] for o in json.load(open("/tmp/bgv-ab-rhea.json"))["ops"]}
of = json.load(open("/tmp/bgv-ab-ofhe.json"))
for op, key in [("add", "add_ms"), ("mul_relin", "mul_relin_ms"), ("rotate1", "rotate1_ms"),
                ("mod_switch", "mod_switch_ms")]:
    print(f"{s}\t{r}\t{steal}\t{op}\t{rh[op]:.3f}\t{of[key]:.3f}\t{rh[op] / of[key]:.2f}")
PY
  done
done
"$PY" - "$log" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print(f"per-round ratios Rhea/OpenFHE (median of rounds), log {sys.argv[1]}")
for s in dict.fromkeys(r["set"] for r in rows):
    for op in dict.fromkeys(r["op"] for r in rows):
        rs = [r for r in rows if r["set"] == s and r["op"] == op]
        ratios = [float(r["ratio"]) for r in rs]
        steal = ",".join(r["steal"] for r in rs)
        print(f"  {s} {op:11s} median {statistics.median(ratios):.2f}  rounds "
              + " ".join(f"{x:.2f}" for x in ratios) + f"  (steal % {steal})")
PY
