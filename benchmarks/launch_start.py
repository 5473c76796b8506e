"""How long a job waits for its ranks: the workflow's launcher against `accelerate launch` and `torchrun`.

Each launcher starts the same two-rank script, which records when it began; the figure is the time from the
launcher's own start to the last rank's start (what every training job pays before its first import), and the
launcher's whole run. CPU only; a GPU machine gives the same picture.

    python benchmarks/launch_start.py --repeats 7
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RANK = "import os, sys, time\nopen(os.path.join(sys.argv[1], os.environ['RANK']), 'w').write(repr(time.time()))\n"


def launchers(script: Path) -> dict[str, list[str]]:
    python = sys.executable
    found = {
        "launch_ranks.py (the workflow's)": [
            python,
            str(REPO / "workflow/scripts/launch_ranks.py"),
            "--config_file",
            str(REPO / "workflow/accelerate/fsdp2.yaml"),
            "--num_processes",
            "2",
        ],
        "accelerate launch": [python, "-m", "accelerate.commands.launch", "--num_processes", "2", "--multi_gpu"],
        "torchrun": [python, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", "0"],
    }
    return {name: [*command, str(script)] for name, command in found.items()}


def measure(command: list[str], repeats: int) -> tuple[list[float], list[float]]:
    to_ranks, whole = [], []
    for _ in range(repeats):
        marks = Path(tempfile.mkdtemp())
        started = time.time()
        subprocess.run(
            [*command, str(marks)], check=True, capture_output=True, env={**os.environ, "OMP_NUM_THREADS": "1"}
        )
        whole.append(time.time() - started)
        to_ranks.append(max(float(p.read_text()) for p in marks.iterdir()) - started)
        shutil.rmtree(marks)
    return to_ranks, whole


def spread(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="starts of each launcher")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        script = Path(scratch) / "rank.py"
        script.write_text(RANK)
        print(f"two ranks on CPU, {args.repeats} starts each; seconds min / median / max")
        print("| launcher | launcher start -> last rank started | whole run |")
        print("|---|---|---|")
        for name, command in launchers(script).items():
            to_ranks, whole = measure(command, args.repeats)
            print(f"| {name} | {spread(to_ranks)} | {spread(whole)} |")


if __name__ == "__main__":
    main()
