"""A job says, as it starts, how long its process ran before main(): what the interpreter and the imports cost."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1] / "workflow" / "scripts"

SLOW_IMPORTS = """
import time
time.sleep(2.0)  # imports that take 2 s
from lineage.training import dist as tdist
tdist.init_distributed("cpu")
tdist.close()
"""


def test_the_first_line_says_how_long_the_imports_took():
    env = {**os.environ, "PYTHONPATH": str(SCRIPTS)}
    out = subprocess.run([sys.executable, "-c", SLOW_IMPORTS], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    said = re.search(r"job start: ([0-9.]+) s after the interpreter began", out.stdout)
    assert said, out.stdout
    assert 2.0 <= float(said.group(1)) < 60.0, said.group(0)
