"""What a benchmark declares: its item schema and checks, its parts, its runner, its table rows, its
place in a published model-index, and its shipped sample items. One `Benchmark` per module of
`lineage.evaluation.benchmarks`; nothing here imports torch, so Snakemake reads the declarations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Item = Mapping[str, Any]
Record = Mapping[str, Any]
# (model, ChatRenderer, items, RunOptions) -> (result extras with "score", per-item records, tokens counted)
Runner = Callable[..., tuple[dict[str, Any], list[dict[str, Any]], int]]


def verdict(record: Record) -> float:
    """1 for an item the model got right, else 0: what an accuracy row averages."""
    return float(bool(record["correct"]))


@dataclass(frozen=True)
class TableRow:
    label: str  # our row label
    card_label: str | None  # the row's first cell in the card (None: a row the card does not have)
    parts: tuple[str | None, ...]  # the parts shown in one cell ("A / B"); None: the benchmark's whole set
    percent: bool  # shown in percent with one decimal, else as a fraction with three
    metric: str = "score"  # the result JSON's key
    value: Callable[[Record], float] = verdict  # what one item's record contributes (the metric is its mean)


@dataclass(frozen=True)
class ModelIndexEntry:
    """How the benchmark appears in a published model-index."""

    name: str
    metric: str
    hub_dataset: str | None = None  # the public Hub data set its full-scale items are parts of


@dataclass(frozen=True)
class Sample:
    """The items shipped for the embedded scale, and how many go to each part there."""

    items: str  # path from the repository root
    sizes: tuple[int, ...]


@dataclass(frozen=True)
class Benchmark:
    name: str
    parts: tuple[str, ...]  # disjoint item sets, each a column cell of its own
    id_field: str
    fields: Mapping[str, type | tuple[type, ...]]  # every item's fields and their types
    check: Callable[[Item], str | None]  # what a schema cannot say; the problem in words, or None
    run: Runner
    rows: tuple[TableRow, ...]
    generates: bool  # scores generated text (so the generation length changes its result)
    unit: str  # which tokens its tokens/s counts
    model_index: ModelIndexEntry
    card_position: int  # where its rows stand in the card's table (benchmarks sorted by it, then name)
    sample: Sample | None = None  # None: items come from a data stage (`items_from`)
    items_from: str | None = None  # a data-stage file under results/<scale>/data
    max_new_tokens: int | None = None  # generation length when the scale does not set one

    @property
    def sized(self) -> bool:
        """Its parts are cut from a configured item file by `eval.sizes.<name>`."""
        return self.items_from is None

    @property
    def part_names(self) -> tuple[str, ...]:
        return tuple(f"{self.name}_{part}" for part in self.parts)

    def item_id(self, item: Item) -> str:
        """The item's id as text (IFEval keys are ints; ids are compared as text everywhere)."""
        return str(item[self.id_field])


def check_conversation(item: Item) -> str | None:
    """The `messages` of a prompt to answer: {role, content} turns ending with the user's."""
    messages = item["messages"]
    if not messages or not all(isinstance(m, dict) and {"role", "content"} <= m.keys() for m in messages):
        return "field 'messages' must be a non-empty list of {role, content}"
    if messages[-1]["role"] != "user":
        return "field 'messages' must end with a user turn"
    return None
