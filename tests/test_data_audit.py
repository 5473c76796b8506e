"""The data audit over the whole chain of data scripts on a small export: counts, leak flag, split, quarantine."""

from __future__ import annotations

import json

import battle_pairs
import clean_battles
import data_audit
import dedup_battles
import pytest
import read_battles
import split_holdout
import winner_rows
from battle_factory import battle, write_export

CARD = {
    "battles": 9,
    "own_better": 5,
    "other_better": 2,
    "preferred": 5,
    "preferred_own": 2,
    "preferred_other": 3,
    "winner_rows": 10,
}


def build(tmp_path, in_training: bool) -> dict:
    rows = [
        battle("b1", 1, own="One [1]."),
        battle("b2", 2, "other_better"),
        battle("b3", 3),
        battle("b4", 5, own="Five.", other=None),
        battle("b5", 5, own="Five.", created_at="2024-12-01T00:00:00Z"),
        battle("b6", 10, "other_better"),
        battle("b7", 6, "tie"),
        battle("b8", 7, "both_bad"),
        battle("b9", 3, own="Three again.", created_at="2025-02-01T00:00:00Z"),
        '{"not json',
    ]
    export = write_export(tmp_path / "export.jsonl", rows)
    p = {
        name: str(tmp_path / name)
        for name in (
            "b.jsonl",
            "q1.jsonl",
            "c.jsonl",
            "s.json",
            "pref.jsonl",
            "q2.jsonl",
            "t.jsonl",
            "h.jsonl",
            "w.jsonl",
            "p.jsonl",
            "hp.jsonl",
            "gm.jsonl",
            "a.json",
            "a.md",
            "a.html",
        )
    }
    (tmp_path / "gm.jsonl").write_text('{"id": "g", "messages": [{"role": "user", "content": "hi"}]}\n')
    flag = "true" if in_training else "false"
    steps = [
        (
            read_battles,
            [
                "--export",
                str(export),
                "--out",
                p["b.jsonl"],
                "--quarantine",
                p["q1.jsonl"],
                "--max-quarantine-fraction",
                "0.2",
            ],
        ),
        (clean_battles, ["--in", p["b.jsonl"], "--out", p["c.jsonl"], "--stats", p["s.json"]]),
        (dedup_battles, ["--in", p["c.jsonl"], "--out", p["pref.jsonl"], "--quarantine", p["q2.jsonl"]]),
        (
            split_holdout,
            ["--in", p["pref.jsonl"], "--modulus", "5", "--out-train", p["t.jsonl"], "--out-holdout", p["h.jsonl"]],
        ),
        (
            winner_rows,
            [
                "--train",
                p["t.jsonl"],
                "--holdout",
                p["h.jsonl"],
                "--repeat",
                "2",
                "--holdout-in-training",
                flag,
                "--out",
                p["w.jsonl"],
            ],
        ),
        (
            battle_pairs,
            [
                "--preferred",
                p["pref.jsonl"],
                "--holdout",
                p["h.jsonl"],
                "--holdout-in-training",
                flag,
                "--out",
                p["p.jsonl"],
                "--out-holdout",
                p["hp.jsonl"],
            ],
        ),
        (
            data_audit,
            [
                "--raw-export",
                str(export),
                "--battles",
                p["b.jsonl"],
                "--clean-stats",
                p["s.json"],
                "--preferred",
                p["pref.jsonl"],
                "--holdout",
                p["h.jsonl"],
                "--winners",
                p["w.jsonl"],
                "--pairs",
                p["p.jsonl"],
                "--holdout-pairs",
                p["hp.jsonl"],
                "--general-mix",
                p["gm.jsonl"],
                "--quarantine",
                p["q1.jsonl"],
                "--quarantine",
                p["q2.jsonl"],
                "--holdout-in-training",
                flag,
                "--card-counts",
                json.dumps(CARD),
                "--out-json",
                p["a.json"],
                "--out-md",
                p["a.md"],
                "--out-html",
                p["a.html"],
            ],
        ),
    ]
    for module, argv in steps:
        assert module.main(argv) == 0, module.__name__
    audit = json.loads((tmp_path / "a.json").read_text())
    audit["md"] = (tmp_path / "a.md").read_text()
    audit["html"] = (tmp_path / "a.html").read_text()
    return audit


@pytest.fixture(scope="module")
def leaky(tmp_path_factory):
    return build(tmp_path_factory.mktemp("leaky"), in_training=True)


def test_counts_against_card(leaky):
    ours = leaky["ours"]
    assert (ours["raw_rows"], ours["battles"], ours["read_quarantined"]) == (10, 9, 1)
    assert (ours["preferred"], ours["preferred_own"], ours["preferred_other"], ours["superseded"]) == (5, 3, 2, 2)
    assert (ours["winner_rows"], ours["holdout_pairs"], ours["recovered_pairs"], ours["losers_recovered"]) == (
        10,
        2,
        5,
        1,
    )
    match = {c["key"]: c["match"] for c in leaky["counts"]}
    assert match["battles"] == "yes" and match["preferred_own"] == "NO" and match["raw_rows"] == ""
    assert all(check["ok"] for check in leaky["checks"])


def test_split_sentence_says_card_split_is_impossible(leaky):
    note = leaky["split"]["note"]
    assert "3 own + 2 opponent" in note and "cannot follow from 5/2" in note


def test_leak_flagged_when_holdout_in_training(leaky, tmp_path):
    assert leaky["leakage"]["status"] == "LEAK" and leaky["leakage"]["in_winner_rows"] == 2
    assert "LEAK" in leaky["md"]
    clean = build(tmp_path, in_training=False)
    assert clean["leakage"]["status"] == "clean" and clean["ours"]["winner_rows"] == 6


def test_quarantine_table_and_html(leaky):
    stages = sorted((q["stage"], q["reason"][:12]) for q in leaky["quarantine"])
    assert stages == [
        ("dedup_battles", "superseded d"),
        ("dedup_battles", "superseded d"),
        ("read_battles", "invalid JSON"),
    ]
    assert "superseded duplicate of b9" in leaky["md"]
    assert leaky["html"].startswith("<!DOCTYPE html>") and "<style>" in leaky["html"] and "<script" not in leaky["html"]
    assert leaky["citations"]["markers"]["numeric"] == 1
