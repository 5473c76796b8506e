"""Plot the training loss curves of the lineage's runs from their metrics.jsonl files.

One line per run (loss against optimizer step), so a reader of the audit report sees at a
glance that each run trained and how the doses compare.

Run as:
    python workflow/scripts/plot_loss_curves.py --metrics results/embedded/metrics/sftwF.jsonl \
        --metrics results/embedded/metrics/sftw2.jsonl --out loss_curves.png
"""

from __future__ import annotations

import sys

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from lineage.io import atomic_path, load_jsonl  # noqa: E402
from lineage.errors import run_cli  # noqa: E402


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metrics", action="append", required=True, help="metrics.jsonl of one run (repeatable)")
    parser.add_argument("--out", required=True, help="PNG to write")
    return parser.parse_args(argv)


def main(args) -> None:
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=120)
    for path in map(Path, args.metrics):
        rows = load_jsonl(path)
        ax.plot([r["step"] for r in rows], [r["loss"] for r in rows], label=path.stem, linewidth=1.4)
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("training loss (per trained token)")
    ax.set_title("Loss curves of the lineage's training runs")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_path(args.out) as tmp:
        fig.savefig(tmp, format="png")
    print(f"loss curves of {len(args.metrics)} runs -> {args.out}")


if __name__ == "__main__":
    sys.exit(run_cli(lambda: main(parse_args())))
