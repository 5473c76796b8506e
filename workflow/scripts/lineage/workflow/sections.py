"""The config's sections as frozen types: what the rule files read as attributes, never as dict keys.

Each type holds one section of `scales.<scale>` (or the shared `recipe` values the data stages and
soups read), after the JSON schema has checked it and filled its defaults. The training recipe
itself is typed by lineage/training/recipe.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from lineage.data.export import MAX_ANSWER_CHARS


def _from(cls, section: Mapping[str, Any]):
    """An instance of `cls` from a config section, its keys the field names (tuples for lists)."""
    values = {}
    for f in fields(cls):
        if f.name in section:
            value = section[f.name]
            values[f.name] = tuple(value) if isinstance(value, list) else value
    return cls(**values)


@dataclass(frozen=True)
class Export:
    """`scales.<scale>.export`: the battle export the Stage-2 data comes from."""

    path: str
    format: str
    our_model: str = ""
    max_quarantine_fraction: float = 0.05
    max_answer_chars: int = MAX_ANSWER_CHARS


@dataclass(frozen=True)
class GeneralMix:
    """`scales.<scale>.general_mix`: the rows sampled from the Stage-1 SFT mixture."""

    sources: tuple[str, ...]
    rows: int
    max_tokens: int


@dataclass(frozen=True)
class Base:
    """`scales.<scale>.base`: the Base model the Stage-1 chain starts from, built here or given."""

    build: bool
    path: str | None = None
    tokenizer_vocab: int | None = None
    tokenizer_min_frequency: int | None = None
    model_size: str | None = None
    vocab_size: int | None = None  # embedding rows when padded past the tokenizer's ids
    family: str | None = None
    dtype: str | None = None


@dataclass(frozen=True)
class Verifier:
    """`scales.<scale>.verifier`: how the verifier DPO rounds sample and check their pairs."""

    prompts: str
    samples: int
    temperature: float
    top_p: float
    max_new_tokens: int
    max_pairs_per_prompt: int
    batch_size: int


@dataclass(frozen=True)
class Shared:
    """The `recipe` values outside a training recipe: the holdout split, the seed, soup verification."""

    holdout_modulus: int
    holdout_in_training: bool
    seed: int
    soup_verify: str


def sections(settings: Mapping[str, Any], recipe: Mapping[str, Any]) -> dict[str, Any]:
    """The typed sections of one scale, by the Lineage attribute that holds each."""
    return {
        "export": _from(Export, settings["export"]),
        "general_mix": _from(GeneralMix, settings["general_mix"]),
        "base": _from(Base, settings["base"]),
        "verifier": _from(Verifier, settings["verifier"]),
        "preference_sources": tuple(settings["preference_mix"]["sources"]),
        "shared": _from(Shared, recipe),
    }
