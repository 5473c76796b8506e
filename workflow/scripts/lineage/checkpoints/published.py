"""A model type's published layout: the tensor names and shapes `save_pretrained` writes for it.

transformers 5 holds some model types in an internal layout and converts at load (Nemotron-H: `model.*`, each
layer's experts merged into one 3-D tensor; published as `backbone.*`, one tensor per expert). `save_pretrained`
reverts that conversion, so the Hub, vLLM and SGLang only ever see the published names. A checkpoint this
workflow wrote in the internal layout (the embedded Base is built from a config, and children keep their
parent's layout) is published rewritten into the published one, shard by shard, by transformers' own reversal
(read, not copied, as lineage/checkpoints/layouts.py reads its conversion rules); one already in it is linked as it is.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from lineage.checkpoints.format import INDEX_NAME, index_bytes
from lineage.checkpoints.load import meta_model
from lineage.checkpoints.read import shard_files, weight_map


def needs_rewrite(directory: Path) -> bool:
    """Whether this checkpoint is in transformers' internal names where its model type publishes others."""
    from transformers.core_model_loading import revert_weight_conversion

    model = meta_model(directory)
    own = model.state_dict()  # meta tensors of the real shapes: the reversal splits them as it would the weights
    names = set(weight_map(directory))
    if not names <= set(own):  # not the internal layout: a published one (a Hub parent's, kept by its children)
        return False
    return set(revert_weight_conversion(model, {name: own[name] for name in names})) != names


def write_published(directory: Path, out: Path) -> list[str]:
    """Write the checkpoint's shards into `out` in the published layout, with their index; the file names written."""
    from safetensors.torch import load_file, save_file
    from transformers.core_model_loading import revert_weight_conversion

    model = meta_model(directory)
    names: dict[str, str] = {}
    written = []
    for shard in shard_files(directory):
        tensors = revert_weight_conversion(model, load_file(directory / shard))
        save_file({name: t.contiguous() for name, t in tensors.items()}, out / shard, metadata={"format": "pt"})
        os.chmod(out / shard, new_file_mode())  # safetensors creates its files 0o600: unreadable to others
        names |= dict.fromkeys(tensors, shard)
        written.append(shard)
    if (directory / INDEX_NAME).is_file():
        metadata = json.loads((directory / INDEX_NAME).read_text()).get("metadata", {})
        (out / INDEX_NAME).write_bytes(index_bytes(names, metadata))
        written.append(INDEX_NAME)
    return written


def new_file_mode() -> int:
    """The mode open() gives a new file here: 0o666 less the umask (what the bundle's other files have)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask
