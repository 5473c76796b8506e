"""The card's benchmarks, one record each: the single list the rules, the item loader and the table read.

A benchmark names its parts (disjoint item sets A, B, C), the fields every item must carry,
where its items come from (a file of `scales.<scale>.eval.items`, sized per part by
`eval.sizes`, or a file a data stage writes), whether it generates text, and the rows it fills
in the card's table. Its runner is `lineage.evaluation.tasks.RUNNERS[name]`. This module is
plain data, so Snakemake reads it without importing torch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class TableRow:
    label: str  # our row label
    card_label: str | None  # the row's first cell in the card (None: a row the card does not have)
    parts: tuple[str | None, ...]  # the parts shown in one cell ("A / B"); None: the benchmark's whole set
    percent: bool  # shown in percent with one decimal, else as a fraction with three
    metric: str = "score"  # the result JSON's key
    item: str = "correct"  # the per-item value whose mean it is (lineage/evaluation/table.py ITEM_VALUES)


@dataclass(frozen=True)
class Benchmark:
    name: str
    parts: tuple[str, ...]
    id_field: str
    fields: Mapping[str, type | tuple[type, ...]]  # every item's fields and their types
    rows: tuple[TableRow, ...]
    generates: bool  # scores generated text (so the generation length changes its result)
    unit: str  # which tokens its tokens/s counts
    items_from: str | None = None  # a data-stage file under results/<scale>/data; None: eval.items.<name>

    @property
    def sized(self) -> bool:
        """Its parts are cut from a configured item file by `eval.sizes.<name>`."""
        return self.items_from is None

    @property
    def part_names(self) -> tuple[str, ...]:
        return tuple(f"{self.name}_{part}" for part in self.parts)


BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in (
        Benchmark(
            "mmlu", ("A", "B"), "id", {"subject": str, "question": str, "choices": list, "answer": int},
            (TableRow("MMLU A / B", "MMLU A / B (1000 each)", ("A", "B"), True),),
            generates=False, unit="prompt",
        ),
        Benchmark(
            "gsm8k", ("A", "B"), "id", {"question": str, "answer": str},
            (TableRow("GSM8K A / B", "GSM8K A / B (300 each)", ("A", "B"), True),),
            generates=True, unit="generated",
        ),
        Benchmark(
            "ifeval", ("A", "B", "C"), "key", {"prompt": str, "instruction_id_list": list, "kwargs": list},
            (TableRow("Instruction-following A / B", "Instruction-following A / B", ("A", "B"), True),
             TableRow("Instruction-following C", "Instruction-following C (753)", ("C",), True)),
            generates=True, unit="generated",
        ),
        Benchmark(
            "degen", ("A",), "id", {"messages": list},
            (TableRow("Gen degen (lower better)", "Gen degen (lower better)", (None,), False, item="seq_rep_4"),),
            generates=True, unit="generated",
        ),
        Benchmark(
            "margin", ("A",), "battle_id", {"messages": list, "chosen": str, "rejected": str},
            # The card's accuracy, then the margins themselves: they move where accuracies sit at the floor.
            (TableRow("Battle holdout margin acc", "Battle holdout margin acc", (None,), False),
             TableRow("Battle mean margin (log-prob)", None, (None,), False, "mean_margin", "margin"),
             TableRow("Battle per-token margin", None, (None,), False, "mean_per_token_margin", "per_token_margin")),
            generates=False, unit="scored", items_from="holdout_pairs.jsonl",
        ),
    )
}
PART_NAMES: tuple[str, ...] = tuple(name for b in BENCHMARKS.values() for name in b.part_names)
