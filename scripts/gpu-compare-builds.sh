#!/usr/bin/env bash
# Runs ON THE GPU MACHINE: the `rhea` CLI of an older build against this one, in one command.
#  1. first use with a fresh kernel cache (keygen + one mul + relinearize at the deep preset),
#     then again with the cache warm, for each binary;
#  2. the quick start of this build;
#  3. ROUNDS interleaved rounds of `rhea bench ops --device cuda:0 --reps 30`, old then new.
# Output in $OUT (default ./gpu-out): cold.txt, ab.txt, info.txt, quickstart.txt, device.txt.
#
#   here:  cp target/release/rhea .gpu-base/rhea-OLD   (built at the old commit; ignore .gpu-base)
#          scripts/gpu-build.sh && scripts/gpu-pack.sh 'bin__|quickstart'
#   there: (carry .gpu-carry and .gpu-base) bash scripts/gpu-compare-builds.sh .gpu-base/rhea-OLD
set -uo pipefail
cd "$(dirname "$0")/.."
OLD=${1:?usage: gpu-compare-builds.sh OLD_RHEA_BINARY [ROUNDS]}
ROUNDS=${2:-3}
[ -d .gpu-bin ] || tar xzf .gpu-carry/bin.tgz
# shellcheck source=scripts/gpu-env.sh
source scripts/gpu-env.sh >/dev/null 2>&1 || true
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
NEW=.gpu-bin/$(awk -F'\t' '$1=="bin" && $3=="rhea" {print $4}' .gpu-bin/MANIFEST.tsv)
QS=.gpu-bin/$(awk -F'\t' '$1=="example" && $3=="quickstart" {print $4}' .gpu-bin/MANIFEST.tsv)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv | tee "$OUT/device.txt"
"$NEW" info 2>&1 | tee "$OUT/info.txt"
now() { date +%s.%N; }
secs() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$2"; }
for v in old new; do
  bin=$OLD
  [ $v = new ] && bin=$NEW
  cache=$(mktemp -d)
  s=$(now)
  RHEA_KERNEL_CACHE=$cache "$bin" bench ops --device cuda:0 --reps 1 --only mul_relin \
    > "$OUT/cold-$v.txt" 2>&1
  e=$(now)
  echo "$v cold (fresh kernel cache, keygen + one mul_relin): $(secs "$s" "$e") s," \
    "$(find "$cache" -type f | wc -l) cached modules" | tee -a "$OUT/cold.txt"
  s=$(now)
  RHEA_KERNEL_CACHE=$cache "$bin" bench ops --device cuda:0 --reps 1 --only mul_relin > /dev/null 2>&1
  e=$(now)
  echo "$v warm (same cache): $(secs "$s" "$e") s" | tee -a "$OUT/cold.txt"
done
"$QS" 2>&1 | tee "$OUT/quickstart.txt"
for r in $(seq 1 "$ROUNDS"); do
  for v in old new; do
    bin=$OLD
    [ $v = new ] && bin=$NEW
    echo "==== round $r $v" | tee -a "$OUT/ab.txt"
    timeout 200 "$bin" bench ops --device cuda:0 --reps 30 2>&1 | tee -a "$OUT/ab.txt"
  done
done
