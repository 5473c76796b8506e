"""Tiny, learnable chat data and a tiny base checkpoint for the training tests.

The rows are arithmetic questions with templated answers, so a 150k-parameter model lowers
its loss within a few steps. The base checkpoint is built the way the workflow builds it:
build_tokenizer.py on the rows, then init_model.py (both called in-process, no download).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "workflow" / "scripts"
ACCELERATE_CONFIG = REPO / "workflow" / "accelerate" / "fsdp2.yaml"
# What the workflow's training rules run (lineage/workflow/cluster.py LAUNCHER): launch_ranks.py, ending as the failed rank did.
LAUNCHER = [sys.executable, str(SCRIPTS / "launch_ranks.py"), "--config_file", str(ACCELERATE_CONFIG)]


def chat_rows(n: int, seed: int = 0) -> list[dict]:
    """Single- and multi-turn chats; every fifth brings its own system turn."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        a, b = rng.randint(1, 40), rng.randint(1, 40)
        messages = [
            {"role": "user", "content": f"What is {a} plus {b}?"},
            {"role": "assistant", "content": f"{a} plus {b} is {a + b}."},
        ]
        if i % 3 == 0:
            messages += [
                {"role": "user", "content": "And twice that?"},
                {"role": "assistant", "content": f"Twice that is {2 * (a + b)}."},
            ]
        if i % 5 == 0:
            messages.insert(0, {"role": "system", "content": "Answer with one sentence."})
        rows.append({"messages": messages})
    return rows


def preference_rows(n: int, seed: int = 1) -> list[dict]:
    """Pairs whose chosen answer is right and whose rejected answer is off by a few."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        a, b = rng.randint(1, 40), rng.randint(1, 40)
        rows.append(
            {
                "messages": [{"role": "user", "content": f"What is {a} plus {b}?"}],
                "chosen": f"{a} plus {b} is {a + b}.",
                "rejected": f"I think it is {a + b + rng.randint(1, 9)}, maybe.",
            }
        )
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@contextlib.contextmanager
def one_thread():
    """Run torch on one thread: on a few shared cores, more threads only wait on each other."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def build_base(root: Path, family: str = "nemotron_h", seed: int = 0) -> dict[str, Path]:
    """Rows, pairs, tokenizer and a random-init checkpoint under `root`."""
    import build_tokenizer
    import init_model

    sft = write_jsonl(root / "sft.jsonl", chat_rows(48))
    pairs = write_jsonl(root / "pairs.jsonl", preference_rows(8))
    build_tokenizer.main(
        build_tokenizer.parse_args(
            [
                "--corpus",
                str(sft),
                "--corpus",
                str(pairs),
                "--vocab-size",
                "512",
                "--bundle",
                str(REPO / "resources" / "bundle"),
                "--out",
                str(root / "tokenizer"),
            ]
        )
    )
    with one_thread():
        init_model.main(
            init_model.parse_args(
                [
                    "--family",
                    family,
                    "--size",
                    "tiny",
                    "--tokenizer",
                    str(root / "tokenizer"),
                    "--seed",
                    str(seed),
                    "--dtype",
                    "fp32",
                    "--run",
                    "base",
                    "--out",
                    str(root / "base"),
                ]
            )
        )
    return {"sft": sft, "pairs": pairs, "tokenizer": root / "tokenizer", "base": root / "base"}


def train_args(init: Path, data: Path, out: Path, **overrides) -> list[str]:
    """CLI arguments for train_sft.py / train_dpo.py with small defaults."""
    options = {
        "steps": 6,
        "lr": 3e-3,
        "global-batch-rows": 8,
        "micro-batch-rows": 4,
        "max-length": 256,
        "precision": "fp32",
        "seed": 0,
        "metrics": out.parent / f"{out.name}.metrics.jsonl",
    }
    options.update({key.replace("_", "-"): value for key, value in overrides.items()})
    args = ["--init", str(init), "--data", str(data), "--out", str(out)]
    for key, value in options.items():
        if value is True:
            args.append(f"--{key}")
        elif value is not None and value is not False:
            args += [f"--{key}", str(value)]
    return args


def run_in_process(script: str, args: list[str]) -> None:
    """Run a training script's main() here (one rank, in-process store): no interpreter start-up."""
    module = __import__(script)
    with one_thread():
        module.main(*module.parse_args(args))


def launch(script: str, args: list[str], processes: int, timeout: int = 300) -> subprocess.CompletedProcess:
    """Run a training script under the workflow's launcher and accelerate config (CPU: gloo)."""
    cmd = [
        *LAUNCHER,
        "--num_processes",
        str(processes),
        str(SCRIPTS / f"{script}.py"),
        *args,
    ]
    env = {**os.environ, "PYTHONPATH": str(SCRIPTS), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)
    if proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
        )
    return proc


def launch_async(
    script: str, args: list[str], processes: int, machines: tuple[int, int], main: tuple[str, int]
) -> subprocess.Popen:
    """One machine's launcher of a multi-machine run (machines: count, this one's rank;
    processes: all machines together), started and left running; stdout and stderr together."""
    count, rank = machines
    cmd = [
        *LAUNCHER,
        "--num_processes",
        str(processes),
        "--num_machines",
        str(count),
        "--machine_rank",
        str(rank),
        "--main_process_ip",
        main[0],
        "--main_process_port",
        str(main[1]),
        str(SCRIPTS / f"{script}.py"),
        *args,
    ]
    env = {**os.environ, "PYTHONPATH": str(SCRIPTS), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=REPO)


def process_family(pid: int) -> list[int]:
    """A process and all its descendants (the launcher's ranks run in sessions of their own, so
    killpg would miss them), read from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        children.setdefault(int(text[text.rindex(")") + 2 :].split()[1]), []).append(int(stat.parent.name))
    family, queue = [], [pid]
    while queue:
        family.append(current := queue.pop())
        queue += children.get(current, [])
    return family


def metrics(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def losses(path: Path) -> list[float]:
    return [m["loss"] for m in metrics(path)]


def weights(directory: Path) -> dict:
    """All tensors of a checkpoint (through the shared shard reader)."""
    from lineage.checkpoints.read import iter_shard_tensors, shard_files

    return {name: t for f in shard_files(directory) for name, t in iter_shard_tensors(directory / f)}
