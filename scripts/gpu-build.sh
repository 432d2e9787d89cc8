#!/usr/bin/env bash
# Builds, HERE (a machine with Rust, no GPU needed), everything the GPU machine runs: every test
# executable of the workspace and the GPU bench examples, copied into .gpu-bin/ (git-ignored)
# with a manifest. Then, on the device machine: `bash scripts/gpu-run.sh` (no cargo there).
#
#   scripts/gpu-build.sh                 # the whole workspace
#   GPU_BUILD_PACKAGES="-p rhea-cuda" scripts/gpu-build.sh   # only some packages
#
# Honours CARGO_TARGET_DIR. Binaries are stripped of debug info to keep the carry small.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=${GPU_BUILD_PACKAGES:---workspace}
OUTDIR=.gpu-bin
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"

collect() {
  # stdin: cargo JSON messages; $1: kind label. Prints "kind<TAB>package<TAB>target<TAB>path".
  python3 -c '
import json, sys
kind = sys.argv[1]
for line in sys.stdin:
    line = line.strip()
    if not line.startswith("{"):
        continue
    m = json.loads(line)
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    pkg = m["package_id"]
    # package_id is "path+file:///...#name@ver" or "name ver (...)"
    if "#" in pkg:
        left, right = pkg.split("#", 1)
        name = right.split("@")[0] if "@" in right else left.rstrip("/").split("/")[-1]
    else:
        name = pkg.split()[0]
    t = m["target"]
    if kind == "test" and not m["profile"]["test"]:
        continue
    if kind == "example" and "example" not in t["kind"]:
        continue
    if kind == "bin" and "bin" not in t["kind"]:
        continue
    print("\t".join([kind, name, t["name"], m["executable"]]))
' "$1"
}

echo "== cargo build --release ($PKGS)"
cargo build --release $PKGS

echo "== test executables"
cargo test --release $PKGS --no-run --message-format=json | collect test > "$OUTDIR/.tests"

echo "== bench examples, the quick start and the rhea CLI"
cargo build --release -p rhea-cuda --examples --message-format=json \
  | collect example > "$OUTDIR/.examples"
cargo build --release -p rhea --example quickstart --message-format=json \
  | collect example >> "$OUTDIR/.examples"
cargo build --release -p rhea --example lite_protected_bench --message-format=json \
  | collect example >> "$OUTDIR/.examples"
cargo build --release -p rhea-cli --bin rhea --message-format=json \
  | collect bin >> "$OUTDIR/.examples"

: > "$OUTDIR/MANIFEST.tsv"
cat "$OUTDIR/.tests" "$OUTDIR/.examples" | while IFS=$'\t' read -r kind pkg target path; do
  file="${kind}__${pkg}__${target}"
  cp "$path" "$OUTDIR/$file"
  strip --strip-debug "$OUTDIR/$file" 2>/dev/null || true
  printf '%s\t%s\t%s\t%s\n' "$kind" "$pkg" "$target" "$file" >> "$OUTDIR/MANIFEST.tsv"
done
rm -f "$OUTDIR/.tests" "$OUTDIR/.examples"

echo "== $OUTDIR"
cat "$OUTDIR/MANIFEST.tsv"
du -sh "$OUTDIR"
