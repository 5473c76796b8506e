"""Which model a scale trains: the Base it builds (a named shape of lineage/modeling.py and its vocabulary), or the
checkpoint it is given (the Stage-1 checkpoint, else the Base to rebuild the chain from).

One answer for the config checks (expert parallelism, the memory fit) and the planner (tools/plan.py --scale).
Nothing here imports torch or transformers until a transformers config is asked for.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class TrainedModel:
    family: str | None  # the built Base's family (None: read it from the checkpoint)
    size: str | None  # its shape's name in lineage.modeling.SHAPES
    vocab: int | None  # its vocabulary rows: base.vocab_size, else the tokenizer's
    checkpoint: Path | None  # the given checkpoint's folder when the scale builds no Base

    @property
    def built(self) -> bool:
        return self.checkpoint is None

    def config_values(self) -> dict[str, Any] | None:
        """The model's config as plain values: the shape with its vocabulary, or the checkpoint's config.json
        (None when the shape is unknown or the checkpoint is not on disk here)."""
        if self.built:
            from lineage.modeling import SHAPES  # noqa: PLC0415 - imports transformers

            shape = SHAPES.get((self.family, self.size))
            return None if shape is None else {**shape, "vocab_size": self.vocab}
        config = self.checkpoint / "config.json"
        return json.loads(config.read_text()) if config.is_file() else None

    def config(self):
        """The transformers config (None where config_values is, or for a model type transformers does not know)."""
        values = self.config_values()
        if values is None:
            return None
        if self.built:
            from lineage.modeling import CONFIG_CLASSES  # noqa: PLC0415

            return CONFIG_CLASSES[self.family](**values)
        from transformers import AutoConfig  # noqa: PLC0415

        try:
            return AutoConfig.from_pretrained(self.checkpoint)  # a local folder: nothing is downloaded
        except ValueError:  # no model type transformers knows: the training job itself says so
            return None


def trained_model(settings: Mapping[str, Any], base: Path) -> TrainedModel:
    """The model of a scale's settings (`scales.<scale>` of the config); `base` resolves relative paths."""
    if settings["stage1"]["from"] != "external" and settings["base"]["build"]:
        shape = settings["base"]
        return TrainedModel(
            shape["family"], shape["model_size"], shape.get("vocab_size") or shape["tokenizer_vocab"], None
        )
    source = settings["stage1"]["path"] if settings["stage1"]["from"] == "external" else settings["base"]["path"]
    return TrainedModel(None, None, None, Path(base) / source)
