"""A training run killed mid-run resumes to the very weights and loss curve of an uninterrupted run.

Slurm preempts with SIGTERM to every process of the job, then SIGKILL. SIGTERM: the trainer
finishes its step, saves its state and exits 143. SIGKILL: nothing can be saved, and the
rerun resumes from the last periodic state. Both are sent here to real training processes
(one rank, and two FSDP ranks under `accelerate launch`), on CPU. A SIGKILL needs no
agreement between ranks, so it is sent to one rank only.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from _training_fixtures import LAUNCHER, REPO, SCRIPTS, build_base, losses, process_family, train_args, weights

from lineage.training.preemption import PREEMPTED_EXIT_CODE
from lineage.training.state import complete_states

STEPS = 24


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return build_base(tmp_path_factory.mktemp("preempt"))


def options(root: Path, **overrides):
    return dict(
        steps=STEPS,
        state_dir=root / "state",
        save_every=4,
        keep_states=2,
        global_batch_rows=4,
        micro_batch_rows=2,
        **overrides,
    )


@pytest.fixture(scope="module")
def straight_runs(base):
    """References: the same recipe run straight through, once per world size (built on first use)."""
    built: dict[int, Path] = {}

    def reference(processes: int) -> Path:
        if processes not in built:
            root = base["base"].parent / f"straight-{processes}"
            proc = start(train_args(base["base"], base["sft"], root / "out", **options(root)), processes)
            output, _ = proc.communicate(timeout=600)
            assert proc.returncode == 0, output[-3000:]
            built[processes] = root
        return built[processes]

    return reference


def start(args: list[str], processes: int) -> subprocess.Popen:
    script = str(SCRIPTS / "train_sft.py")
    launcher = [*LAUNCHER, "--num_processes", str(processes)] if processes > 1 else [sys.executable]
    env = {**os.environ, "PYTHONPATH": str(SCRIPTS), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        [*launcher, script, *args], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def signal_job(pid: int, sig: signal.Signals) -> None:
    """Signal a process and all its descendants at once, as Slurm signals every process of a job."""
    for member in process_family(pid):
        try:
            os.kill(member, sig)
        except ProcessLookupError:
            pass


def wait_for_step(proc: subprocess.Popen, metrics: Path, step: int, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if metrics.is_file():
            done = [json.loads(line)["step"] for line in metrics.read_text().splitlines() if line.endswith("}")]
            if done and max(done) >= step:
                return
        if proc.poll() is not None:
            pytest.fail(f"training exited ({proc.returncode}) before step {step}:\n{proc.stdout.read()[-3000:]}")
        time.sleep(0.005)
    pytest.fail(f"no step {step} within {timeout} s")


def wait_for_state(proc: subprocess.Popen, state: Path, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(state.glob("*/step_*/COMPLETE")):
            return
        if proc.poll() is not None:
            pytest.fail(
                f"training exited ({proc.returncode}) before a state was complete:\n{proc.stdout.read()[-3000:]}"
            )
        time.sleep(0.005)
    pytest.fail(f"no complete state within {timeout} s")


@pytest.mark.parametrize(
    "sig,processes",
    [
        (signal.SIGTERM, 1),
        (signal.SIGKILL, 1),
        pytest.param(signal.SIGTERM, 2, marks=pytest.mark.slow),  # the ranks must agree on where to stop
    ],
    ids=["SIGTERM-1rank", "SIGKILL-1rank", "SIGTERM-2ranks"],
)
def test_killed_run_resumes_to_identical_weights_and_curve(base, straight_runs, tmp_path, sig, processes):
    args = train_args(base["base"], base["sft"], tmp_path / "out", **options(tmp_path))
    proc = start(args, processes)
    # past the first periodic state (step 4's, written in the background while step 5 runs) once it is complete
    wait_for_step(proc, tmp_path / "out.metrics.jsonl", 5)
    wait_for_state(proc, tmp_path / "state")
    signal_job(proc.pid, sig)
    output, _ = proc.communicate(timeout=240)

    if sig == signal.SIGTERM:
        # The ranks exit 143, and so does the workflow's launcher (launch_ranks.py) of a signalled job.
        assert proc.returncode == PREEMPTED_EXIT_CODE, output[-3000:]
        assert "state saved to" in output and "rerun the same command to resume" in output
    else:
        assert proc.returncode in (-signal.SIGKILL, 128 + signal.SIGKILL), output[-3000:]
    assert not (tmp_path / "out").exists(), "no final checkpoint from an interrupted run"
    (recipe,) = [p for p in (tmp_path / "state").iterdir() if p.is_dir()]  # beside the lock file
    saved = complete_states(recipe)
    assert saved, "a complete state survives the kill"
    stopped_at = int(saved[-1].name.split("_")[1])
    assert 4 <= stopped_at < STEPS
    if sig == signal.SIGTERM:  # it saved exactly where it stopped, not only at the last periodic state
        logged = [json.loads(line)["step"] for line in (tmp_path / "out.metrics.jsonl").read_text().splitlines()]
        assert stopped_at == max(logged)

    rerun = start(args, processes)
    output, _ = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, output[-3000:]
    assert f"resumed from {saved[-1]}" in output
    straight = straight_runs(processes)
    expected, got = weights(straight / "out"), weights(tmp_path / "out")
    assert expected.keys() == got.keys()
    assert all(torch.equal(expected[name], got[name]) for name in expected), "weights differ from the straight run"
    assert losses(tmp_path / "out.metrics.jsonl") == losses(straight / "out.metrics.jsonl")
    assert not list(recipe.glob("step_*")), "the states are removed once the final checkpoint exists"


@pytest.mark.slow
def test_a_stop_gets_the_time_its_save_needs_from_the_launcher_the_rule_starts(base, straight_runs, tmp_path):
    """The training rule's launcher (lineage/workflow/cluster.py launch_command) waits STOP_GRACE_S for its ranks
    after a SIGTERM; torch elastic alone kills them 30 s after forwarding it. Here the stop's save takes 35 s: the
    state is complete, the launcher says where, and the rerun, which also removes a state cut off mid-write,
    resumes to the uninterrupted run's weights bit for bit."""
    from lineage.workflow.cluster import STOP_GRACE_S, Resources, launch_command

    args = train_args(base["base"], base["sft"], tmp_path / "out", **options(tmp_path))
    command = shlex.split(launch_command(1, 2, Resources(cpus=2, mem_mb=1, runtime=1), stop_grace=STOP_GRACE_S))
    assignments = [word for word in command if "=" in word and word.split("=")[0].isupper()]
    assert assignments == [f"TORCH_ELASTIC_SHUTDOWN_TIMEOUT={STOP_GRACE_S}"]
    env = {**os.environ, "PYTHONPATH": str(SCRIPTS), "OMP_NUM_THREADS": "1", "SLOW_SAVE_S": "35"}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env["PATH"]])  # `python`: as the rules run it
    launcher = subprocess.Popen(
        ["env", *command, str(Path(__file__).with_name("_slow_stop_save.py")), *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    wait_for_step(launcher, tmp_path / "out.metrics.jsonl", 5)
    os.kill(launcher.pid, signal.SIGTERM)  # the launcher alone: it forwards the signal to the ranks
    stopped = time.monotonic()
    output, _ = launcher.communicate(timeout=STOP_GRACE_S + 60)
    assert time.monotonic() - stopped > 35, output[-3000:]
    assert launcher.returncode == PREEMPTED_EXIT_CODE, output[-3000:]
    (recipe,) = [p for p in (tmp_path / "state").iterdir() if p.is_dir()]
    saved = complete_states(recipe)
    logged = [json.loads(line)["step"] for line in (tmp_path / "out.metrics.jsonl").read_text().splitlines()]
    assert saved and int(saved[-1].name.split("_")[1]) == max(logged), "the stop's own state, not a periodic one"
    last = output.rstrip().splitlines()[-1]
    assert "stopped by SIGTERM" in last and f"the newest complete state is {saved[-1]} " in last, output[-2000:]

    cut = recipe / ".step_999999.tmp"  # what a rank killed mid-save leaves
    cut.mkdir()
    rerun = start(args, 2)
    output, _ = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, output[-3000:]
    assert f"resumed from {saved[-1]}" in output and f"removing a state whose write was cut off: {cut}" in output
    assert not cut.exists()
    straight = straight_runs(2)
    expected, got = weights(straight / "out"), weights(tmp_path / "out")
    assert all(torch.equal(expected[name], got[name]) for name in expected), "weights differ from the straight run"
