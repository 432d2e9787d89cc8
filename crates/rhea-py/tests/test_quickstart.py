"""The README's Python quick start runs (at a smaller, insecure preset to stay fast)."""

import os
import pathlib
import re
import subprocess
import sys


def test_quickstart_runs():
    script = pathlib.Path(__file__).parent.parent / "examples" / "quickstart.py"
    env = dict(os.environ, RHEA_QUICKSTART_PRESET="test_n13_levels10_insecure")
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                         text=True, check=True).stdout
    precisions = [float(b) for b in re.findall(r"([0-9.]+) bits", out)]
    assert len(precisions) == 2 and min(precisions) > 15, out
    assert "ran on: " in out
