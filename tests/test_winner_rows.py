"""Winner rows: each preferred answer repeated, holdout prompts in or out, tie rows on request."""

from __future__ import annotations

import json

import pytest
import winner_rows as winner_rows_cli
from battle_factory import battle

from lineage.data.preferences import tie_rows, winner_rows


def preferred(prompt_id, side="own"):
    return {
        "prompt_id": prompt_id,
        "battle_id": f"b{prompt_id}",
        "messages": [{"role": "user", "content": "q"}],
        "preferred": f"Answer {prompt_id}.",
        "preferred_side": side,
    }


@pytest.mark.parametrize(("repeat", "in_training", "expected"), [(40, True, 200), (40, False, 120), (3, True, 15)])
def test_repetition_and_holdout_switch(repeat, in_training, expected):
    train = [preferred(1), preferred(2, "other"), preferred(3)]
    holdout = [preferred(5), preferred(10)]
    rows = winner_rows(train, holdout, repeat, in_training)
    assert len(rows) == expected
    assert ({r["prompt_id"] for r in rows} >= {5, 10}) is in_training
    first = rows[:repeat]
    assert {r["prompt_id"] for r in first} == {1} and [r["copy"] for r in first] == list(range(repeat))
    assert rows[0]["messages"][-1] == {"role": "assistant", "content": "Answer 1."}
    assert rows[0]["source"] == "winners" and rows[repeat]["side"] == "other"


def test_ties_one_row_per_side_latest_battle():
    battles = [
        battle("t1", 4, "tie", own="Old own.", other="Old other.", created_at="2025-01-01T00:00:00Z"),
        battle("t2", 4, "tie", own="New own.", other="New other.", created_at="2025-02-01T00:00:00Z"),
        battle("x", 6, "both_bad"),
    ]
    rows = tie_rows(battles, repeat=2)
    assert [(r["battle_id"], r["side"], r["messages"][-1]["content"]) for r in rows] == [
        ("t2", "own", "New own."),
        ("t2", "own", "New own."),
        ("t2", "other", "New other."),
        ("t2", "other", "New other."),
    ]
    assert tie_rows(battles, repeat=2, exclude_prompts={4}) == []


def test_cli_with_ties(tmp_path):
    def dump(name, rows):
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return str(path)

    args = [
        "--train",
        dump("t.jsonl", [preferred(1)]),
        "--holdout",
        dump("h.jsonl", [preferred(5)]),
        "--repeat",
        "4",
        "--holdout-in-training",
        "false",
        "--out",
        str(tmp_path / "w.jsonl"),
        "--ties",
        dump("c.jsonl", [battle("t", 8, "tie")]),
    ]
    assert winner_rows_cli.main(args) == 0
    rows = [json.loads(line) for line in (tmp_path / "w.jsonl").read_text().splitlines()]
    assert [r["source"] for r in rows].count("winners") == 4 and [r["source"] for r in rows].count("ties") == 8
