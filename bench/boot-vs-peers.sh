#!/usr/bin/env bash
# CKKS bootstrapping side by side ON THE GPU MACHINE, one card, one run: Rhea
# (`rhea bench boot --preset boot_n16_levels13`: N = 2^16, 2^15 complex slots, 13 levels of
# Δ = 2^40 left, 128-bit), DESILO (its own bootstrappable N = 2^16 set, ../shared/peers/
# desilo_bench.py --boot) and Cheddar (bootparam_40: N = 2^16, 2^15 slots, 13 levels left, 32-bit
# words; its PeerBoot benchmark, the bootstrapping half of `build_and_run.sh quick`).
#
#   bash bench/boot-vs-peers.sh [rhea] [desilo] [cheddar]   # default: all three, in this order
#
# What must travel with the working tree (the GPU machine has no Rust and no network):
#   - the rhea binary: here `GPU_BUILD_PACKAGES="-p rhea-cli" scripts/gpu-build.sh &&
#     scripts/gpu-pack.sh 'bin__rhea-cli__rhea$'`, carry ".gpu-carry", and on the device
#     `tar xzf .gpu-carry/bin.tgz` first (or set RHEA_BIN to a binary that is there);
#   - the peers: `mkdir -p .peers && cp -r ../shared/peers/cheddar ../shared/peers/desilo_bench.py
#     .peers/` (add `.peers/` to .git/info/exclude), carry ".peers"; a `shared/peers/` folder of
#     the checkout is found too;
#   - DESILO's wheel in .whl/ (see ../shared/peers/README.md), carry ".whl".
# Example device command (carry [".gpu-carry", ".peers", ".whl"]):
#   tar xzf .gpu-carry/bin.tgz && bash bench/boot-vs-peers.sh
#
# Time: Rhea's key generation and ~10 bootstraps, DESILO's engine and bootstrap keys (~1-2 min),
# Cheddar's build (~60 s) and host-side bootstrapping preparation (~125 s): about 5-7 minutes in
# all; split the parts over several calls if a 10-minute command is too tight.
# Env: OUT (default ./boot-out; at most 8 files are written there, device.txt
# from scripts/gpu-env.sh included), REPS (Rhea's timed
# bootstraps, default 10), RHEA_PRESET (default boot_n16_levels13), RHEA_BIN,
# CHEDDAR_MODE=quick (the whole `quick` mode: bootstrapping and ops, ~2 minutes more),
# JOBS (Cheddar's build, default nproc).
set -uo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-$PWD/boot-out}
mkdir -p "$OUT"
PARTS=("$@")
[ ${#PARTS[@]} -eq 0 ] && PARTS=(rhea desilo cheddar)
REPS=${REPS:-10}
PRESET=${RHEA_PRESET:-boot_n16_levels13}
SCRATCH=/tmp/boot-vs-peers
mkdir -p "$SCRATCH"
SUMMARY="$OUT/boot-vs-peers.txt"
: > "$SUMMARY"
T0=$(date +%s)
say() { echo "===== [$(( $(date +%s) - T0 ))s] $*" | tee -a "$SUMMARY"; }
want() { [[ " ${PARTS[*]} " == *" $1 "* ]]; }

# The first of these that exists: the checkout's shared/, the carried .peers/, ../shared.
peer_path() {
  local p
  for p in "shared/peers/$1" ".peers/$1" ".peers/$(basename "$1")" "../shared/peers/$1"; do
    [ -e "$p" ] && { echo "$p"; return 0; }
  done
  return 1
}

{
  echo "== $(date -u)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 || true
} | tee -a "$SUMMARY"

# ---- Rhea ---------------------------------------------------------------------------------------
if want rhea; then
  say "rhea bench boot --device cuda:0 --preset $PRESET --reps $REPS"
  # shellcheck source=scripts/gpu-env.sh
  [ -f scripts/gpu-env.sh ] && source scripts/gpu-env.sh
  RHEA=${RHEA_BIN:-}
  if [ -z "$RHEA" ] && [ -f .gpu-bin/MANIFEST.tsv ]; then
    f=$(awk -F'\t' '$1 == "bin" && $3 == "rhea" {print $4}' .gpu-bin/MANIFEST.tsv | head -1)
    [ -n "$f" ] && RHEA=.gpu-bin/$f
  fi
  [ -z "$RHEA" ] && RHEA=${CARGO_TARGET_DIR:-target}/release/rhea
  if [ -x "$RHEA" ]; then
    timeout 420 "$RHEA" bench boot --device cuda:0 --preset "$PRESET" --reps "$REPS" \
      --json "$OUT/rhea-boot.json" 2>&1 | tee "$OUT/rhea-boot.txt"
    echo "EXIT rhea: ${PIPESTATUS[0]}" | tee -a "$SUMMARY"
  else
    echo "SKIP rhea: no binary at $RHEA (tar xzf .gpu-carry/bin.tgz first, or set RHEA_BIN)" \
      | tee -a "$SUMMARY"
  fi
fi

# ---- DESILO ---------------------------------------------------------------------------------------
if want desilo; then
  say "DESILO gpu --boot"
  if ! python3 -c 'import desilofhe' 2>/dev/null; then
    if ls .whl/desilofhe*.whl >/dev/null 2>&1; then
      python3 -m pip install -q --no-index --no-deps --target "$SCRATCH/desilo-site" \
        .whl/desilofhe*.whl && export PYTHONPATH="$SCRATCH/desilo-site${PYTHONPATH:+:$PYTHONPATH}"
    fi
  fi
  if ! python3 -c 'import desilofhe' 2>/dev/null; then
    echo "SKIP desilo: desilofhe does not import (carry its wheel in .whl)" | tee -a "$SUMMARY"
  elif ! script=$(peer_path desilo_bench.py); then
    echo "SKIP desilo: desilo_bench.py not found (copy ../shared/peers/desilo_bench.py to .peers/)" \
      | tee -a "$SUMMARY"
  else
    # desilo_bench.py prints one JSON object last; its bootstrap time is the mean of 10 calls
    # issued back to back, synchronised by a decrypt after the loop.
    PYTHONUNBUFFERED=1 timeout 300 python3 "$script" gpu --boot > "$SCRATCH/desilo.out" 2>&1
    rc=$?
    cat "$SCRATCH/desilo.out"
    python3 - "$SCRATCH/desilo.out" "$OUT/desilo-boot.json" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
start = text.rfind("\n{") + 1 if not text.startswith("{") else 0
try:
    obj = json.loads(text[start:])
except ValueError:
    sys.exit("desilo: no JSON object in its output")
json.dump(obj, open(sys.argv[2], "w"), indent=1)
EOF
    echo "EXIT desilo: $rc" | tee -a "$SUMMARY"
  fi
fi

# ---- Cheddar ----------------------------------------------------------------------------------------
if want cheddar; then
  if ! dir=$(peer_path cheddar); then
    echo "SKIP cheddar: no cheddar/ (copy ../shared/peers/cheddar to .peers/ and carry it)" \
      | tee -a "$SUMMARY"
  else
    dir=$(cd "$dir" && pwd)
    CWORK=$SCRATCH/cheddar-work
    COUT=$SCRATCH/cheddar-out
    mkdir -p "$COUT"
    # As `quick` does: nvcc from PATH when /usr/local/cuda has none.
    CUDA_ROOT=${CUDA_ROOT:-/usr/local/cuda}
    if [ ! -x "$CUDA_ROOT/bin/nvcc" ] && command -v nvcc >/dev/null; then
      CUDA_ROOT=$(dirname "$(dirname "$(command -v nvcc)")")
    fi
    export CUDA_ROOT
    if [ "${CHEDDAR_MODE:-}" = quick ]; then
      say "Cheddar: build_and_run.sh quick"
      OUT="$COUT" WORK="$CWORK" RUN_BUDGET_S=480 JOBS="${JOBS:-$(nproc)}" \
        bash "$dir/build_and_run.sh" quick > "$COUT/driver.log" 2>&1
    else
      # The bootstrapping half of `quick`: build, then PeerBoot at bootparam_40 only.
      say "Cheddar: build_and_run.sh build, then PeerBoot bootparam_40"
      OUT="$COUT" WORK="$CWORK" JOBS="${JOBS:-$(nproc)}" \
        bash "$dir/build_and_run.sh" build > "$COUT/driver.log" 2>&1
      if [ -x "$CWORK/build/unittest/peer_bench" ]; then
        ( cd "$CWORK/build/unittest" \
          && LD_LIBRARY_PATH="$CWORK/build:$CWORK/lib:${LD_LIBRARY_PATH:-}" timeout 300 \
            ./peer_bench --gtest_color=no \
            --gtest_filter='Cheddar/Testbed32.PeerBoot/bootparam_40_json' ) \
          > "$COUT/peer_boot_40.log" 2>&1
        echo "EXIT cheddar peer_bench: $?" | tee -a "$SUMMARY"
      else
        echo "cheddar: build failed (see cheddar-build.log)" | tee -a "$SUMMARY"
      fi
    fi
    grep -hE '^PEERPARAM|^PEERBOOT|^\[  FAILED' "$COUT"/*.log 2>/dev/null | sort -u \
      | tee "$OUT/cheddar-boot.txt"
    tail -40 "$COUT/driver.log" > "$OUT/cheddar-build.log" 2>/dev/null
    [ -f "$COUT/summary.txt" ] && cp "$COUT/summary.txt" "$OUT/cheddar-summary.txt"
  fi
fi

# ---- side by side -------------------------------------------------------------------------------
say "summary"
python3 - "$OUT" <<'EOF' | tee -a "$SUMMARY"
import json, math, os, re, sys
out = sys.argv[1]
rows = []
def load(name):
    try:
        return json.load(open(os.path.join(out, name)))
    except (OSError, ValueError):
        return None
bits = lambda err: -math.log2(err) if err and err > 0 else float("nan")
r = load("rhea-boot.json")
if r:
    rows.append(("rhea " + r["preset"], r["n"], r["slots"], r["latency_ms"], "median",
                 r["levels_left"], r["precision_bits_min"], r["precision_bits_min_real"],
                 f"keys {r['key_bytes'] / 1e9:.1f} GB, keygen {r['keygen_s']:.1f} s, "
                 f"{r['keyswitches']} ks, fallbacks {r['fused_fallbacks']}"))
d = load("desilo-boot.json")
if d and "bootstrap_ms" in d:
    rows.append(("desilo (use_bootstrap)", 2 * d["slots"], d["slots"], d["bootstrap_ms"],
                 "mean of 10", d.get("boot_level_after"), float("nan"),
                 bits(d.get("boot_max_err")), f"bootkey {d.get('bootkey_s', float('nan')):.1f} s"))
try:
    for line in open(os.path.join(out, "cheddar-boot.txt")):
        if line.startswith("PEERBOOT") and "median_us=" in line:
            kv = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
            slots = int(kv["slots"])
            rows.append((f"cheddar {kv['param']} {kv['variant']}", 2 * slots, slots,
                         float(kv["median_us"]) / 1e3, "median", kv["out_level"],
                         float(kv["precision_bits"]), float("nan"), ""))
except OSError:
    pass
print(f"{'peer':<34} {'N':>6} {'slots':>6} {'ms':>9} {'':<10} {'levels':>6} "
      f"{'bits(cx)':>8} {'bits(re)':>8}  notes")
for name, n, slots, ms, how, lv, bc, br, note in rows:
    print(f"{name:<34} {'2^%d' % int(math.log2(n)):>6} {slots:>6} {ms:>9.2f} {how:<10} "
          f"{str(lv):>6} {bc:>8.1f} {br:>8.1f}  {note}")
print("bits = -log2 of the largest absolute error over the slots: bits(cx) on complex inputs "
      "in the unit square (Cheddar draws them so too), bits(re) on real inputs in [-1, 1] "
      "(what DESILO checks)")
EOF
echo "files in $OUT: $(ls "$OUT" | tr '\n' ' ')"
