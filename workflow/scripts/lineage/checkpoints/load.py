"""Models from checkpoint directories: verified, from safetensors only, never running a checkpoint's code.

Also the two facts about a model that every writer and reader of its checkpoints needs: the model a
config.json describes, built on the meta device, and which parameters are second names of others
(tied embeddings: stored once, re-tied by transformers on load).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from lineage.checkpoints.verify import verify_checkpoint

if TYPE_CHECKING:
    import torch


def tied_aliases(model: torch.nn.Module) -> dict[str, str]:
    """{second name: first name} for parameters registered under two names (tied embeddings).

    safetensors refuses shared storage and transformers re-ties these on load, so the second names are
    left out of saved checkpoints and filled through the first when loading.
    """
    first: dict[int, str] = {}
    aliases = {}
    for name, param in model.named_parameters(remove_duplicate=False):
        if id(param) in first:
            aliases[name] = first[id(param)]
        else:
            first[id(param)] = name
    return aliases


def meta_model(directory: str | os.PathLike):
    """The model of a checkpoint's config.json, built on the meta device (no memory, no weights)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(directory)  # a local folder: nothing is downloaded
    with torch.device("meta"):
        return AutoModelForCausalLM.from_config(config)


def load_model(
    directory: str | os.PathLike,
    *,
    dtype: torch.dtype | None = None,
    device: str | torch.device = "cpu",
    trust_remote_code: bool = False,
    verify: bool = True,
):
    """Verify a checkpoint (unless the caller did: `verify=False`), then load it with transformers
    from safetensors only."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from lineage.modeling import prepare_kernels

    if verify:
        verify_checkpoint(directory)
    device = torch.device(device)
    prepare_kernels(AutoConfig.from_pretrained(directory), device)
    # straight onto a GPU: several ranks of one node would otherwise each hold the whole model in host memory
    placement = {"device_map": device} if device.type == "cuda" else {}
    model = AutoModelForCausalLM.from_pretrained(
        directory, dtype=dtype, use_safetensors=True, trust_remote_code=trust_remote_code, **placement
    )
    return model.to(device)
