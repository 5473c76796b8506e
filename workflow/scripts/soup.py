"""Average checkpoints that share one initialization into a model soup (docs/add-a-soup-method.md: the methods).

Every parent is verified against its lineage.json first; parents with another root, config,
tokenizer, chat template, system prompt or tensor layout are refused with what differs. The
soup is streamed tensor by tensor, accumulated in fp32 and written in the parents' dtype,
and appears at --out only when complete.

Run as:
    python workflow/scripts/soup.py --parent sftw2=results/embedded/runs/sftw2 \
        --parent sftw4=results/embedded/runs/sftw4 --run soup24 --out results/embedded/runs/soup24
    python workflow/scripts/soup.py --parent a=DIR_A --parent b=DIR_B --weights 0.7,0.3 --run soupX --out DIR
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from lineage.checkpoints.format import CheckpointError
from lineage.errors import exit_code, run_cli
from lineage.soup.checks import SoupError
from lineage.soup.methods import DEFAULT, METHODS
from lineage.soup.stream import VERIFY_MODES, make_soup

UNITS = {"": 1, "k": 1000, "m": 1000**2, "g": 1000**3, "kib": 1024, "mib": 1024**2, "gib": 1024**3}


def parse_parent(text: str) -> tuple[str, Path]:
    """NAME=DIR; a bare DIR is named after its directory."""
    name, sep, directory = text.partition("=")
    if not sep:
        name, directory = Path(text).name, text
    if not name or not directory:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=DIR, e.g. sftw2=results/embedded/runs/sftw2")
    return name, Path(directory)


def parse_weights(text: str) -> list[float]:
    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected comma-separated numbers, e.g. 0.5,0.5") from None


def parse_size(text: str) -> int:
    """Bytes, with an optional unit: 500M, 2G (powers of 1000) or 512MiB, 1GiB (powers of 1024)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmg](?:ib)?)?b?\s*", text.lower())
    if not match or float(match[1]) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a positive size such as 1073741824, 500M or 1GiB")
    return int(float(match[1]) * UNITS[match[2] or ""])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--parent",
        action="append",
        type=parse_parent,
        required=True,
        metavar="NAME=DIR",
        help="a checkpoint to average; give two or more (the first supplies config, tokenizer, bundle)",
    )
    parser.add_argument(
        "--method",
        choices=sorted(METHODS),
        default=DEFAULT,
        help="how parents are combined (lineage/soup/methods.py; default %(default)s)",
    )
    parser.add_argument(
        "--weights",
        type=parse_weights,
        default=None,
        metavar="W1,W2,...",
        help="weights in --parent order (default equal); they must sum to 1",
    )
    parser.add_argument(
        "--allow-unnormalized",
        action="store_true",
        help="accept weights that do not sum to 1 or are negative (scales or extrapolates the model)",
    )
    parser.add_argument("--run", required=True, help="run name recorded in lineage.json")
    parser.add_argument("--out", required=True, type=Path, help="output checkpoint directory (replaced when complete)")
    parser.add_argument(
        "--max-shard-bytes",
        type=parse_size,
        default=1024**3,
        metavar="SIZE",
        help="size bound of each output shard: bytes, 500M or 1GiB (default 1GiB); memory use does not depend on it",
    )
    parser.add_argument(
        "--verify",
        choices=VERIFY_MODES,
        default="stat",
        help="how parent shards are checked against the sha256 in their lineage.json: 'stat' "
        "(default) re-hashes only shards whose size or mtime changed since recorded; 'content' "
        "re-hashes every byte, which also catches silent corruption, at ~0.7 s per GB and core",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    args = parser.parse_args(argv)

    try:
        record = make_soup(
            args.parent,
            args.out,
            run=args.run,
            weights=args.weights,
            allow_unnormalized=args.allow_unnormalized,
            max_shard_bytes=args.max_shard_bytes,
            progress=False if args.no_progress else None,
            verify=args.verify,
            method=args.method,
            log=lambda message: print(message, file=sys.stderr),
        )
    except (SoupError, CheckpointError) as err:
        print(f"soup.py: refused: {err}", file=sys.stderr)
        return exit_code(err) or 1
    parents = ", ".join(f"{p['run']} x {p['weight']:g}" for p in record["parents"])
    print(
        f"{args.run}: {record['tensors']} tensors, {record['total_bytes'] / 1e9:.2f} GB from {parents} "
        f"(root {record['root']['run']}) in {record['wall_time_s']:.1f} s -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
