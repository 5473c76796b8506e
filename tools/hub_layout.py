"""Re-save a checkpoint as transformers' own `save_pretrained` writes it: the layout its publisher uses.

For Nemotron-H that is the Hub's layout (`backbone.*`, one tensor per routed expert), as NVIDIA
publishes the card's Base. The weights pass through transformers alone (from_pretrained, then
save_pretrained of a model built from the config), so the result is a foreign checkpoint, not one
this project's writer made; the tokenizer and bundle files are copied beside it. Used to check that
the lineage trains from, and publishes in, the layout it is given.

    python tools/hub_layout.py results/embedded/models/dpo4 /tmp/stage1_hub
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))

from lineage.checkpoints.directory import copy_companion_files  # noqa: E402
from lineage.checkpoints.format import BUNDLE_FILES, TOKENIZER_FILES  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path, help="a checkpoint directory (any layout transformers reads)")
    parser.add_argument("target", type=Path, help="where to write the re-saved checkpoint (must not exist)")
    parser.add_argument("--max-shard-size", default="5GB", help="save_pretrained's shard size (default 5GB)")
    args = parser.parse_args(argv)
    if args.target.exists():
        parser.error(f"{args.target} exists; choose a new directory")
    from transformers import AutoConfig, AutoModelForCausalLM

    loaded = AutoModelForCausalLM.from_pretrained(args.source, use_safetensors=True)
    # A model built from its config (not from_pretrained) saves with transformers' default conversion
    # reverted: the layout the model type's checkpoints are published in.
    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(args.source), dtype=loaded.dtype)
    model.load_state_dict(loaded.state_dict())
    model.save_pretrained(args.target, max_shard_size=args.max_shard_size)
    copy_companion_files(args.source, args.target, (*TOKENIZER_FILES, *BUNDLE_FILES))
    print(f"wrote {args.target} in the layout transformers saves {model.config.model_type} in")
    return 0


if __name__ == "__main__":
    sys.exit(main())
