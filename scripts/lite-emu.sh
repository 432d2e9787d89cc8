#!/usr/bin/env bash
# Runs LITE's kernels (crates/rhea-cuda/kernels/lite.cu, lite_fhe.cu, lite_ops.cu, lite_aes_xts.cuh) on the CPU, one
# thread per lane (scripts/lite-emu/): checks them against the IEEE 1619 vectors, an oracle of the
# memory form and the plain kernels, without a GPU. Needs g++ (C++17) and python3.
#   scripts/lite-emu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cp crates/rhea-cuda/kernels/lite_aes_xts.cuh crates/rhea-cuda/kernels/lite.cu \
   crates/rhea-cuda/kernels/lite_fhe.cu crates/rhea-cuda/kernels/lite_ops.cu scripts/lite-emu/common.cuh scripts/lite-emu/emu.cpp \
   scripts/lite-emu/emu_fhe.cpp scripts/lite-emu/emu_ops.cpp "$TMP/"
python3 - crates/rhea-cuda/tests/common/xts_vectors.rs "$TMP/vectors.txt" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
rows = []
for m in re.finditer(r'XtsVector \{(.*?)\n    \},', src, re.S):
    def field(name, body=m.group(1)):
        v = re.search(name + r': (concat!\((.*?)\)|"[^"]*"|0x[0-9a-f]+)', body, re.S).group(1)
        return ''.join(re.findall(r'"([0-9a-f]+)"', v)) if v.startswith('concat') else v.strip('"')
    rows.append(' '.join([field('key1'), field('key2'), field('dusn')[2:], field('ptx'), field('ctx')]))
assert len(rows) == 9, len(rows)
open(sys.argv[2], 'w').write('\n'.join(rows) + '\n')
PY
g++ -O1 -std=c++17 -pthread -DLITE_HOST_EMULATION -I"$TMP" "$TMP/emu.cpp" -o "$TMP/lite-emu"
g++ -O1 -std=c++17 -pthread -DLITE_HOST_EMULATION -I"$TMP" "$TMP/emu_fhe.cpp" -o "$TMP/lite-emu-fhe"
g++ -O1 -std=c++17 -pthread -ffp-contract=off -DLITE_HOST_EMULATION -I"$TMP" "$TMP/emu_ops.cpp" -o "$TMP/lite-emu-ops"
(cd "$TMP" && ./lite-emu && ./lite-emu-fhe && ./lite-emu-ops)
