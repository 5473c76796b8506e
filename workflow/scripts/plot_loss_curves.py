"""Plot the training loss curves of the lineage's runs from their metrics.jsonl files.

One panel per objective, since their losses live on different scales (SFT: cross-entropy per
trained token, ~1-6; DPO: the logistic preference loss, ~0.69 at the start); one line per run,
loss against optimizer step, the rejected runs (ablations) dashed. A reader of the audit report
sees at a glance that each run trained and how the doses compare.

Run as:
    python workflow/scripts/plot_loss_curves.py --sft results/embedded/metrics/sftwF.jsonl \
        --dpo results/embedded/metrics/dpo1.jsonl --rejected sftw_lr2em6 --out loss_curves.png
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from lineage.errors import run_cli  # noqa: E402
from lineage.io import atomic_path, load_jsonl  # noqa: E402

OBJECTIVES = {"sft": "SFT: cross-entropy per trained token", "dpo": "DPO: preference loss (log 2 = 0.693 at start)"}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for kind in OBJECTIVES:
        parser.add_argument(
            f"--{kind}", action="append", default=[], help=f"metrics.jsonl of one {kind} run (repeatable)"
        )
    parser.add_argument("--rejected", action="append", default=[], help="a run that was tried and rejected (dashed)")
    parser.add_argument("--out", required=True, help="PNG to write")
    args = parser.parse_args(argv)
    if not any(getattr(args, kind) for kind in OBJECTIVES):
        parser.error("give at least one --sft or --dpo metrics file")
    return args


def main(args) -> None:
    kinds = [kind for kind in OBJECTIVES if getattr(args, kind)]
    fig, axes = plt.subplots(1, len(kinds), figsize=(7.5 * len(kinds), 4.8), dpi=120, squeeze=False)
    for ax, kind in zip(axes.flat, kinds):
        for path in map(Path, getattr(args, kind)):
            rows = load_jsonl(path)
            rejected = path.stem in args.rejected
            ax.plot(
                [r["step"] for r in rows],
                [r["loss"] for r in rows],
                linewidth=1.0 if rejected else 1.6,
                linestyle="--" if rejected else "-",
                label=f"{path.stem}{' (rejected)' if rejected else ''}",
            )
        ax.set_title(f"{OBJECTIVES[kind]} ({len(getattr(args, kind))} runs)", fontsize=10)
        ax.set_xlabel("optimizer step")
        ax.set_ylabel("training loss")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    with atomic_path(args.out) as tmp:
        fig.savefig(tmp, format="png")
    counts = ", ".join(f"{len(getattr(args, kind))} {kind}" for kind in kinds)
    print(f"loss curves of {counts} runs -> {args.out}")


if __name__ == "__main__":
    sys.exit(run_cli(lambda: main(parse_args())))
