"""Benchmark items as their publishers ship them: GSM8K and MMLU on the Hub have no id field, and the Hub serves
them as Parquet. They are read as they are; each item without an id gets one derived from its content."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

from lineage.evaluation.items import load_items, select_items

GSM8K = [  # openai/gsm8k's test split: question and answer, nothing else
    {"question": "Janet has 3 apples and buys 2 more. How many?", "answer": "3 + 2 = 5\n#### 5"},
    {"question": "A train goes 60 km in 1 hour. How far in 3 hours?", "answer": "60 * 3 = 180\n#### 180"},
    {"question": "Janet has 3 apples and buys 2 more. How many?", "answer": "3 + 2 = 5\n#### 5"},  # a repeat
]
MMLU = [  # cais/mmlu's test split
    {"question": "2 + 2 =", "subject": "elementary_mathematics", "choices": ["3", "4", "5", "6"], "answer": 1},
    {
        "question": "H2O is",
        "subject": "high_school_chemistry",
        "choices": ["salt", "water", "air", "gold"],
        "answer": 1,
    },
]


def test_gsm8k_as_published_gets_ids_from_its_content_whatever_the_order(tmp_path):
    forward, backward = tmp_path / "test.jsonl", tmp_path / "reversed.jsonl"
    forward.write_text("".join(json.dumps(item) + "\n" for item in GSM8K))
    backward.write_text("".join(json.dumps(item) + "\n" for item in reversed(GSM8K[:2])))
    ids = [item["id"] for item in load_items("gsm8k", forward)]
    assert len(set(ids)) == 3 and all(i.startswith("gsm8k-") for i in ids)
    assert ids[2] == ids[0] + "-2"  # the repeated item is numbered, not refused
    assert {item["id"] for item in load_items("gsm8k", backward)} == set(ids[:2])
    items = load_items("gsm8k", forward)
    parts = [select_items("gsm8k", items, part=p, sizes={"A": 1, "B": 2}, seed=1) for p in ("A", "B")]
    assert sorted(item["id"] for part in parts for item in part) == sorted(ids)  # disjoint parts, as with given ids


def test_mmlu_as_the_hub_serves_it_reads_from_parquet(tmp_path):
    path = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(MMLU), path)
    items = load_items("mmlu", path)
    assert [item["choices"] for item in items] == [m["choices"] for m in MMLU]
    assert [item["answer"] for item in items] == [1, 1] and len({item["id"] for item in items}) == 2
