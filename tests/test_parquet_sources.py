"""Data files in the layout the Hub publishes them: Parquet. The Tulu-3 SFT mixture and UltraFeedback are
downloaded as .parquet; the general-mix sampler, the trainers and the config checks read them as they
read JSONL, with the same text checks and row-precise errors."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sample_general_mix

from lineage.errors import run_cli
from lineage.io import DataError, count_rows, read_rows
from lineage.training.data import load_rows
from lineage.workflow.checks import ConfigError, check_general_mix_supply


def tulu_rows(n: int) -> list[dict]:
    """Rows as allenai/tulu-3-sft-mixture holds them: id, messages (a list of {content, role}), source."""
    return [
        {
            "id": f"tulu_{i}",
            "messages": [{"content": f"w{i} w", "role": "user"}, {"content": "ok", "role": "assistant"}],
            "source": "ai2-adapt-dev/flan_v2_converted",
        }
        for i in range(n)
    ]


def write(rows: list[dict], path):
    """As the Hub's converter writes a split: one table, nested columns as list<struct>."""
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def test_a_parquet_file_reads_as_its_jsonl_would(tmp_path):
    rows = tulu_rows(5)
    parquet = write(rows, tmp_path / "train-00000-of-00001.parquet")
    jsonl = tmp_path / "train.jsonl"
    jsonl.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert [row for _, row in read_rows(parquet)] == [row for _, row in read_rows(jsonl)] == rows
    assert count_rows(parquet) == count_rows(jsonl) == 5
    loaded = load_rows([parquet], required=("messages",))
    assert loaded.rows == rows and loaded.records[0]["rows"] == 5 and loaded.records[0]["path"] == str(parquet)


def test_a_parquet_row_with_a_control_character_is_named_by_row_and_field(tmp_path):
    rows = tulu_rows(3)
    rows[1]["messages"][0]["content"] = "w\x1b[31m"
    parquet = write(rows, tmp_path / "mix.parquet")
    with pytest.raises(DataError, match=rf"{parquet}:2: field 'messages\[0\].content': holds the control character"):
        list(read_rows(parquet))
    loaded = load_rows([parquet], required=("messages",))  # the trainers skip it and name it
    assert loaded.rows == [rows[0], rows[2]] and loaded.where(1) == f"{parquet}:3"
    assert loaded.records[0]["unreadable_rows"] == [
        {
            "row": 2,
            "field": "messages[0].content",
            "reason": "holds the control character U+001B at character 1; it is not text (remove it from the export)",
        }  # fmt: skip
    ]
    assert loaded.summary().startswith(f"1 unreadable row(s) skipped ({parquet}:2: field 'messages[0].content'")


def test_the_general_mix_samples_a_parquet_source_as_its_jsonl(tmp_path, tokenizer_dir):
    rows = tulu_rows(12)
    rows[4]["messages"][0]["content"] = "w\x00"  # refused by the reader: quarantined, never sampled
    sampled = {}
    for suffix in ("jsonl", "parquet"):
        source = tmp_path / f"mix.{suffix}"
        if suffix == "parquet":
            write(rows, source)
        else:
            source.write_text("".join(json.dumps(row) + "\n" for row in rows))
        out, stats, quarantine = (tmp_path / f"{name}.{suffix}.json" for name in ("out", "stats", "quarantine"))
        argv = ["--source", str(source), "--rows", "6", "--seed", "3", "--tokenizer", tokenizer_dir,
                "--max-tokens", "20", "--out", str(out), "--stats", str(stats), "--quarantine", str(quarantine)]  # fmt: skip
        assert run_cli(lambda: sample_general_mix.main(argv), prog="sample_general_mix.py") == 0
        sampled[suffix] = out.read_text()
        (bad,) = map(json.loads, quarantine.read_text().splitlines())
        assert bad["line"] == 5 and bad["field"] == "messages[0].content" and "U+0000" in bad["reason"]
    assert sampled["parquet"] == sampled["jsonl"] and len(sampled["jsonl"].splitlines()) == 6


def test_the_config_check_counts_a_parquet_source_s_rows(tmp_path):
    write(tulu_rows(7), tmp_path / "mix.parquet")
    check_general_mix_supply({"sources": ["mix.parquet"], "rows": 7}, tmp_path, "full")
    with pytest.raises(ConfigError, match="8 rows asked for, but its sources hold 7"):
        check_general_mix_supply({"sources": ["mix.parquet"], "rows": 8}, tmp_path, "full")
