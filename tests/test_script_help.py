"""Every command a user may run answers --help: the workflow's scripts, the developer tools and the benchmarks.

A help text with a bare `%` (argparse formats help strings with %) crashes `--help` only when it
is asked for; this runs each one as `python SCRIPT --help` runs it, all of them in one interpreter
(tests/_run_scripts.py), so that their heavy imports are paid once.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
COMMANDS = sorted(
    p
    for p in [*(REPO / "workflow" / "scripts").glob("*.py"), *(REPO / "tools").glob("*.py")]
    if "argparse" in p.read_text() or "parse_args(" in p.read_text()
)


def helps(scripts: list[Path], *pythonpath: str) -> dict[Path, dict]:
    """Each script's `--help`, all in one interpreter started with `pythonpath` (tests/_run_scripts.py): the imports
    they share are paid once."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(pythonpath)} if pythonpath else None
    proc = subprocess.run(
        [sys.executable, str(REPO / "tests" / "_run_scripts.py"), json.dumps([[str(p), "--help"] for p in scripts])],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(zip(scripts, json.loads(proc.stdout.splitlines()[-1]), strict=True))


def failures(results: dict[Path, dict]) -> dict[str, str]:
    return {
        str(path.relative_to(REPO)): (result["stderr"].strip().splitlines() or ["(no output)"])[-1]
        for path, result in results.items()
        if result["code"] != 0 or "usage:" not in result["stdout"]
    }


def test_every_script_and_tool_prints_its_help():
    assert len(COMMANDS) > 20
    results = helps(COMMANDS)
    assert not failures(results)
    # each under its own name, saying what it is
    foreign = [p.name for p, result in results.items() if f"usage: {p.name}" not in result["stdout"]]
    assert not foreign, foreign


BENCHMARKS = sorted(p for p in (REPO / "benchmarks").glob("*.py") if "argparse" in p.read_text())
PEER_PACKAGES = {"train_trl_sft.py": "trl", "train_trl_dpo.py": "trl"}  # a peer's trainer, not installed here


def test_every_benchmark_prints_its_help_or_names_the_peer_it_lacks():
    """--help as the shell drivers start a benchmark (their PYTHONPATH), in a process of their own, so that
    benchmarks/ never shadows a workflow module in this one."""
    runnable = [p for p in BENCHMARKS if importlib.util.find_spec(PEER_PACKAGES.get(p.name, "torch")) is not None]
    assert len(BENCHMARKS) > 10 and len(runnable) >= len(BENCHMARKS) - len(PEER_PACKAGES)
    assert not failures(helps(runnable, "workflow/scripts", "benchmarks"))


@pytest.mark.parametrize("name", sorted(PEER_PACKAGES))
def test_a_peer_s_benchmark_prints_its_help(name):
    package = PEER_PACKAGES[name]
    if importlib.util.find_spec(package) is None:
        pytest.skip(f"{name} drives {package}, which this environment does not install (the GPU benchmarks carry it)")
    assert not failures(helps([REPO / "benchmarks" / name], "workflow/scripts", "benchmarks"))


DRIVERS = sorted(
    p for p in (REPO / "benchmarks").glob("*.sh") if not p.name.startswith("_") and p.name != "gpu_data.sh"
)


@pytest.mark.parametrize("driver", DRIVERS, ids=lambda p: p.name)
def test_every_benchmark_driver_prints_its_header_on_help_and_starts_nothing(driver, tmp_path):
    """`bash benchmarks/X.sh --help` prints the driver's header and exits 0, where it once took --help as its
    output folder and started a run (benchmarks/_help.sh)."""
    result = subprocess.run(["bash", str(driver), "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    header = driver.read_text().splitlines()[1].removeprefix("# ")
    assert result.returncode == 0 and result.stdout.splitlines()[0] == header, result.stderr
    assert not list(tmp_path.iterdir())
