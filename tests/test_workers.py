"""The suite's two workers keep each group of files that share one expensive thing on one worker
(tests/conftest.py: a scheduler over xdist's private `_split_scope`, which this test holds)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def test_grouped_files_run_on_one_worker_and_first(tmp_path):
    shutil.copy(HERE / "conftest.py", tmp_path / "conftest.py")
    body = "import time\n" + "".join(f"def test_{n}():\n    time.sleep(0.2)\n" for n in range(3))
    for name in ("test_a.py", "test_staleness.py", "test_workflow_lineage.py", "test_slurm.py", "test_slurm_nodes.py"):
        (tmp_path / name).write_text(body)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "-v", "-p", "no:cacheprovider", "-o", "addopts=", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent / "workflow" / "scripts")])},
    )
    assert run.returncode == 0, run.stdout[-2000:]
    worker = {}
    for found in re.finditer(r"\[(gw\d)\] .*? PASSED (\S+)::", run.stdout):
        worker.setdefault(found.group(2), set()).add(found.group(1))
    assert all(len(used) == 1 for used in worker.values()), worker
    assert worker["test_staleness.py"] == worker["test_workflow_lineage.py"]
    assert worker["test_slurm.py"] == worker["test_slurm_nodes.py"] != worker["test_staleness.py"]
