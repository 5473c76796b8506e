"""eval_benchmark.py end to end on a pico checkpoint: every benchmark writes its result and records."""

import json

import pytest

import eval_benchmark
from _eval_fixtures import make_checkpoint, write_items
from lineage.io import DataError

COMMON = ["--batch-size", "3", "--max-new-tokens", "6"]
PARTS = {
    "mmlu": ["--part", "B", "--sample", "4"],
    "gsm8k": ["--part", "A", "--sample", "2"],
    "ifeval": ["--part", "C", "--sizes", "1,2,3"],
    "degen": ["--part", "A", "--sizes", "4"],
    "margin": [],
}


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    return make_checkpoint(root / "ckpt", run="sftw2"), write_items(root / "items"), root


@pytest.mark.parametrize("benchmark", sorted(PARTS))
def test_every_benchmark_writes_result_and_records(setup, benchmark):
    ckpt, items, root = setup
    out, rec = root / f"{benchmark}.json", root / f"{benchmark}.records.jsonl"
    argv = [
        "--benchmark",
        benchmark,
        "--model",
        str(ckpt),
        "--items",
        str(items[benchmark]),
        *PARTS[benchmark],
        *COMMON,
        "--out-json",
        str(out),
        "--out-records",
        str(rec),
    ]
    assert eval_benchmark.main(argv) == 0
    result = json.loads(out.read_text())
    records = [json.loads(line) for line in rec.read_text().splitlines()]
    assert result["benchmark"] == benchmark and result["run"] == "sftw2"
    assert result["n"] == len(result["item_ids"]) == len(records) == len(set(result["item_ids"]))
    assert 0.0 <= result["score"] <= 1.0
    assert result["wall_time_s"] > 0 and result["items_per_s"] > 0
    assert [r["id"] for r in records] == result["item_ids"]
    assert all("prompt" in r for r in records)
    if benchmark == "ifeval":
        assert result["part"] == "C" and result["n"] == 3
        assert {"prompt_level_loose_acc", "inst_level_strict_acc", "inst_level_loose_acc"} <= result.keys()
    if benchmark == "gsm8k":
        assert {"strict_match", "flexible_extract"} <= result.keys()
    if benchmark == "margin":
        assert "per_token_margin_acc" in result and result["part"] is None
    if benchmark == "degen":
        assert "n_short" in result


def test_parts_of_one_file_are_disjoint(setup):
    ckpt, items, root = setup
    ids = []
    for part in "AB":
        out = root / f"mmlu_{part}.json"
        eval_benchmark.main(
            [
                "--benchmark",
                "mmlu",
                "--model",
                str(ckpt),
                "--items",
                str(items["mmlu"]),
                "--part",
                part,
                "--sample",
                "5",
                "--out-json",
                str(out),
                "--out-records",
                str(root / "r.jsonl"),
            ]
        )
        ids.append(set(json.loads(out.read_text())["item_ids"]))
    assert len(ids[0]) == len(ids[1]) == 5 and not ids[0] & ids[1]


def test_too_few_items_is_an_error(setup):
    ckpt, items, root = setup
    with pytest.raises(DataError, match="only 12 items"):
        eval_benchmark.main(
            [
                "--benchmark",
                "mmlu",
                "--model",
                str(ckpt),
                "--items",
                str(items["mmlu"]),
                "--part",
                "C",
                "--sample",
                "5",
                "--out-json",
                str(root / "x.json"),
                "--out-records",
                str(root / "x.jsonl"),
            ]
        )
