"""How a checkpoint's tensors map onto a model's parameters, whatever layout its publisher chose.

A model family's checkpoints come in more than one layout. NVIDIA publishes Nemotron-H as
`backbone.*` with one tensor per routed expert; transformers 5 holds `model.*` with each layer's
experts merged into one 3-D tensor, and converts inside `from_pretrained` by the rules in
`transformers.conversion_mapping` for the model type. Those rules are read here, not copied, so a
family works the day transformers supports it.

A `Layout` says, for every tensor of the model's state dict, where it lies in one checkpoint: one
tensor under some name (`Piece.stacked` false), or one tensor per row of dimension 0 (an expert
each, `stacked` true). Both are what a rank needs to read only its own rows, and what a writer
needs to write the model back in the checkpoint's own names and shapes. A rule this module cannot
turn into rows (a concatenation, a transpose) is refused naming the tensor, not guessed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lineage.checkpoints.format import CheckpointError, listed
from lineage.checkpoints.read import checkpoint_shapes

if TYPE_CHECKING:
    import torch

SHOWN = 3


class LayoutError(CheckpointError):
    """A checkpoint whose tensors do not fit the model of its config.json; the message names the tensor."""


@dataclass(frozen=True)
class Piece:
    """Where one model tensor lies in a checkpoint.

    `sources` holds one checkpoint name, or with `stacked` one name per row of dimension 0, in row order.
    """

    target: str
    sources: tuple[str, ...]
    stacked: bool = False

    def source_shapes(self, shape: Sequence[int]) -> list[tuple[str, tuple[int, ...]]]:
        """The checkpoint tensors (name, shape) that hold a model tensor of `shape`."""
        if not self.stacked:
            return [(self.sources[0], tuple(shape))]
        return [(name, tuple(shape[1:])) for name in self.sources]


@dataclass(frozen=True)
class Layout:
    """Every model tensor's `Piece` in one checkpoint, in the model's state-dict order."""

    pieces: dict[str, Piece]

    @property
    def is_native(self) -> bool:
        """True when the checkpoint holds the model's own names and shapes (no conversion)."""
        return all(not p.stacked and p.sources == (p.target,) for p in self.pieces.values())

    def checkpoint_specs(self, shapes: Mapping[str, Sequence[int]]) -> list[tuple[str, str, tuple[int, ...]]]:
        """(model name, checkpoint name, shape) of every checkpoint tensor, model order, rows in order."""
        return [
            (target, name, shape)
            for target, piece in self.pieces.items()
            for name, shape in piece.source_shapes(shapes[target])
        ]


def native_layout(names: Sequence[str]) -> Layout:
    """The layout of a checkpoint that holds the model's own names (what this project wrote until now)."""
    return Layout({name: Piece(name, (name,)) for name in names})


def _natural_key(name: str) -> tuple:
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def conversion_rules(model: torch.nn.Module) -> tuple[list, list]:
    """transformers' (renamings, converters) for loading `model`'s checkpoints, as from_pretrained applies them."""
    from transformers.conversion_mapping import get_model_conversion_mapping
    from transformers.core_model_loading import WeightConverter, WeightRenaming

    rules = get_model_conversion_mapping(model)
    renamings = [r for r in rules if isinstance(r, WeightRenaming)]
    converters = [r for r in rules if isinstance(r, WeightConverter)]
    return renamings, converters


def _row_merge(converter) -> bool:
    """True for a converter that stacks one tensor per row along dimension 0 (transformers' MergeModulelist)."""
    operations = getattr(converter, "operations", [])
    return (
        len(operations) == 1
        and type(operations[0]).__name__ == "MergeModulelist"
        and getattr(operations[0], "dim", None) == 0
        and len(converter.source_patterns) == 1
    )


