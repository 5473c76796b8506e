"""The workflow's launcher (workflow/scripts/launch_ranks.py) on plain Python ranks: what each rank is told, how
fast they start, and what a stop the ranks outlast does. Training under it: tests/reliability/."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = [sys.executable, str(REPO / "workflow/scripts/launch_ranks.py")]
ENV_KEYS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT")


def script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "rank.py"
    path.write_text("import json, os, signal, sys, time\n" + body)
    return path


def test_each_rank_gets_torchrun_s_environment_for_its_machine(tmp_path):
    """Machine 1 of 2, four ranks in all: it starts ranks 2 and 3, told where machine 0's store is."""
    rank = script(
        tmp_path, f"json.dump({{k: os.environ[k] for k in {ENV_KEYS!r}}}, open(sys.argv[1] + os.environ['RANK'], 'w'))"
    )
    flags = ["--num_processes", "4", "--num_machines", "2", "--machine_rank", "1", "--main_process_ip", "10.0.0.7"]
    run = subprocess.run(
        [*LAUNCHER, *flags, "--main_process_port", "29411", str(rank), str(tmp_path / "env")], timeout=60
    )
    assert run.returncode == 0
    seen = {n: json.loads((tmp_path / f"env{n}").read_text()) for n in (2, 3)}
    assert not (tmp_path / "env0").exists() and not (tmp_path / "env1").exists()
    for n, env in seen.items():
        assert env == {
            "RANK": str(n),
            "LOCAL_RANK": str(n - 2),
            "WORLD_SIZE": "4",
            "LOCAL_WORLD_SIZE": "2",
            "GROUP_RANK": "1",
            "MASTER_ADDR": "10.0.0.7",
            "MASTER_PORT": "29411",
        }


def test_the_launcher_starts_ranks_without_importing_torch():
    """torchrun and `accelerate launch` import torch first: 3.4 s of every job here before its first rank starts."""
    imported = subprocess.run(
        [sys.executable, "-X", "importtime", LAUNCHER[1], "--help"], capture_output=True, text=True, timeout=60
    )
    assert imported.returncode == 0 and "usage: launch_ranks.py" in imported.stdout
    modules = {line.split("|")[-1].strip().split(".")[0] for line in imported.stderr.splitlines()}
    assert "yaml" in modules and not modules & {"torch", "accelerate", "numpy"}


def test_ranks_that_outlast_their_grace_are_killed_and_the_launcher_says_so(tmp_path):
    rank = script(tmp_path, "signal.signal(signal.SIGTERM, lambda *a: None)\nprint('up', flush=True)\ntime.sleep(60)")
    job = subprocess.Popen(
        ["env", "TORCH_ELASTIC_SHUTDOWN_TIMEOUT=1", *LAUNCHER, "--num_processes", "2", str(rank)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ups = ""
    for _ in range(4):  # both ranks up, their handlers set; their lines may interleave ("upup")
        ups += job.stdout.readline()
        if ups.count("up") == 2:
            break
    assert ups.count("up") == 2, ups
    started = time.monotonic()
    job.send_signal(signal.SIGTERM)
    _, err = job.communicate(timeout=30)
    assert job.returncode == 128 + signal.SIGTERM and time.monotonic() - started < 10
    assert (
        err.strip()
        .splitlines()[-1]
        .startswith("launch_ranks.py: stopped by SIGTERM; the ranks were killed after 1 s (their 1 s to save)")
    )
