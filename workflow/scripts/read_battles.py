"""Read the battle export, validate every row, and quarantine the rows that cannot be trusted.

Every row read is either kept or quarantined with its file, line, field and reason, so the
audit can account for all of them. If more than --max-quarantine-fraction of the rows are bad,
the export is most likely in another format and the stage fails instead of training on a
fraction of it. --strict fails on the first bad row.

Run as:
    python workflow/scripts/read_battles.py --export resources/sample/battles.jsonl --format native \
        --out results/data/battles.jsonl --quarantine results/data/quarantine_read.jsonl
    python workflow/scripts/read_battles.py --export arena.jsonl --format arena --our-model NAME ...
"""

from __future__ import annotations

import argparse
import sys

from lineage.cli import fraction, stage_main
from lineage.data.export import FORMATS, MAX_ANSWER_CHARS, check_quarantine_fraction, read_export
from lineage.errors import run_cli
from lineage.io import write_jsonl
from lineage.screening import control_tokens


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--export", required=True, help="the battle export (JSONL)")
    parser.add_argument("--format", choices=FORMATS, default="native", help="native rows or Chatbot Arena rows")
    parser.add_argument("--our-model", default=None, help="our model's name (required for --format arena)")
    parser.add_argument("--out", required=True, help="validated battles (JSONL)")
    parser.add_argument("--quarantine", required=True, help="bad rows, with reasons (JSONL)")
    parser.add_argument("--set-aside", default=None, help="sound rows without our model (arena), with reasons (JSONL)")
    parser.add_argument(
        "--control-token",
        action="append",
        default=[],
        metavar="TOKEN",
        help="a chat-template control token no content may hold (repeatable)",
    )
    parser.add_argument(
        "--control-tokens-from",
        action="append",
        default=[],
        metavar="DIR",
        help="a bundle or checkpoint directory whose chat-template markers and special tokens no "
        "content may hold (repeatable; the workflow passes the tokens themselves)",
    )
    parser.add_argument("--strict", action="store_true", help="fail on the first bad row instead of quarantining")
    parser.add_argument(
        "--max-quarantine-fraction", type=fraction, default=0.05, help="fail if more rows than this are bad"
    )
    parser.add_argument(
        "--max-answer-chars",
        type=int,
        default=MAX_ANSWER_CHARS,
        help="quarantine a battle with a longer answer (characters)",
    )


def run(args: argparse.Namespace) -> str:
    tokens = tuple(sorted({*args.control_token, *control_tokens(args.control_tokens_from)}))
    result = read_export(
        args.export,
        args.format,
        args.our_model,
        strict=args.strict,
        control_tokens=tokens,
        max_answer_chars=args.max_answer_chars,
    )
    check_quarantine_fraction(result, args.max_quarantine_fraction, args.export)
    write_jsonl(args.out, result.kept)
    write_jsonl(args.quarantine, result.quarantine)
    if args.set_aside:
        write_jsonl(args.set_aside, result.set_aside)
    votes = ", ".join(f"{vote} {n}" for vote, n in result.vote_counts().items())
    return (
        f"read_battles: {result.n_read} rows read from {args.export}: {len(result.kept)} kept ({votes}), "
        f"{len(result.quarantine)} quarantined, {len(result.set_aside)} set aside (not about our model)"
    )


main = stage_main(__doc__, arguments, run)

if __name__ == "__main__":
    sys.exit(run_cli(main, input_errors=(OSError,)))
