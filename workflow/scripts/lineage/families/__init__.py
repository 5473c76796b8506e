"""The model families this project builds, trains, decodes and plans, one module each, and their registry.

A family module (nemotron_h.py, llama.py, ...) builds one `Family` (family.py): its shapes and config
class, its layer and cache types, its routed experts, what packed rows and the GPU kernels need, its
blocks' last products and the planner's layer kinds. The trainer, the decoders and the planner ask
this registry, never a class or model-type name. Adding a family is a module and a line in REGISTRY.

Part of the core: it imports no layer. Importing this package loads no torch or transformers (the
config schema reads `names()` when Snakemake starts); a family's module loads when it is asked for.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from lineage.families.family import Family

# family name (the config's base.family, the first key of a shape) -> its module
REGISTRY = {
    "nemotron_h": "lineage.families.nemotron_h",
    "llama": "lineage.families.llama",
    "qwen3_moe": "lineage.families.qwen3_moe",
}


class UnknownFamilyError(ValueError):
    """A family or model type that no module of lineage/families describes."""


def names() -> list[str]:
    """The registered families, in registry order."""
    return list(REGISTRY)


@cache
def get(name: str) -> Family:
    """The family called `name`."""
    if name not in REGISTRY:
        raise UnknownFamilyError(
            f"no model family {name!r}; known: {', '.join(REGISTRY)}. A new family is a module in "
            "lineage/families/ and its line in lineage/families/__init__.py REGISTRY"
        )
    _check_registered()
    return importlib.import_module(REGISTRY[name]).FAMILY


@cache
def _check_registered() -> None:
    """Refuse a family module of this folder that no REGISTRY line names. Listing the folder is also how the
    workflow's code tracking sees every family module in the import closure of the scripts that read the
    registry (lineage/workflow/codedeps.py), so an edit of one reruns the jobs it can change."""
    helpers = {"family", "card"}
    registered = {module.rsplit(".", 1)[-1] for module in REGISTRY.values()}
    unregistered = sorted({m.name for m in pkgutil.iter_modules(__path__)} - helpers - registered)
    if unregistered:
        raise UnknownFamilyError(
            f"lineage/families/{unregistered[0]}.py is not registered: add its line to REGISTRY in "
            "lineage/families/__init__.py"
        )


def every() -> list[Family]:
    """Every registered family, in registry order."""
    return [get(name) for name in REGISTRY]


def of_model_type(model_type: str | None) -> Family | None:
    """The family that describes checkpoints of this transformers model type (None: no family does)."""
    return next((family for family in every() if model_type in family.model_types), None)


def of_config(config) -> Family:
    """The family of a transformers config; refused, with the way to add one, for a type none describes."""
    model_type = getattr(config, "model_type", None)
    family = of_model_type(model_type)
    if family is None:
        raise UnknownFamilyError(
            f"no model family describes model type {model_type!r} (known: {', '.join(model_types())}); "
            "describe it in a module of lineage/families/ and register it there"
        )
    return family


def of_block(block: torch.nn.Module) -> Family | None:
    """The family whose decoder layer `block` is (None for a module no family builds)."""
    return next((family for family in every() if isinstance(block, family.block_types())), None)


@cache
def model_types() -> tuple[str, ...]:
    """Every model type a family describes."""
    return tuple(model_type for family in every() for model_type in family.model_types)


def expert_modules(module: torch.nn.Module) -> list[torch.nn.Module]:
    """The routed-expert modules under `module` (a model or a block): instances of a family's expert classes
    whose weights are fused 3-D tensors (one slice per expert)."""
    kinds = _expert_types()
    return [
        m for m in module.modules() if isinstance(m, kinds) and any(p.dim() == 3 for p in m.parameters(recurse=False))
    ]


@cache
def _expert_types() -> tuple[type, ...]:
    return tuple(kind for family in every() for kind in family.expert_types())


@cache
def expert_count_keys() -> tuple[str, ...]:
    """The config keys that hold a MoE layer's routed experts, one per family that has them."""
    return tuple(dict.fromkeys(f.expert_count_key for f in every() if f.expert_count_key))


@cache
def eager_mixers() -> tuple[type, ...]:
    """Mixer classes whose forward calls kernels torch.compile cannot trace (lineage/training/compiling.py)."""
    return tuple(kind for family in every() for kind in family.eager_mixer_types())


@cache
def layer_caches() -> dict[str, str | None]:
    """What each layer type (config.layer_types, as transformers names them) keeps while decoding, over every
    family: "keys" (attention: keys and values, read through a mask), "state" (a recurrent state), None."""
    merged: dict[str, str | None] = {}
    for family in every():
        for kind, held in family.layer_caches.items():
            if merged.setdefault(kind, held) != held:
                raise UnknownFamilyError(
                    f"layer type {kind!r} keeps {merged[kind]!r} in one family, {held!r} in {family.name}"
                )
    return merged
