"""Publish a run as a Hub-ready model repository, written atomically to --out.

The checkpoint's files (hard links where the filesystem allows: no second copy of the weights),
without workflow files (.snakemake_timestamp); the weights in the names and shapes their model type is published in
(what save_pretrained writes, lineage/checkpoints/published.py: rewritten where the lineage trained in transformers'
internal layout, linked where it is already the published one); config.json naming its architecture (what
AutoConfig and the Hub's widgets read); system_prompt.txt exactly as training used it (stripped);
README.md, the model card (lineage/evaluation/card.py); lineage.json re-recorded for these files,
with where they were published from.

Run as: python workflow/scripts/publish.py --model results/embedded/models/soupF2 --meta '<json>' \
            --eval-table results/embedded/eval_table.md --result results/embedded/eval/soupF2/*.json \
            --out results/embedded/published/soupF2
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lineage.chat import SYSTEM_PROMPT_FILE, load_bundle  # noqa: E402
from lineage.checkpoints.directory import write_lineage  # noqa: E402
from lineage.checkpoints.format import CONFIG_NAME, LINEAGE_NAME  # noqa: E402
from lineage.checkpoints.published import needs_rewrite, write_published  # noqa: E402
from lineage.checkpoints.verify import verify_checkpoint  # noqa: E402
from lineage.cli import json_object  # noqa: E402
from lineage.errors import run_cli  # noqa: E402
from lineage.evaluation.card import card_text  # noqa: E402
from lineage.io import DataError, atomic_path  # noqa: E402

CARD_NAME = "README.md"
REWRITTEN = (CONFIG_NAME, SYSTEM_PROMPT_FILE, CARD_NAME)


def link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def architecture(config: dict) -> str:
    """The CausalLM class transformers builds for this model type."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    name = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(config.get("model_type"))
    if name is None:
        raise DataError(f"{CONFIG_NAME}: transformers has no causal LM for model_type {config.get('model_type')!r}")
    return name


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True, help="the run's checkpoint (verified first)")
    parser.add_argument(
        "--meta",
        type=json_object,
        required=True,
        help="the card's facts as JSON: name, summary, base_model, datasets, license, lineage, scale",
    )
    parser.add_argument("--eval-table", type=Path, required=True, help="the eval table (Markdown)")
    parser.add_argument("--result", nargs="+", action="extend", required=True, help="the run's result JSONs")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    lineage = verify_checkpoint(args.model)
    results = [json.loads(Path(p).read_text()) for p in args.result]
    config = json.loads((args.model / CONFIG_NAME).read_text())
    config["architectures"] = config.get("architectures") or [architecture(config)]
    system_prompt = load_bundle(args.model).system_prompt
    with atomic_path(args.out) as out:
        out.mkdir()
        converted = write_published(args.model, out) if needs_rewrite(args.model) else []
        rewritten = [*REWRITTEN, *converted]
        for name in sorted(lineage.get("files", {})):
            if name not in rewritten:
                (out / name).parent.mkdir(parents=True, exist_ok=True)
                link_or_copy(args.model / name, out / name)
        (out / CONFIG_NAME).write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
        (out / SYSTEM_PROMPT_FILE).write_text(system_prompt, encoding="utf-8")
        (out / CARD_NAME).write_text(
            card_text(args.meta, results, args.eval_table.read_text(), system_prompt), encoding="utf-8"
        )
        record = {key: value for key, value in lineage.items() if key not in ("files", "file_stats")}
        record["published_from"] = {
            "directory": str(args.model),
            "lineage_files": lineage.get("files", {}),
            "rewritten": rewritten,
        }
        known = {name: digest for name, digest in lineage.get("files", {}).items() if name not in rewritten}
        write_lineage(out, record, known_sha256=known)
    layout = f"weights rewritten into the published layout ({len(converted)} files)" if converted else "weights linked"
    print(
        f"published {args.model} -> {args.out} ({len(lineage.get('files', {}))} files, {layout}; {LINEAGE_NAME} re-recorded)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
