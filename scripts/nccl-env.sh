#!/usr/bin/env bash
# Source this (`. scripts/nccl-env.sh`) before running multi-GPU (NCCL) tests or benches.
# cudarc loads NCCL as `libnccl.so` (not `libnccl.so.2`); NCCL's runtime packages (the deb
# `libnccl2`, PyTorch's `nvidia-nccl-cu*` wheel) ship `libnccl.so.2` only. This finds one and
# puts a directory with a `libnccl.so` link to it first on LD_LIBRARY_PATH. RHEA_NCCL_LIB may
# name the library file directly.
_rhea_nccl_find() {
  if [ -n "${RHEA_NCCL_LIB:-}" ] && [ -f "$RHEA_NCCL_LIB" ]; then echo "$RHEA_NCCL_LIB"; return; fi
  local f
  f=$(ldconfig -p 2>/dev/null | awk '/libnccl\.so/ {print $NF; exit}')
  if [ -n "$f" ]; then echo "$f"; return; fi
  for py in python3 /opt/torch/.venv/bin/python3; do
    f=$($py - 2>/dev/null <<'PY'
import glob, os
try:
    import nvidia
    roots = list(nvidia.__path__)
except Exception:
    roots = []
for r in roots:
    for f in sorted(glob.glob(os.path.join(r, "**", "libnccl.so*"), recursive=True)):
        print(f); raise SystemExit
PY
)
    if [ -n "$f" ]; then echo "$f"; return; fi
  done
  find / -xdev -name 'libnccl.so*' -type f 2>/dev/null | head -n 1
}
_rhea_nccl_lib=$(_rhea_nccl_find)
if [ -z "$_rhea_nccl_lib" ]; then
  echo "nccl-env: no libnccl found (set RHEA_NCCL_LIB=/path/to/libnccl.so.2)" >&2
else
  _rhea_nccl_dir=${TMPDIR:-/tmp}/rhea-nccl-lib
  mkdir -p "$_rhea_nccl_dir"
  ln -sf "$_rhea_nccl_lib" "$_rhea_nccl_dir/libnccl.so"
  export LD_LIBRARY_PATH="$_rhea_nccl_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # NVLink multicast stays off (KINDS.md of the GPU machines; harmless elsewhere).
  export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
  echo "nccl-env: $_rhea_nccl_lib (as $_rhea_nccl_dir/libnccl.so)" >&2
fi
unset _rhea_nccl_lib _rhea_nccl_dir
