"""Acceptance rates of the verifier DPO rounds, per round and prompt type, as JSON and Markdown.

Run as: python workflow/scripts/verifier_audit.py results/embedded/data/verifier/*.json \
            --out-json results/embedded/data/verifier_audit.json --out-md results/embedded/data/verifier_audit.md
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lineage.errors import run_cli  # noqa: E402
from lineage.io import write_json, write_text  # noqa: E402

TYPE_NAMES = {"math": "math (GSM8K-style, final number)", "if": "instructions (IFEval checkers, strict)"}


def table(rounds: list[dict]) -> str:
    lines = [
        "# Verifier pairs",
        "",
        "Each round samples answers from the previous round's model on training-split prompts; an answer",
        "is verified when its checker passes. Pairs: a verified answer (chosen) with a failed one (rejected).",
        "",
        "| round | sampled by | prompts | type | samples | verified | acceptance | prompts with pairs | pairs |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for stats in rounds:
        model = Path(stats.get("model", "?")).name
        for kind, rates in [*stats["by_type"].items(), ("all", stats["total"])]:
            rate = "n/a" if rates["acceptance_rate"] is None else f"{rates['acceptance_rate']:.1%}"
            lines.append(
                f"| {stats['round']} | {model} | {rates['prompts']} | {TYPE_NAMES.get(kind, kind)} | {rates['samples']} "
                f"| {rates['verified']} | {rate} | {rates['prompts_with_pairs']} | {rates['pairs']} |"
            )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stats", nargs="+", help="verifier_pairs.py --stats files, in round order")
    parser.add_argument("--out-json", required=True)
    parser.add_argument("--out-md", required=True)
    args = parser.parse_args(argv)
    rounds = [json.loads(Path(path).read_text()) for path in args.stats]
    write_json(args.out_json, {"rounds": rounds})
    write_text(args.out_md, table(rounds))
    print(table(rounds))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
