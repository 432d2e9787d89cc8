#!/usr/bin/env bash
# Packs, HERE, this machine's `perf` and the shared libraries it needs (not libc, libm,
# libstdc++, libgcc_s or the loader, which the GPU machine has) into .gpu-carry/perf.tgz, for
# scripts/gpu-host-profile.sh on the GPU machine (which has no perf). Checked: Debian 12's
# perf 6.1 runs on the device's Ubuntu 24.04 and may sample there (BENCHMARKS.md §24).
#   scripts/gpu-perf-pack.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PERF=$(command -v perf) || { echo "no perf here"; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/perf/lib" .gpu-carry
cp "$PERF" "$TMP/perf/perf"
ldd "$PERF" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libstdc++.so.*|libgcc_s.so.*|ld-linux*) ;;
    *) cp -L "$lib" "$TMP/perf/lib/" ;;
  esac
done
(cd "$TMP" && tar czf - perf) > .gpu-carry/perf.tgz
echo "perf $("$PERF" --version | awk '{print $3}') and $(ls "$TMP/perf/lib" | wc -l) libraries, $(du -h .gpu-carry/perf.tgz | cut -f1) in .gpu-carry/perf.tgz"
