#!/usr/bin/env bash
# CI (CPU-only machine): compiles every CUDA kernel with NVRTC for sm_90, without a GPU.
# Installs the nvidia-cuda-nvrtc wheel (CUDA 13) into a throw-away venv, points LD_LIBRARY_PATH at
# its libraries and runs the `kernels_compile` tests, which are #[ignore]d (they need NVRTC), with
# --include-ignored: a missing NVRTC is then a failure, never a skip.
#
#   RHEA_NVRTC_VENV=.venv-nvrtc scripts/check-kernels.sh   # keep and reuse a venv instead
#   RHEA_NVRTC_VERSION=13.0.88                              # the wheel version (default)
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=${RHEA_NVRTC_VERSION:-13.0.88}
if [ -n "${RHEA_NVRTC_VENV:-}" ]; then
  VENV=$RHEA_NVRTC_VENV
else
  TMP=$(mktemp -d)
  trap 'rm -rf "$TMP"' EXIT
  VENV=$TMP/venv
fi
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "nvidia-cuda-nvrtc==$VERSION"
LIBDIR=$(find "$VENV" -name 'libnvrtc.so*' -printf '%h\n' | head -1)
if [ -z "$LIBDIR" ]; then
  echo "check-kernels: libnvrtc not found in the nvidia-cuda-nvrtc wheel" >&2
  exit 1
fi
echo "NVRTC $VERSION from $LIBDIR"
LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
RHEA_KERNEL_CACHE=off \
  cargo test --release -p rhea-cuda --test kernels_compile -- --include-ignored --nocapture
