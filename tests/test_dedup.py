"""The deduplication policy: one preferred answer per prompt, every other decisive battle recorded."""

from __future__ import annotations

from battle_factory import battle

from lineage.data.dedup import dedup_preferred, natural_key


def run(rows):
    return dedup_preferred(list(enumerate(rows, start=1)), file="clean.jsonl")


def test_most_wins_beats_later_single_win():
    rows = [
        battle("b1", 7, "own_better", own="Answer A.", created_at="2025-01-01T00:00:00Z"),
        battle("b2", 7, "other_better", other="Answer  A.\n", created_at="2025-01-02T00:00:00Z"),
        battle("b3", 7, "own_better", own="Answer B.", created_at="2025-01-09T00:00:00Z"),
    ]
    preferred, quarantine = run(rows)
    assert len(preferred) == 1
    row = preferred[0]
    assert row["battle_id"] == "b2" and row["preferred"] == "Answer  A.\n"
    assert row["preferred_side"] == "other" and row["preferred_model"] == "theirs"
    assert (row["n_battles"], row["n_wins"]) == (3, 2)
    assert sorted((q["battle_id"], q["line"], q["reason"]) for q in quarantine) == [
        ("b1", 1, "superseded duplicate of b2"),
        ("b3", 3, "superseded duplicate of b2"),
    ]


def test_equal_wins_latest_created_at_wins():
    rows = [
        battle("b9", 3, own="Early.", created_at="2025-03-01T10:00:00+00:00"),
        battle("b1", 3, own="Late.", created_at="2025-03-01T12:00:00+02:00"),  # 10:00 UTC, equal
        battle("b2", 3, own="Later.", created_at="2025-03-01T10:00:01Z"),
    ]
    preferred, _ = run(rows)
    assert preferred[0]["battle_id"] == "b2"


def test_equal_time_larger_battle_id_wins_in_natural_order():
    rows = [battle("b-9", 3, own="Nine."), battle("b-10", 3, own="Ten.")]
    preferred, _ = run(rows)
    assert preferred[0]["preferred"] == "Ten."
    assert natural_key("b-10") > natural_key("b-9")


def test_missing_loser_recovered_from_same_preferred_text():
    rows = [
        battle("b1", 5, own="Same.", other="Loser one.", created_at="2025-01-01T00:00:00Z"),
        battle("b2", 5, own="Same.", other=None, created_at="2025-01-05T00:00:00Z"),
    ]
    preferred, _ = run(rows)
    row = preferred[0]
    assert row["battle_id"] == "b2"
    assert row["rejected"] == "Loser one." and row["loser_recovered_from"] == "b1"


def test_loser_not_recovered_from_a_different_answer():
    rows = [
        battle("b1", 5, own="Other text.", other="Loser.", created_at="2025-01-01T00:00:00Z"),
        battle("b2", 5, own="Kept.", other=None, created_at="2025-01-05T00:00:00Z"),
    ]
    preferred, _ = run(rows)
    assert preferred[0]["rejected"] is None and preferred[0]["loser_recovered_from"] is None


def test_non_decisive_battles_are_ignored_and_prompts_sorted():
    rows = [battle("t1", 4, "tie"), battle("x1", 4, "both_bad"), battle("b2", 9), battle("b1", 2)]
    preferred, quarantine = run(rows)
    assert [row["prompt_id"] for row in preferred] == [2, 9]
    assert quarantine == []
