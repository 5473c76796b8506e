"""The command line of train_sft.py and train_dpo.py: where files go and how the run behaves, plus the recipe.

Everything here but the recipe (lineage/training/recipe.py) leaves the weights alone: paths,
how often state is saved, how progress is reported. So the workflow tracks the recipe, and these
flags can change between a run and its rerun without retraining anything.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lineage.cli import json_object
from lineage.io import sha256_json
from lineage.parallel_dims import SHARDINGS
from lineage.training.fsdp import ACCUMULATIONS
from lineage.training.python_gc import GC_MODES
from lineage.training.recipe import TrainRecipe, add_recipe_arguments, recipe_from_args
from lineage.training.tracking import TRACKERS, tracker_names


@dataclass(frozen=True)
class JobOptions:
    """A training job's command line but the recipe: where files go and how the job runs. The library
    reads it and never changes it; `extras` holds the flags a trainer adds of its own."""

    init: Path
    data: tuple[str, ...]
    out: Path
    state_dir: Path | None
    run: str | None
    metrics: Path | None
    lineage_extra: Mapping[str, Any]
    sharding: str
    accumulate: str
    expert_parallel: int
    save_every: int
    save_every_minutes: float
    keep_states: int
    device: str
    peak_flops: float | None
    python_gc: str
    report_to: tuple[str, ...] = ()
    tracking_dir: Path | None = None
    tracking_project: str = "ember-lineage"
    validation: Path | None = None
    validate_every: int = 0
    extras: Mapping[str, Any] = dataclasses.field(default_factory=dict)


def training_parser(description: str, cls: type[TrainRecipe]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    io = parser.add_argument_group("inputs and outputs")
    io.add_argument("--init", type=Path, required=True, help="parent checkpoint (verified against its lineage.json)")
    io.add_argument("--data", action="append", required=True, help="JSONL training file (repeatable)")
    io.add_argument("--out", type=Path, required=True, help="output checkpoint directory (written atomically)")
    io.add_argument(
        "--state-dir",
        type=Path,
        default=None,
        help="resumable state, outside --out (empty = no state saved or resumed)",
    )
    io.add_argument("--run", default=None, help="run name in lineage.json (default: the --out folder name)")
    io.add_argument("--metrics", type=Path, default=None, help="metrics.jsonl, one JSON line per step")
    io.add_argument(
        "--validation",
        type=Path,
        default=None,
        help="validation rows (JSONL): chat rows, or the holdout split's battle rows (their preferred answer)",
    )
    io.add_argument("--lineage-extra", type=json_object, default={}, help="JSON object merged into lineage.json")
    distributed = parser.add_argument_group("distributed (changes the weights by float rounding only)")
    distributed.add_argument(
        "--sharding",
        choices=SHARDINGS,
        default="full",
        help="full: shard over every rank; hybrid: shard within a node (LOCAL_WORLD_SIZE ranks), "
        "replicate across nodes",
    )
    distributed.add_argument(
        "--accumulate",
        choices=ACCUMULATIONS,
        default="sharded",
        help="sharded: weights resharded and gradients reduced after every micro-batch (least "
        "memory); unsharded: a step's micro-batches share one all-gather and one reduction, "
        "every rank holding all weights in bf16 and all gradients in fp32 meanwhile (faster "
        "where that fits, e.g. on one GPU)",
    )
    distributed.add_argument(
        "--expert-parallel",
        type=int,
        default=1,
        metavar="E",
        help="split each MoE layer's routed experts over E ranks of a node, tokens sent to "
        "them by all-to-all (1: FSDP shards the experts like every other weight)",
    )
    runtime = parser.add_argument_group("runtime (never changes the weights)")
    runtime.add_argument("--save-every", type=int, default=0, help="write resumable state every k steps (0 = never)")
    runtime.add_argument(
        "--save-every-minutes",
        type=float,
        default=0,
        help="write resumable state when this many minutes passed since the last (0 = by steps only); "
        "states are written in the background, never after the last step",
    )
    runtime.add_argument("--keep-states", type=int, default=2, help="resumable states to keep")
    runtime.add_argument(
        "--device",
        choices=("auto", "cpu", "cuda"),
        default="auto",
        help="cpu: gloo; cuda: nccl (auto: cuda when torch sees a GPU)",
    )
    runtime.add_argument(
        "--peak-flops",
        type=float,
        default=None,
        help="peak FLOP/s per device for MFU (default: table for H100/H200/A100; n/a on CPU)",
    )
    runtime.add_argument(
        "--python-gc",
        choices=GC_MODES,
        default="automatic",
        help="when Python's garbage collector runs: automatic (its own thresholds; on one GPU its passes cost "
        "~4 ms a step) or between-steps (after each optimizer step, setup's objects frozen, never inside a "
        "backward: for many ranks, where one rank's pause holds the others at the next collective)",
    )
    runtime.add_argument(
        "--validate-every",
        type=int,
        default=0,
        metavar="N",
        help="loss on the --validation rows every N optimizer steps and after the last (0 = never; eval mode, "
        "no gradients: the weights are those of a run without it)",
    )
    runtime.add_argument(
        "--report-to",
        type=_trackers,
        default=(),
        help=f"experiment trackers, comma-separated: {', '.join(TRACKERS)} or none (rank 0 sends the step's "
        "numbers; lineage/training/tracking.py)",
    )
    runtime.add_argument(
        "--tracking-dir", type=Path, default=None, help="where trackers write (TensorBoard: <dir>/<run>/events.*)"
    )
    runtime.add_argument(
        "--tracking-project", default="ember-lineage", help="project (W&B, trackio) or experiment (MLflow)"
    )
    add_recipe_arguments(parser, cls)
    return parser


def _trackers(text: str) -> tuple[str, ...]:
    try:
        return tracker_names(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def parse_training_args(
    parser: argparse.ArgumentParser, cls: type[TrainRecipe], argv: list[str] | None = None, extras: tuple[str, ...] = ()
) -> tuple[JobOptions, TrainRecipe]:
    """(job options, recipe); bad values end the program with the flag's name. `extras`: the dests of the
    flags the trainer added to `training_parser`'s."""
    args = parser.parse_args(argv)
    try:
        recipe = recipe_from_args(args, cls)
    except ValueError as err:
        parser.error(f"recipe: {err}")
    if (args.save_every or args.save_every_minutes) and args.state_dir is None:
        parser.error("--save-every and --save-every-minutes need --state-dir (a folder outside --out for the state)")
    if args.state_dir is not None and Path(args.state_dir).resolve().is_relative_to(Path(args.out).resolve()):
        parser.error(
            f"--state-dir {args.state_dir} is inside --out {args.out}; put it outside, since --out is replaced whole"
        )
    if args.validate_every < 0:
        parser.error("--validate-every must be 0 (never) or a positive number of steps")
    if args.validate_every and args.validation is None:
        parser.error("--validate-every needs --validation (the rows to score; the workflow passes the holdout split)")
    if args.tracking_dir is not None and Path(args.tracking_dir).resolve().is_relative_to(Path(args.out).resolve()):
        parser.error(
            f"--tracking-dir {args.tracking_dir} is inside --out {args.out}; put it outside (logs/<scale>/tracking)"
        )
    if args.report_to and args.tracking_dir is None:
        parser.error(f"--report-to {','.join(args.report_to)} needs --tracking-dir (a folder outside --out)")
    fields = {f.name for f in dataclasses.fields(JobOptions)} - {"extras", "data"}
    options = JobOptions(
        **{name: getattr(args, name) for name in fields},
        data=tuple(args.data),
        extras={name: getattr(args, name) for name in extras},
    )
    return options, recipe


def resume_hash(recipe: TrainRecipe, data_records: list[dict[str, Any]], init_lineage: dict[str, Any]) -> str:
    """Identity of a training run for resume: the recipe's RESUME_FIELDS, data checksums and the parent's files."""
    return sha256_json(
        {
            "recipe": recipe.resume_key(),
            "data": [r["sha256"] for r in data_records],
            "init": init_lineage.get("files") or init_lineage.get("root"),
        }
    )
