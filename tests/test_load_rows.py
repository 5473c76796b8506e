"""The trainers' reader of data files: a row that cannot be read is skipped and named, never a stop."""

from __future__ import annotations

import json

import pytest

from lineage.io import DataError
from lineage.training.data import UNREADABLE_NAMED, load_rows


def chat(text: str) -> str:
    return json.dumps({"messages": [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}]})


def test_each_row_is_named_by_its_file_and_line_past_blank_and_unreadable_lines(tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text("\n".join([chat("a1"), "", "{not json", chat("a4")]) + "\n")
    second.write_text("\n".join(['{"text": "no messages"}', chat("b2"), "\ufeff", chat("b4")]) + "\n")
    loaded = load_rows([first, second], required=("messages",))
    texts = [row["messages"][0]["content"] for row in loaded.rows]
    assert texts == ["a1", "a4", "b2", "b4"]
    assert [loaded.where(i) for i in range(4)] == [f"{first}:1", f"{first}:4", f"{second}:2", f"{second}:4"]
    assert [(r["rows"], r["unreadable"]) for r in loaded.records] == [(2, 1), (2, 2)]
    named = [(u["row"], u["field"]) for r in loaded.records for u in r["unreadable_rows"]]
    assert named == [(3, "json"), (1, "messages"), (3, "json")]  # a stray byte-order mark mid-file is no JSON
    assert loaded.summary().startswith(f"3 unreadable row(s) skipped ({first}:3: field 'json': invalid JSON")


def test_a_file_without_readable_rows_neither_hides_its_rows_nor_shifts_the_next_files(tmp_path):
    empty, good = tmp_path / "empty.jsonl", tmp_path / "good.jsonl"
    empty.write_text("[1, 2]\n")
    good.write_text(chat("g1") + "\n")
    loaded = load_rows([empty, good], required=("messages",))
    assert loaded.where(0) == f"{good}:1"
    assert loaded.records[0]["unreadable_rows"] == [
        {"row": 1, "field": "json", "reason": "expected one JSON object per line, got list"}
    ]


def test_no_readable_row_at_all_stops_with_the_reasons(tmp_path):
    data = tmp_path / "bad.jsonl"
    data.write_text('{"prompt": "x"}\n')
    with pytest.raises(DataError, match=rf"no readable rows in {data}: 1 unreadable row\(s\) skipped \({data}:1: "
                                        r"field 'chosen': missing; a row needs chosen, rejected\)"):  # fmt: skip
        load_rows([data], required=("chosen", "rejected"))
    with pytest.raises(DataError, match="data file not found"):
        load_rows([tmp_path / "absent.jsonl"], required=("messages",))


def test_a_flood_of_bad_lines_is_counted_whole_and_named_in_part(tmp_path):
    data = tmp_path / "flood.jsonl"
    data.write_text("\n".join(["nope"] * (UNREADABLE_NAMED + 50) + [chat("kept")]) + "\n")
    loaded = load_rows([data], required=("messages",))
    (record,) = loaded.records
    assert record["unreadable"] == UNREADABLE_NAMED + 50 and len(record["unreadable_rows"]) == UNREADABLE_NAMED
    assert loaded.where(0) == f"{data}:{UNREADABLE_NAMED + 51}"
