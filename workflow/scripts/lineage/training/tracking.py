"""Experiment trackers: rank 0 sends each step's numbers (and the validation loss) to the ones the user names.

The step line and metrics.jsonl stay the record the workflow reads; trackers are for people who
already watch runs in TensorBoard, trackio, W&B or MLflow. The shipped default is TensorBoard
event files under the scale's log folder (`logs/<scale>/tracking/<run>/`), which need no account
and no network; `wandb`, `mlflow` and `trackio` are imported only when named.

Each tracker is a few lines over its library's documented calls (the calls accelerate's trackers
make), not accelerate.tracking itself: those log through accelerate.logging, which refuses to run
without an accelerate PartialState, and starting one inside the trainers' own process groups would
re-read `accelerate launch`'s environment (device, FSDP plugin flags) as a second owner of the
distributed state. The names are those TRL's `report_to` takes, so a TRL user names the same
things here. Only rank 0 builds trackers. TensorBoard files are written by tensorboardX (pinned: a
small package, where tensorboard brings grpcio and a web server; `tensorboard --logdir` reads them).

Nothing here touches the weights: the workflow passes these settings untracked (rules/runs.smk),
so naming another tracker or moving the folder reruns nothing.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# tracker name -> (module that must import, what to install)
TRACKERS = {
    "tensorboard": (("tensorboardX",), "tensorboardX (pinned in requirements.txt)"),
    "trackio": (("trackio",), "trackio"),
    "wandb": (("wandb",), "wandb"),
    "mlflow": (("mlflow",), "mlflow (or mlflow-skinny)"),
}


class TrackerError(RuntimeError):
    """A named tracker could not start: the run stops before its first step (exit code 7)."""


def _importable(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def tracker_names(text: str) -> tuple[str, ...]:
    """`--report-to`'s comma-separated names ("none" or "" for none), each checked to be usable here."""
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip() and n.strip() != "none"))
    for name in names:
        if name not in TRACKERS:
            raise ValueError(f"unknown tracker {name!r}; name any of {', '.join(TRACKERS)} (or none)")
        modules, install = TRACKERS[name]
        if not any(_importable(m) for m in modules):
            raise ValueError(
                f"{name} is named but not installed in this environment: pip install {install}, "
                f"or leave {name} out of scales.<scale>.train.report_to"
            )
    return names


class _TensorBoard:
    def __init__(self, project: str, run: str, folder: Path, start_step: int):
        from tensorboardX import SummaryWriter

        # purge_step: a resumed or retrained run replaces, in TensorBoard's view, the steps it logs again
        self.writer = SummaryWriter(str(folder / run), purge_step=start_step + 1)

    def config(self, values: dict[str, Any]) -> None:
        self.writer.add_text("recipe", "\n".join(f"    {k}: {v}" for k, v in values.items()), 0)

    def log(self, values: dict[str, float], step: int) -> None:
        for key, value in values.items():
            self.writer.add_scalar(key, value, global_step=step)
        self.writer.flush()

    def finish(self) -> None:
        self.writer.close()


class _WandB:  # WANDB_MODE=offline keeps the run under <folder>/wandb for `wandb sync`
    def __init__(self, project: str, run: str, folder: Path, start_step: int):
        import wandb

        self.run = wandb.init(project=project, name=run, dir=str(folder))

    def config(self, values: dict[str, Any]) -> None:
        self.run.config.update(values, allow_val_change=True)

    def log(self, values: dict[str, float], step: int) -> None:
        self.run.log(values, step=step)

    def finish(self) -> None:
        self.run.finish()


class _MLflow:
    """MLFLOW_TRACKING_URI (a server, sqlite:///...) where set; else the local file store <folder>/mlruns, which
    MLflow 3 keeps in maintenance mode and refuses unless opted in: its database backend needs sqlalchemy and
    alembic, which mlflow-skinny (the install that keeps this project's pins) does not bring."""

    def __init__(self, project: str, run: str, folder: Path, start_step: int):
        import os

        import mlflow

        self.mlflow = mlflow
        uri = os.environ.get("MLFLOW_TRACKING_URI")
        if not uri:
            os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
            uri = (folder / "mlruns").resolve().as_uri()
        mlflow.set_tracking_uri(uri)
        mlflow.set_experiment(project)
        mlflow.start_run(run_name=run)

    def config(self, values: dict[str, Any]) -> None:
        self.mlflow.log_params(values)

    def log(self, values: dict[str, float], step: int) -> None:
        self.mlflow.log_metrics({k.replace("/", "_"): v for k, v in values.items()}, step=step)

    def finish(self) -> None:
        self.mlflow.end_run()


class _Trackio:  # local-first: the run lands in trackio's local database, `trackio show` serves it
    def __init__(self, project: str, run: str, folder: Path, start_step: int):
        import trackio

        self.trackio = trackio
        trackio.init(project=project, name=run)

    def config(self, values: dict[str, Any]) -> None:
        self.trackio.config.update(values, allow_val_change=True)

    def log(self, values: dict[str, float], step: int) -> None:
        self.trackio.log(values, step=step)

    def finish(self) -> None:
        self.trackio.finish()


WRITERS = {"tensorboard": _TensorBoard, "trackio": _Trackio, "wandb": _WandB, "mlflow": _MLflow}


def hyperparameters(recipe) -> dict[str, Any]:
    """The recipe as the flat scalars every tracker accepts (tuples as text)."""
    values = dataclasses.asdict(recipe) if dataclasses.is_dataclass(recipe) else dict(recipe)
    return {k: v if isinstance(v, (bool, int, float, str)) or v is None else str(v) for k, v in values.items()}


def tracked(record: dict[str, Any]) -> dict[str, Any]:
    """A metrics.jsonl record as tracker scalars, in TRL's names: `eval/loss` for the validation loss,
    `train/<name>` for the rest."""
    out = {}
    for key, value in record.items():
        if key == "step" or not isinstance(value, (int, float)):
            continue
        out["eval/loss" if key == "val_loss" else f"eval/{key[4:]}" if key.startswith("val_") else f"train/{key}"] = (
            value
        )
    return out


class Trackers:
    """The trackers of one run on rank 0 (an instance with none does nothing: the other ranks hold one)."""

    def __init__(self, trackers: Sequence = ()):
        self.trackers = list(trackers)

    @classmethod
    def start(
        cls,
        names: Sequence[str],
        *,
        folder: Path | None,
        project: str,
        run: str,
        config: Mapping[str, Any],
        start_step: int,
        enabled: bool,
    ) -> Trackers:
        if not enabled or not names:
            return cls()
        if folder is None:
            raise ValueError(f"--report-to {','.join(names)} needs --tracking-dir (a folder outside --out)")
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        started = []
        for name in names:
            try:
                tracker = WRITERS[name](project, run, folder, start_step)
                tracker.config(dict(config))
            except Exception as error:  # a tracker library's own refusal (a store, a login): before any step
                for other in started:
                    other.finish()
                first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                raise TrackerError(
                    f"tracker {name} did not start ({type(error).__name__}: {first}); fix that, or leave {name} out "
                    "of scales.<scale>.train.report_to (--report-to)"
                ) from None
            started.append(tracker)
        return cls(started)

    def log(self, values: Mapping[str, float | None], step: int) -> None:
        """Send the finite numbers of `values` at `step` (None, NaN and inf are left out: trackers differ on them)."""
        scalars = {k: float(v) for k, v in values.items() if v is not None and math.isfinite(v)}
        for tracker in self.trackers:
            tracker.log(scalars, step)

    def finish(self) -> None:
        for tracker in self.trackers:
            tracker.finish()
        self.trackers = []
