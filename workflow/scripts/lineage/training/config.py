"""The command-line flags that SFT and DPO share, and the recipe that lineage.json records.

The recipe is every hyperparameter (not where files go or how often state is saved). Its hash,
less the flags that change the result only by float rounding (micro-batch split, activation
checkpointing, packing, chunked cross-entropy, compilation), decides whether a saved state may be resumed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from lineage.chat import TRUNCATION_MODES
from lineage.io import sha256_json
from lineage.training.fsdp import PRECISIONS
from lineage.training.optim import SCHEDULES

# Where things go and how the run reports: not part of the recipe.
NOT_RECIPE = {
    "init",
    "data",
    "out",
    "state_dir",
    "run",
    "save_every",
    "keep_states",
    "metrics",
    "lineage_extra",
    "device",
    "peak_flops",
}
# Part of the recipe, but a state saved under one value may be resumed under another.
RESUMABLE_ACROSS = {
    "micro_batch_rows",
    "activation_checkpointing",
    "packing",
    "pack_tokens",
    "packed_attention",
    "ce_chunk_tokens",
    "compile",
}


def betas(text: str) -> tuple[float, float]:
    try:
        b1, b2 = (float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected two comma-separated floats like 0.9,0.999, got {text!r}") from None
    return b1, b2


def json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"--lineage-extra is not valid JSON ({err.msg}): {text!r}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"--lineage-extra must be a JSON object, got {type(value).__name__}")
    return value


def add_training_args(parser: argparse.ArgumentParser, *, lr: float) -> argparse.ArgumentParser:
    # Inputs and outputs
    parser.add_argument(
        "--init", type=Path, required=True, help="parent checkpoint (verified against its lineage.json)"
    )
    parser.add_argument("--data", action="append", required=True, help="JSONL training file (repeatable)")
    parser.add_argument("--out", type=Path, required=True, help="output checkpoint directory (written atomically)")
    parser.add_argument(
        "--state-dir",
        type=Path,
        default=None,
        help="resumable state, outside --out (empty = no state saved or resumed)",
    )
    parser.add_argument("--run", default=None, help="run name in lineage.json (default: the --out folder name)")
    parser.add_argument("--metrics", type=Path, default=None, help="metrics.jsonl, one JSON line per step")
    parser.add_argument("--lineage-extra", type=json_object, default={}, help="JSON object merged into lineage.json")
    # Optimization
    parser.add_argument("--lr", type=float, default=lr, help="peak learning rate")
    parser.add_argument("--schedule", choices=SCHEDULES, default="cosine")
    parser.add_argument("--warmup-steps", type=int, default=0, help="linear warmup steps (0 = none)")
    parser.add_argument(
        "--min-lr-ratio", type=float, default=0.0, help="lr at the end of the decay, as a share of --lr"
    )
    parser.add_argument("--steps", type=int, required=True, help="optimizer steps")
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--adam-betas", type=betas, default=(0.9, 0.999), help="beta1,beta2")
    parser.add_argument("--adam-eps", type=float, default=1e-8)
    parser.add_argument("--grad-clip", type=float, default=1.0, help="max global grad norm (0 = no clipping)")
    parser.add_argument("--seed", type=int, default=0, help="data order seed")
    # Batch
    parser.add_argument(
        "--global-batch-rows", type=int, default=512, help="rows per optimizer step, all ranks together"
    )
    parser.add_argument("--micro-batch-rows", type=int, default=1, help="rows per forward/backward on one rank")
    parser.add_argument("--max-length", type=int, default=4096, help="tokens per row")
    parser.add_argument(
        "--truncation",
        choices=TRUNCATION_MODES,
        default="drop",
        help="rows longer than --max-length: drop them or cut them (counts are printed)",
    )
    # Runtime
    parser.add_argument(
        "--precision",
        choices=sorted(PRECISIONS),
        default="bf16",
        help="bf16: bf16 compute, fp32 master weights and reductions; fp32: everything fp32",
    )
    parser.add_argument(
        "--activation-checkpointing", action="store_true", help="recompute block activations in backward"
    )
    parser.add_argument("--save-every", type=int, default=0, help="write resumable state every k steps (0 = never)")
    parser.add_argument("--keep-states", type=int, default=2, help="resumable states to keep")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument(
        "--peak-flops",
        type=float,
        default=None,
        help="peak FLOP/s per device for MFU (default: table for H100/H200/A100; n/a on CPU)",
    )
    return parser


def check_args(args: argparse.Namespace) -> None:
    if args.steps < 1:
        raise ValueError(f"--steps must be at least 1, got {args.steps}")
    if args.save_every and args.state_dir is None:
        raise ValueError("--save-every needs --state-dir (a folder outside --out for the resumable state)")
    if args.state_dir is not None and Path(args.state_dir).resolve().is_relative_to(Path(args.out).resolve()):
        raise ValueError(
            f"--state-dir {args.state_dir} is inside --out {args.out}; put it outside, since --out is replaced whole"
        )
    if args.warmup_steps < 0 or args.warmup_steps > args.steps:
        raise ValueError(f"--warmup-steps must be in [0, --steps={args.steps}], got {args.warmup_steps}")


def recipe(args: argparse.Namespace) -> dict[str, Any]:
    """Every result-changing flag, JSON-ready (lists, not tuples)."""
    return {
        key: list(value) if isinstance(value, tuple) else value
        for key, value in sorted(vars(args).items())
        if key not in NOT_RECIPE
    }


def recipe_hash(args: argparse.Namespace, data_records: list[dict[str, Any]], init_lineage: dict[str, Any]) -> str:
    """Identity of a training run for resume: recipe, data checksums and the parent's files."""
    fixed = {key: value for key, value in recipe(args).items() if key not in RESUMABLE_ACROSS}
    return sha256_json(
        {
            "recipe": fixed,
            "data": [r["sha256"] for r in data_records],
            "init": init_lineage.get("files") or init_lineage.get("root"),
        }
    )
