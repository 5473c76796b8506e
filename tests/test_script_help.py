"""Every command a user may run answers --help: the workflow's scripts and the developer tools.

A help text with a bare `%` (argparse formats help strings with %) crashes `--help` only when it
is asked for; this runs each one as a user would. The scripts' heavy imports are paid once per
script, two at a time.
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMANDS = sorted(
    p
    for p in [*(REPO / "workflow" / "scripts").glob("*.py"), *(REPO / "tools").glob("*.py")]
    if "argparse" in p.read_text()
)


def help_of(script: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120, cwd=REPO
    )


def test_every_script_and_tool_prints_its_help():
    assert len(COMMANDS) > 20
    with ThreadPoolExecutor(2) as pool:
        results = dict(zip(COMMANDS, pool.map(help_of, COMMANDS), strict=True))
    failed = {
        str(path.relative_to(REPO)): (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        for path, proc in results.items()
        if proc.returncode != 0 or "usage:" not in proc.stdout
    }
    assert not failed, failed
