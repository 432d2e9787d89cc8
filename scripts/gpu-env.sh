# Sourced by the scripts that run ON THE GPU MACHINE: finds libcuda and libnvrtc and exports
# LD_LIBRARY_PATH and the kernel cache directory. (The GPU tests need no switch: they are
# #[ignore]d, gpu-run.sh runs them with --include-ignored, and a missing GPU fails them.)
# Appends what it found to "$OUT/device.txt" when OUT is set.
# libcuda: the driver's own directory first (read-only mount on these machines).
LIBS=""
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64; do
  if ls "$d"/libcuda.so* >/dev/null 2>&1; then LIBS="$LIBS:$d"; break; fi
done
# libnvrtc: a CUDA 13 toolkit, else the nvidia-cuda-nvrtc wheel of the system Python.
NVRTC_DIR=""
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-13*/lib64; do
  if ls "$d"/libnvrtc.so.13* >/dev/null 2>&1; then NVRTC_DIR="$d"; break; fi
done
if [ -z "$NVRTC_DIR" ]; then
  for py in python3 /opt/torch/.venv/bin/python3; do
    d=$("$py" -c 'import nvidia, os; [print(os.path.join(p, "cu13", "lib")) for p in nvidia.__path__]' 2>/dev/null | head -1)
    if [ -n "$d" ] && ls "$d"/libnvrtc.so* >/dev/null 2>&1; then NVRTC_DIR="$d"; break; fi
  done
fi
if [ -z "$NVRTC_DIR" ]; then
  NVRTC_DIR=$(find /usr/local /opt /usr/lib -name 'libnvrtc.so.13*' -printf '%h\n' 2>/dev/null | head -1)
fi
[ -n "$NVRTC_DIR" ] && LIBS="$LIBS:$NVRTC_DIR"
export LD_LIBRARY_PATH="${LIBS#:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export RHEA_KERNEL_CACHE=${RHEA_KERNEL_CACHE:-/tmp/rhea-kernel-cache}
{
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  echo "nvrtc: ${NVRTC_DIR:-NOT FOUND}"
  ls "${NVRTC_DIR:-/nonexistent}"/libnvrtc* 2>/dev/null
} >> "${OUT:-/tmp}/device.txt"
# NCCL for the multi-GPU tests and `rhea bench multi --mode latency` (a `libnccl.so` link on
# LD_LIBRARY_PATH: cudarc does not look for `libnccl.so.2`).
if [ -f scripts/nccl-env.sh ]; then
  # shellcheck source=scripts/nccl-env.sh
  . scripts/nccl-env.sh 2>> "${OUT:-/tmp}/device.txt"
fi
