#!/usr/bin/env bash
# The SASS (sm_90 machine code) of one kernel source, on a CPU machine: NVRTC and nvdisasm from
# PyPI wheels in a venv (default .venv-sass), the CUBIN from `examples/sass.rs`.
#   scripts/sass.sh bconv [FUNCTION_REGEX] > bconv.sass
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=${1:?usage: scripts/sass.sh SOURCE [FUNCTION_REGEX]}
VENV=${RHEA_SASS_VENV:-.venv-sass}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "nvidia-cuda-nvrtc==13.0.88" nvidia-cuda-nvdisasm >&2
fi
LIBDIR=$(find "$VENV" -name 'libnvrtc.so*' -printf '%h\n' | head -1)
NVDISASM=$(find "$VENV" -name nvdisasm -type f | head -1)
chmod +x "$NVDISASM"
LD_LIBRARY_PATH="$LIBDIR" cargo run -q --release -p rhea-cuda --example sass -- "$SRC" "/tmp/$SRC.cubin" >&2
if [ -n "${2:-}" ]; then
  "$NVDISASM" -c -fun "$2" "/tmp/$SRC.cubin" 2>/dev/null || "$NVDISASM" -c "/tmp/$SRC.cubin" | awk -v re="$2" '/\.text\./{p = ($0 ~ re)} p'
else
  "$NVDISASM" -c "/tmp/$SRC.cubin"
fi
