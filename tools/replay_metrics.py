"""Send a built run's step metrics to trackers without retraining it.

Naming a tracker in `scales.<scale>.train.report_to` reruns nothing (a tracker never changes the
weights), so a run built before holds no tracker run. Its rank 0 wrote every step's numbers to
results/<scale>/metrics/<run>.jsonl; this sends them as the run would have: the same names
(`train/<name>`, `eval/loss`), the same steps, the recipe from its lineage.json as the config, into
logs/<scale>/tracking/ under the same project name.

Run as:
    python tools/replay_metrics.py sftw2 --report-to wandb            # WANDB_MODE=offline keeps it local
    python tools/replay_metrics.py sftw2 sftw4 --report-to tensorboard,mlflow --scale gpu
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow" / "scripts"))

from lineage.training.tracking import Trackers, hyperparameters, tracked, tracker_names  # noqa: E402


def replay(run: str, scale: str, names: tuple[str, ...], root: Path = REPO) -> int:
    """Send `run`'s metrics to the trackers `names`; return the number of steps sent."""
    metrics = root / "results" / scale / "metrics" / f"{run}.jsonl"
    lineage = root / "results" / scale / "models" / run / "lineage.json"
    if not metrics.is_file():
        raise SystemExit(f"{metrics}: no metrics for run {run!r} at scale {scale}; build it first (snakemake {run})")
    records = [json.loads(line) for line in metrics.read_text().splitlines() if line.strip()]
    recipe = json.loads(lineage.read_text()).get("recipe", {}) if lineage.is_file() else {}
    trackers = Trackers.start(
        names,
        folder=root / "logs" / scale / "tracking",
        project=f"ember-lineage-{scale}",
        run=run,
        config=hyperparameters(recipe),
        start_step=0,
        enabled=True,
    )
    try:
        for record in records:
            trackers.log(tracked(record), record["step"])
    finally:
        trackers.finish()
    return len(records)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="run names (config.yaml's runs)")
    parser.add_argument(
        "--report-to", required=True, help="comma-separated trackers: tensorboard, trackio, wandb, mlflow"
    )
    parser.add_argument("--scale", default="embedded")
    args = parser.parse_args(argv)
    try:
        names = tracker_names(args.report_to)
    except ValueError as error:
        parser.error(str(error))
    for run in args.runs:
        print(f"{run}: {replay(run, args.scale, names)} steps sent to {', '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
