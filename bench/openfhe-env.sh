# Sourced by the peer scripts (bench/cpu-vs-openfhe.sh, bench/bgv-vs-openfhe.sh): finds a Python
# that actually runs and the OpenFHE virtual environment, and says clearly what is missing.
#
#   pick_python            prints the first candidate that runs `python -c 'import sys'` (and has
#                          venv): $PYTHON if set, python3.10 (the version the openfhe wheel was
#                          first published for), 3.11, 3.12, pyenv's installed 3.1x versions
#                          (run directly, not through shims that may point at nothing), python3
#   ensure_openfhe_venv    makes .venv-openfhe with that Python and `pip install openfhe` unless
#                          it exists and imports openfhe; exits 1 with a clear message otherwise
#   RHEA_BIN               the release binary (honours CARGO_TARGET_DIR)

RHEA_BIN="${CARGO_TARGET_DIR:-target}/release/rhea"
OPENFHE_VENV=.venv-openfhe

# Whether "$1" runs and has the venv module.
python_runs() {
  "$1" -c 'import sys, venv' >/dev/null 2>&1
}

pick_python() {
  local cands=() c v
  [ -n "${PYTHON:-}" ] && cands+=("$PYTHON")
  for v in 3.10 3.11 3.12; do
    c=$(command -v "python$v" 2>/dev/null) && cands+=("$c")
    for c in "$HOME"/.pyenv/versions/"$v".*/bin/python3; do
      [ -x "$c" ] && cands+=("$c")
    done
  done
  for c in python3 /usr/bin/python3 python; do
    c=$(command -v "$c" 2>/dev/null) && cands+=("$c")
  done
  for c in "${cands[@]}"; do
    if python_runs "$c"; then
      echo "$c"
      return 0
    fi
  done
  echo "no runnable Python found (tried: ${cands[*]:-none}); install Python 3.10-3.12 or set PYTHON=/path/to/python3" >&2
  return 1
}

ensure_openfhe_venv() {
  local py="$OPENFHE_VENV/bin/python"
  if [ -x "$py" ] && "$py" -c 'import openfhe' >/dev/null 2>&1; then
    return 0
  fi
  local base
  base=$(pick_python) || exit 1
  echo "== making $OPENFHE_VENV with $base ($("$base" -c 'import sys; print(sys.version.split()[0])'))" >&2
  rm -rf "$OPENFHE_VENV"
  if ! "$base" -m venv "$OPENFHE_VENV"; then
    echo "error: '$base -m venv $OPENFHE_VENV' failed (on Debian/Ubuntu: apt-get install python3-venv, or set PYTHON=...)" >&2
    exit 1
  fi
  if ! "$py" -m pip install -q openfhe; then
    echo "error: 'pip install openfhe' failed in $OPENFHE_VENV (no network, or no openfhe wheel for $("$py" -c 'import sys; print(sys.version.split()[0])') on this platform; set PYTHON= to a Python 3.10-3.12 and retry)" >&2
    exit 1
  fi
  if ! "$py" -c 'import openfhe' >/dev/null 2>&1; then
    echo "error: openfhe was installed in $OPENFHE_VENV but does not import:" >&2
    "$py" -c 'import openfhe' >&2 || true
    exit 1
  fi
}