def resolve_layout(
    directory: object,
    checkpoint: Mapping[str, tuple[int, ...]],
    model: torch.nn.Module,
    *,
    skip: Sequence[str] = (),
) -> Layout:
    """The layout of a checkpoint with tensors `checkpoint` {name: shape} for `model` (built on any device).

    `skip` names model tensors that are not stored (tied aliases). Raises LayoutError, naming the
    checkpoint `directory`, the tensor and both shapes, when the tensors do not fit the model.
    """
    from transformers.core_model_loading import rename_source_key

    expected = {name: tuple(t.shape) for name, t in model.state_dict().items() if name not in set(skip)}
    if set(checkpoint) >= set(expected):  # the model's own names: nothing to convert
        return _checked(directory, native_layout(list(expected)), checkpoint, expected, set(skip))
    renamings, converters = conversion_rules(model)
    meta = {name: True for name in expected}
    grouped: dict[str, list[str]] = {}
    merged: dict[str, bool] = {}
    for name in sorted(checkpoint, key=_natural_key):
        target, pattern = rename_source_key(name, renamings, converters, model.base_model_prefix, meta)
        grouped.setdefault(target, []).append(name)
        if pattern is not None:
            converter = next(c for c in converters if pattern in c.source_patterns)
            if not _row_merge(converter):
                raise LayoutError(
                    f"{directory}: {name} is converted by transformers' {type(converter).__name__} with "
                    f"{[type(op).__name__ for op in converter.operations]}, which cannot be read row by row here; "
                    "load it once with from_pretrained and save_pretrained it in the model's own layout"
                )
            merged[target] = True
    pieces = {}
    for target in expected:
        sources = grouped.get(target)
        if sources is None:
            continue
        if not merged.get(target) and len(sources) != 1:
            raise LayoutError(
                f"{directory}: {listed(sources, SHOWN)} all map to {target}; the checkpoint repeats a tensor"
            )
        pieces[target] = Piece(target, tuple(sources), stacked=bool(merged.get(target)))
    unexpected = sorted({s for t, sources in grouped.items() if t not in expected for s in sources}, key=_natural_key)
    missing = [t for t in expected if t not in pieces]
    if missing or unexpected:
        raise LayoutError(
            f"{directory}: the tensors do not fit the model of its config.json: "
            + "; ".join(
                part
                for part in (
                    f"{len(missing)} model tensor(s) not found ({listed(missing, SHOWN)})" if missing else "",
                    f"{len(unexpected)} checkpoint tensor(s) the model has no place for ({listed(unexpected, SHOWN)})"
                    if unexpected
                    else "",
                )
                if part
            )
            + ". The checkpoint was written for another model; check config.json against its index"
        )
    return _checked(directory, Layout(pieces), checkpoint, expected, set())


def _checked(
    directory: object,
    layout: Layout,
    checkpoint: Mapping[str, tuple[int, ...]],
    expected: Mapping[str, tuple[int, ...]],
    skip: set[str],
) -> Layout:
    """Refuse a tensor whose shape is not the model's, naming both; a native checkpoint's extra tensors too."""
    for target, piece in layout.pieces.items():
        shape = expected[target]
        if piece.stacked and len(piece.sources) != shape[0]:
            raise LayoutError(
                f"{directory}: {target} has {shape[0]} rows (experts) in the model of config.json but the "
                f"checkpoint holds {len(piece.sources)} tensors for it ({listed(list(piece.sources), SHOWN)})"
            )
        for name, want in piece.source_shapes(shape):
            if tuple(checkpoint[name]) != want:
                raise LayoutError(
                    f"{directory}: tensor {name} has shape {list(checkpoint[name])} but the model of config.json "
                    f"expects {list(want)}" + (f" (for {target})" if name != target else "")
                )
    if layout.is_native:
        extra = sorted(set(checkpoint) - set(expected) - skip, key=_natural_key)
        if extra:
            raise LayoutError(
                f"{directory}: {len(extra)} checkpoint tensor(s) the model of config.json has no place for "
                f"({listed(extra, SHOWN)}); the checkpoint was written for another model"
            )
    return layout


def checkpoint_layout(directory: str | os.PathLike, model: torch.nn.Module, skip: Sequence[str] = ()) -> Layout:
    """The layout of the checkpoint at `directory` for `model` (refusing tensors that do not fit)."""
    return resolve_layout(directory, checkpoint_shapes(directory), model, skip=skip)
