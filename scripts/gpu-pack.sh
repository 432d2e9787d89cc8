#!/usr/bin/env bash
# Packs what scripts/gpu-build.sh put in .gpu-bin/ into .gpu-carry/bin.tgz (the device tool
# carries at most 64 MiB; the whole .gpu-bin is ~80 MB), optionally only the binaries whose
# file name matches a regex. On the device: `tar xzf .gpu-carry/bin.tgz && bash scripts/gpu-run.sh`.
#   scripts/gpu-pack.sh                                   # everything
#   scripts/gpu-pack.sh 'rhea-cuda__(ntt|bconv)$|bin__'   # a subset
set -euo pipefail
cd "$(dirname "$0")/.."
RE=${1:-.}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/.gpu-bin" .gpu-carry
awk -F'\t' -v re="$RE" '$4 ~ re' .gpu-bin/MANIFEST.tsv > "$TMP/.gpu-bin/MANIFEST.tsv"
cut -f4 "$TMP/.gpu-bin/MANIFEST.tsv" | while read -r f; do cp ".gpu-bin/$f" "$TMP/.gpu-bin/"; done
rm -f .gpu-carry/bin.tgz .gpu-carry/sub.tgz .gpu-carry/bin.tar.xz
(cd "$TMP" && tar czf - .gpu-bin) > .gpu-carry/bin.tgz
echo "$(wc -l < "$TMP/.gpu-bin/MANIFEST.tsv") binaries, $(du -h .gpu-carry/bin.tgz | cut -f1) in .gpu-carry/bin.tgz"
