"""GSM8K extraction and matching, seq-rep-4, battle margin, MMLU choice and item parts."""

import json

import pytest

from lineage.evaluation import metrics
from lineage.evaluation.items import load_items, parse_part_sizes, sample_part, select_items
from lineage.io import DataError

GOLD = "Natalia sold 48/2 = 24 clips in May.\nNatalia sold 48+24 = 72 clips altogether.\n#### 72"


@pytest.mark.parametrize(
    ("text", "strict", "flexible"),
    [
        ("3 + 2 = 5. #### 5", "5", "5"),
        ("They remain 1000 pens.", "[invalid]", "1000"),
        ("First 12, then 30, so the answer is $1,250.", "[invalid]", "$1,250."),
        ("#### -7\nDone: -7", "-7", "-7"),
        ("No digits here at all", "[invalid]", "[invalid]"),
        ("The total is 72 clips.\n#### 72", "72", "72"),
        ("x = 3.5 and then 4", "[invalid]", "4"),
    ],
)
def test_gsm8k_filters(text, strict, flexible):
    assert metrics.gsm8k_strict(text) == strict
    assert metrics.gsm8k_flexible(text) == flexible


@pytest.mark.parametrize(
    ("prediction", "answer", "match"),
    [
        ("72", GOLD, True),
        ("72.", GOLD, True),  # a final period is ignored
        ("$72", GOLD, True),
        ("1,000", "so 1000\n#### 1,000", True),
        ("$1,000.", "#### 1000", True),
        ("71", GOLD, False),
        ("[invalid]", GOLD, False),
        ("72.0", GOLD, False),  # lm-eval compares strings, not numbers
    ],
)
def test_gsm8k_exact_match(prediction, answer, match):
    assert metrics.gsm8k_exact_match(prediction, answer) is match


def test_gsm8k_target_is_number_after_hashes():
    assert metrics.gsm8k_target(GOLD) == "72"


@pytest.mark.parametrize(
    ("tokens", "value"),
    [
        ([1, 2, 3, 4, 5, 6], 0.0),
        ([7, 7, 7, 7, 7, 7, 7], 1 - 1 / 4),  # 4 four-grams, all equal
        ([1, 2, 3, 4, 1, 2, 3, 4], 1 - 4 / 5),  # (1,2,3,4) twice among 5
        ([1, 2, 3, 4], 0.0),
        ([1, 2, 3], None),
        ([], None),
    ],
)
def test_seq_rep_4(tokens, value):
    got = metrics.seq_rep_n(tokens, 4)
    assert got == pytest.approx(value) if value is not None else got is None


def test_degen_mean_counts_short_responses_as_zero():
    result = metrics.degen_score([[7] * 7, [1, 2], [1, 2, 3, 4, 5]])
    assert result["score"] == pytest.approx((0.75 + 0 + 0) / 3)
    assert result["n_short"] == 1 and result["n"] == 3


def test_margin_accuracy_ties_do_not_count():
    assert metrics.margin_accuracy([-1.0, -5.0, -2.0, -3.0], [-2.0, -4.0, -2.0, -9.0]) == 0.5
    with pytest.raises(ValueError):
        metrics.margin_accuracy([1.0], [])


def test_mmlu_choice_argmax_first_on_ties():
    assert metrics.mmlu_choice([-3.0, -1.0, -2.0, -1.0]) == 1


def test_parts_are_disjoint_and_stable():
    ids = [f"q{i}" for i in range(50)]
    sizes = parse_part_sizes("A=10,B=15,C=20", None)
    parts = {p: sample_part(ids, p, sizes, seed=7) for p in "ABC"}
    assert [len(parts[p]) for p in "ABC"] == [10, 15, 20]
    assert len(set(parts["A"]) | set(parts["B"]) | set(parts["C"])) == 45
    assert sample_part(list(reversed(ids)), "B", sizes, seed=7) == parts["B"]  # file order does not matter
    assert sample_part(ids, "A", sizes, seed=8) != parts["A"]
    assert parse_part_sizes("10,15,20", None) == sizes
    assert parse_part_sizes(None, 5) == {"A": 5, "B": 5, "C": 5}
    with pytest.raises(DataError, match="only 50 items"):
        sample_part(ids, "C", {"A": 30, "B": 15, "C": 20}, seed=7)


def test_item_errors_name_file_line_and_field(tmp_path):
    path = tmp_path / "mmlu.jsonl"
    good = {"id": "a", "subject": "s", "question": "q", "choices": ["1", "2", "3", "4"], "answer": 1}
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "b", "answer": 4}) + "\n")
    with pytest.raises(DataError, match=r"mmlu.jsonl:2: item 'b' field 'answer'"):
        load_items("mmlu", path)
    path.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    with pytest.raises(DataError, match="duplicate id 'a'"):
        load_items("mmlu", path)


def test_ids_from_split_restrict_before_sampling():
    items = [{"id": f"g{i}", "question": "q", "answer": "#### 1"} for i in range(10)]
    chosen = select_items("gsm8k", items, part=None, sizes={}, seed=1, keep_ids=["g3", "g5"])
    assert [it["id"] for it in chosen] == ["g3", "g5"]
    with pytest.raises(DataError, match="not in the item file"):
        select_items("gsm8k", items, part=None, sizes={}, seed=1, keep_ids=["zz"])
