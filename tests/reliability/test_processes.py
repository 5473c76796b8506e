"""Training processes end with their job, one writer per state directory, and errors print as one line.

- A SIGKILL of the launching process group (what Snakemake's or Slurm's cancel sends) leaves no
  training rank behind (each rank dies with its launcher).
- A second writer of a run's state directory is refused, naming the holder.
- At a command line the project's errors are one line on stderr, no traceback, a code per kind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _training_fixtures import LAUNCHER, SCRIPTS, build_base, train_args
from battle_factory import battle, write_export
from workflow_helpers import REPO

from lineage.errors import EXIT_CODES, run_cli
from lineage.io import DiskFullError
from lineage.training.lifetime import StateLock, StateLockedError


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return build_base(tmp_path_factory.mktemp("processes"), family="llama")


def processes_with(marker: str) -> list[int]:
    """Pids whose command line holds `marker` (read from /proc, no tools needed)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_a_killed_process_group_leaves_no_training_rank_behind(base, tmp_path):
    marker = f"orphan-check-{os.getpid()}"
    out = tmp_path / marker
    args = train_args(base["base"], base["sft"], out, steps=400, lr=1e-4, **{"micro-batch-rows": 2})
    cmd = [*LAUNCHER, "--num_processes", "2", str(SCRIPTS / "train_sft.py"), *args]
    env = {**os.environ, "PYTHONPATH": str(SCRIPTS), "OMP_NUM_THREADS": "1"}
    job = subprocess.Popen(
        cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )  # a process group of its own, as a Snakemake job's shell
    metrics = out.parent / f"{out.name}.metrics.jsonl"
    deadline = time.time() + 120
    while not (metrics.is_file() and metrics.read_text().count("\n") >= 2):
        assert time.time() < deadline and job.poll() is None, "training did not start"
        time.sleep(0.5)
    ranks = [pid for pid in processes_with(marker) if pid != job.pid]
    assert len(ranks) >= 2, "the two ranks run beside the launcher"
    os.killpg(job.pid, signal.SIGKILL)
    job.wait(timeout=30)
    deadline = time.time() + 30
    while processes_with(marker) and time.time() < deadline:
        time.sleep(0.5)
    assert processes_with(marker) == [], "a training rank outlived its launcher"
    assert not out.exists(), "nothing was published after the job was killed"


def test_a_failed_rank_ends_the_job_log_with_its_one_line_error_and_its_code(base, tmp_path):
    """Two ranks diverge (NaN at step 2): the launcher exits 8 like the ranks, the log's last line is
    the trainer's error, and torch elastic's ChildFailedError traceback is not in it."""
    out = tmp_path / "diverged"
    args = train_args(base["base"], base["sft"], out, steps=6, lr=1e12, **{"micro-batch-rows": 2})
    env = {**os.environ, "PYTHONPATH": str(SCRIPTS), "OMP_NUM_THREADS": "1"}
    job = subprocess.run(
        [*LAUNCHER, "--num_processes", "2", str(SCRIPTS / "train_sft.py"), *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )
    log = job.stdout.strip().splitlines()
    assert job.returncode == EXIT_CODES["DivergedError"], job.stdout[-3000:]
    assert log[-1].startswith("train_sft.py: diverged error: step 2/6"), log[-5:]
    assert "Traceback" not in job.stdout and "ChildFailedError" not in job.stdout
    assert not out.exists()


def test_a_second_writer_of_a_state_directory_is_refused_naming_the_holder(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; sys.path.insert(0, sys.argv[1]);"
            "from lineage.training.lifetime import StateLock; lock = StateLock(sys.argv[2]).acquire();"
            "print('locked', flush=True); time.sleep(60)",
            str(SCRIPTS),
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(StateLockedError, match=rf'"pid": {holder.pid}.*before starting another writer'):
            StateLock(tmp_path).acquire()
    finally:
        holder.kill()
        holder.wait()
    StateLock(tmp_path).acquire().release()  # the kernel released it with its holder


def test_the_trainer_refuses_a_state_directory_in_use(base, tmp_path):
    import train_sft

    lock = StateLock(tmp_path / "state").acquire()
    try:
        args = train_args(base["base"], base["sft"], tmp_path / "out", state_dir=tmp_path / "state", save_every=2)
        code = run_cli(lambda: train_sft.main(*train_sft.parse_args(args)), prog="train_sft.py")
    finally:
        lock.release()
    assert code == EXIT_CODES["StateLockedError"] and not (tmp_path / "out").exists()


def run_script(script: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(SCRIPTS)}
    return subprocess.run(
        [sys.executable, str(SCRIPTS / script), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )


def test_a_missing_input_is_one_line_with_the_data_code(tmp_path):
    run = run_script(
        "read_battles.py",
        "--export",
        str(tmp_path / "none.jsonl"),
        "--out",
        str(tmp_path / "o"),
        "--quarantine",
        str(tmp_path / "q"),
    )
    assert run.returncode == 3 and "Traceback" not in run.stderr
    assert run.stderr.strip().count("\n") == 0 and "none.jsonl" in run.stderr


def test_a_damaged_checkpoint_in_eval_is_one_line_with_the_integrity_code(base, tmp_path):
    import shutil

    damaged = tmp_path / "damaged"
    shutil.copytree(base["base"], damaged)
    shard = next(damaged.glob("*.safetensors"))
    shard.write_bytes(shard.read_bytes()[:-16] + b"\0" * 16)
    items = REPO / "resources/sample/eval/mmlu.jsonl"
    run = run_script(
        "eval_model.py",
        "--model",
        str(damaged),
        "--items",
        f"mmlu={items}",
        "--sizes",
        "mmlu=2,2",
        "--parts",
        "mmlu_A",
        "--out-dir",
        str(tmp_path / "eval"),
        "--device",
        "cpu",
    )
    assert run.returncode == 5, run.stderr[-2000:]
    assert "Traceback" not in run.stderr and shard.name in run.stderr


def test_a_full_disk_is_one_line_with_the_disk_code(tmp_path, monkeypatch, capsys):
    import read_battles

    def full(path, rows):
        raise DiskFullError(Path(path), OSError(28, "No space left on device"))

    monkeypatch.setattr(read_battles, "write_jsonl", full)
    export = write_export(tmp_path / "export.jsonl", [battle()])
    code = run_cli(
        lambda: read_battles.main(
            ["--export", str(export), "--out", str(tmp_path / "o.jsonl"), "--quarantine", str(tmp_path / "q.jsonl")]
        ),
        prog="read_battles.py",
    )
    err = capsys.readouterr().err
    assert code == 6 and err.startswith("read_battles.py: disk error: ") and "No space left" in err
