"""Every command a user may run answers --help: the workflow's scripts, the developer tools and the benchmarks.

A help text with a bare `%` (argparse formats help strings with %) crashes `--help` only when it
is asked for; this runs each one as a user would. The scripts' heavy imports are paid once per
script, two at a time.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

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


BENCHMARKS = sorted(p for p in (REPO / "benchmarks").glob("*.py") if "argparse" in p.read_text())
PEER_PACKAGES = {"train_trl_sft.py": "trl", "train_trl_dpo.py": "trl"}  # a peer's trainer, not installed here


def benchmark_help(script: Path) -> subprocess.CompletedProcess:
    """--help as the shell drivers start a benchmark (their PYTHONPATH), in a process of its own, so that benchmarks/
    never shadows a workflow module in this one."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(["workflow/scripts", "benchmarks"])}
    return subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120, cwd=REPO, env=env
    )


def test_every_benchmark_prints_its_help_or_names_the_peer_it_lacks():
    runnable = [p for p in BENCHMARKS if importlib.util.find_spec(PEER_PACKAGES.get(p.name, "torch")) is not None]
    assert len(BENCHMARKS) > 10 and len(runnable) >= len(BENCHMARKS) - len(PEER_PACKAGES)
    with ThreadPoolExecutor(2) as pool:
        results = dict(zip(runnable, pool.map(benchmark_help, runnable), strict=True))
    failed = {
        path.name: (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        for path, proc in results.items()
        if proc.returncode != 0 or "usage:" not in proc.stdout
    }
    assert not failed, failed


@pytest.mark.parametrize("name", sorted(PEER_PACKAGES))
def test_a_peer_s_benchmark_prints_its_help(name):
    package = PEER_PACKAGES[name]
    if importlib.util.find_spec(package) is None:
        pytest.skip(f"{name} drives {package}, which this environment does not install (the GPU benchmarks carry it)")
    proc = benchmark_help(REPO / "benchmarks" / name)
    assert proc.returncode == 0 and "usage:" in proc.stdout, proc.stderr[-2000:]
