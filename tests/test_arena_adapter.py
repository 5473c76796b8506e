"""The Chatbot Arena adapter: our side becomes `own`, winners map to votes, unusable rows are quarantined."""

from __future__ import annotations

import hashlib

import pytest
from battle_factory import write_export

from lineage.data.arena import prompt_id_for
from lineage.data.export import check_quarantine_fraction, read_export
from lineage.io import DataError

OURS = "ember-stage1"


def arena_row(
    winner="model_a",
    model_a=OURS,
    model_b="gpt-x",
    question_id="q1",
    answer_a="A says.",
    answer_b="B says.",
    tstamp=1_700_000_000.5,
    prompt="Hi?",
):
    user = {"role": "user", "content": prompt}
    return {
        "question_id": question_id,
        "model_a": model_a,
        "model_b": model_b,
        "winner": winner,
        "conversation_a": [user, {"role": "assistant", "content": answer_a}],
        "conversation_b": [user, {"role": "assistant", "content": answer_b}],
        "tstamp": tstamp,
        "language": "English",
    }


def read(tmp_path, rows):
    return read_export(write_export(tmp_path / "arena.jsonl", rows), "arena", OURS)


@pytest.mark.parametrize(
    ("winner", "ours_is_a", "vote"),
    [
        ("model_a", True, "own_better"),
        ("model_b", True, "other_better"),
        ("model_a", False, "other_better"),
        ("model_b", False, "own_better"),
        ("tie", True, "tie"),
        ("tie (bothbad)", False, "both_bad"),
    ],
)
def test_sides_and_votes(tmp_path, winner, ours_is_a, vote):
    names = (OURS, "gpt-x") if ours_is_a else ("gpt-x", OURS)
    result = read(tmp_path, [arena_row(winner, *names)])
    row = result.kept[0]
    assert row["vote"] == vote
    assert row["own"] == {"model": OURS, "answer": "A says." if ours_is_a else "B says."}
    assert row["other"]["model"] == "gpt-x"
    assert row["messages"] == [{"role": "user", "content": "Hi?"}]
    assert row["created_at"].startswith("2023-11-14T22:13:20.5")


def test_ids_are_stable_and_unique(tmp_path):
    result = read(tmp_path, [arena_row(question_id="abc"), arena_row(question_id="abc"), arena_row(question_id=42)])
    assert [row["battle_id"] for row in result.kept] == ["abc-1", "abc-2", "42-1"]
    expected = int(hashlib.sha256(b"abc").hexdigest()[:8], 16)
    assert [row["prompt_id"] for row in result.kept] == [expected, expected, 42]
    assert prompt_id_for("abc") == expected


def test_battles_without_our_model_are_set_aside_not_counted_as_bad(tmp_path):
    others = [arena_row(model_a="m1", model_b="m2", question_id=f"q{i}") for i in range(30)]
    result = read(tmp_path, [arena_row(), *others])
    assert len(result.kept) == 1 and not result.quarantine
    entry = result.set_aside[0]
    assert entry["line"] == 2 and entry["field"] == "model_a" and "neither" in entry["reason"]
    check_quarantine_fraction(result, 0.05, tmp_path / "export.jsonl")  # 30 of 31 rows are not bad rows
    with pytest.raises(DataError, match="none of its 30 battles has our model"):
        check_quarantine_fraction(read(tmp_path, others), 0.05, tmp_path / "export.jsonl")


def test_different_prompts_are_quarantined(tmp_path):
    row = arena_row()
    row["conversation_b"][0] = {"role": "user", "content": "Something else"}
    result = read(tmp_path, [row])
    assert result.quarantine[0]["field"] == "conversation_b"


def test_empty_winning_answer_names_the_arena_field(tmp_path):
    result = read(tmp_path, [arena_row("model_b", answer_b=" ")])
    assert result.quarantine[0]["field"] == "conversation_b[-1].content"


def test_unknown_winner_and_missing_field(tmp_path):
    missing = arena_row(question_id="q2")
    del missing["conversation_b"]
    result = read(tmp_path, [arena_row("model_c"), missing])
    assert [(q["line"], q["field"]) for q in result.quarantine] == [(1, "winner"), (2, "conversation_b")]


def test_arena_needs_our_model(tmp_path):
    with pytest.raises(DataError, match="--our-model"):
        read_export(write_export(tmp_path / "a.jsonl", [arena_row()]), "arena", None)


def test_shipped_arena_sample():
    import json
    from pathlib import Path

    sample = Path(__file__).resolve().parents[1] / "resources" / "sample" / "battles_arena.jsonl"
    if not sample.is_file():
        pytest.skip(f"{sample} does not exist yet; generate it with tools/make_sample_data.py")
    raw = [json.loads(line) for line in sample.read_text(encoding="utf-8").splitlines() if line.strip()]
    result = read_export(sample, "arena", OURS)
    assert not result.quarantine, [q["reason"] for q in result.quarantine]
    for row, kept in zip(raw, result.kept, strict=True):
        ours = "model_a" if row["model_a"] == OURS else "model_b"
        expected = {"tie": "tie", "tie (bothbad)": "both_bad"}.get(row["winner"]) or (
            "own_better" if row["winner"] == ours else "other_better"
        )
        assert kept["vote"] == expected and kept["own"]["model"] == OURS
