"""What the project knows of one model family: the one record its module builds (lineage/families/).

Classes of transformers' modeling code are named through functions (`block_types`, `expert_types`,
`eager_mixer_types`), so that reading a family's shapes or config class loads none of it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import torch


@dataclass(frozen=True)
class Packing:
    """What keeps a family's packed rows apart: the forward's inputs beside input_ids, and the kernels (import
    name -> distribution) that must be installed, on CUDA, for its layers to read them."""

    inputs: tuple[str, ...] = ("position_ids",)
    kernels: Mapping[str, str] = field(default_factory=dict)
    needs: str = ""  # what the kernels do, as a refusal says it
    install: str = ""  # how to get them, as a refusal says it


@dataclass(frozen=True)
class Tail:
    """A block's last matrix product, to be left out of full checkpointing's recompute
    (lineage/training/last_product.py applies it).

    forward None: `module` is a Linear that runs eager. Otherwise `forward` replaces `module`'s forward
    (same products, the last one eager after the rest); with `experts`, only where those experts end
    with their eager down GEMM; with `kernels`, only where the family's kernels are installed.
    """

    module: torch.nn.Module
    forward: Callable | None = None
    experts: torch.nn.Module | None = None
    kernels: bool = False


def _none() -> tuple[type, ...]:
    return ()


def _no_misfit(config, device) -> str | None:
    return None


def _nothing() -> None:
    return None


def dense_mlp_tail(block: torch.nn.Module) -> list[Tail]:
    """A block whose dense MLP comes last (attention, then `mlp.down_proj`): that product eager."""
    down = getattr(getattr(block, "mlp", None), "down_proj", None)
    return [Tail(down)] if isinstance(down, torch.nn.Linear) else []


@dataclass(frozen=True)
class Family:
    """One model family: what the builder, the trainer, the decoders and the planner need of it.

    name: the config's base.family and the first key of its shapes. model_types: transformers' model types
    whose checkpoints it describes. shapes: named config values without the vocabulary (lineage/modeling.py
    builds them). layer_caches: what each of its layer types keeps while decoding (families.layer_caches).
    expert_count_key: the config key of routed experts per MoE layer. layer_kinds: the planner's kind of each
    layer (planning/memory.py counts their activations). kernel_misfit: why the installed GPU kernels cannot
    run a config on a device, or None. kernels_off_cpu: makes CPU tensors take the reference path where
    transformers would hand them to an installed GPU kernel. last_products: a block's Tails.
    """

    name: str
    model_types: tuple[str, ...]
    config_class: type
    shapes: Mapping[str, dict]
    block_types: Callable[[], tuple[type, ...]]
    layer_kinds: Callable[[object], list[str]]
    layer_caches: Mapping[str, str | None] = field(default_factory=lambda: {"full_attention": "keys"})
    expert_types: Callable[[], tuple[type, ...]] = _none
    expert_count_key: str | None = None
    eager_mixer_types: Callable[[], tuple[type, ...]] = _none
    packing: Packing = Packing()
    kernel_misfit: Callable[[object, object], str | None] = _no_misfit
    kernels_off_cpu: Callable[[], None] = _nothing
    last_products: Callable[[torch.nn.Module], list[Tail]] = dense_mlp_tail

    def missing_kernels(self) -> list[str]:
        """The distributions of the family's kernels that do not import here."""
        return [dist for module, dist in self.packing.kernels.items() if importlib.util.find_spec(module) is None]
