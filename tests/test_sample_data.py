"""Checks on the shipped sample data in resources/sample and on the script that writes it.

The battle invariants are recomputed here with small code of their own (a minimal citation
cleaner and the dedup policy), independent of the pipeline's data stages, so that a change to
either side shows up as a disagreement with the card's counts.

Run as:
python -m pytest -q tests/test_sample_data.py
"""

import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "resources" / "sample"
SCRIPT = ROOT / "tools" / "make_sample_data.py"
DECISIVE = {"own_better": "own", "other_better": "other"}
LOSER = {"own_better": "other", "other_better": "own"}


def load(name):
    with open(SAMPLE / name, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def norm(text):
    """Lowercase and collapse whitespace, the key the eval/training disjointness is defined on."""
    return " ".join(text.lower().split())


@pytest.fixture(scope="module")
def battles():
    return load("battles.jsonl")


# -----------------------------------------------------------------------------
# A minimal cleaner and the dedup policy, written independently of the pipeline

SECTION_LABEL = re.compile(r"^(#{1,6}\s+)?(\*\*)?(sources|references)(:\*\*|\*\*:|:)?\s*$", re.I)
SECTION_BODY = re.compile(r"^\s*$|^\s*([-*]|\d+\.)\s+\S|^\s*https?://\S+\s*$")
FOOTNOTE_DEF = re.compile(r"^\[\^\d+\]:.*$", re.M)
MARKERS = re.compile(r"(?<![\w\]])(\[\d+(?:\s*[-,]\s*\d+)*\])+|\[\^\d+\]|【[^】]*】|<sup>\d+</sup>")
LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")


def clean(text):
    """Drop a trailing sources section, footnote definitions, markers and link targets."""
    lines = text.split("\n")
    for i in range(len(lines) - 1, 0, -1):
        if SECTION_LABEL.match(lines[i].strip()) and all(SECTION_BODY.match(line) for line in lines[i + 1 :]):
            lines = lines[:i]
            break
    text = FOOTNOTE_DEF.sub("", "\n".join(lines))
    text = MARKERS.sub("", LINK.sub(r"\1", text))
    return " ".join(text.split())


def dedup(battles):
    """prompt_id -> (kept battle, its group): most wins, then latest created_at, then larger battle_id."""
    by_prompt = defaultdict(list)
    for b in battles:
        if b["vote"] in DECISIVE:
            by_prompt[b["prompt_id"]].append(b)
    latest = lambda group: max(group, key=lambda b: (b["created_at"], b["battle_id"]))
    kept = {}
    for pid, group in by_prompt.items():
        by_answer = defaultdict(list)
        for b in group:
            by_answer[clean(b[DECISIVE[b["vote"]]]["answer"])].append(b)
        best = max(by_answer.values(), key=lambda g: (len(g), latest(g)["created_at"], latest(g)["battle_id"]))
        kept[pid] = (latest(best), best, by_answer)
    return kept


def loser(b):
    return b[LOSER[b["vote"]]]["answer"]


# -----------------------------------------------------------------------------
# Determinism


def test_rerun_is_byte_identical(tmp_path):
    subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path)], check=True, capture_output=True)
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.jsonl"))
    chain = {Path("preference_mix.jsonl"), Path("verifier_prompts.jsonl")}  # make_chain_samples.py writes these
    shipped = sorted(p.relative_to(SAMPLE) for p in SAMPLE.rglob("*.jsonl") if p.relative_to(SAMPLE) not in chain)
    assert made == shipped
    for rel in made:
        assert (tmp_path / rel).read_bytes() == (SAMPLE / rel).read_bytes(), f"{rel} differs from a fresh run"


def test_sample_is_small():
    total = sum(p.stat().st_size for p in SAMPLE.rglob("*") if p.is_file())
    assert total < 4_000_000, total


# -----------------------------------------------------------------------------
# Battle export invariants (the card's counts)


def test_vote_counts(battles):
    assert len(battles) == 236
    assert Counter(b["vote"] for b in battles) == {"own_better": 106, "other_better": 72, "tie": 34, "both_bad": 24}


def test_battle_rows_are_well_formed(battles):
    assert len({b["battle_id"] for b in battles}) == len(battles)
    conversations = {}
    for b in battles:
        assert isinstance(b["prompt_id"], int) and b["prompt_id"] >= 1
        assert b["messages"][-1]["role"] == "user"
        assert [m["role"] for m in b["messages"]] in (["user"], ["user", "assistant", "user"])
        assert conversations.setdefault(b["prompt_id"], b["messages"]) == b["messages"], (
            "one prompt_id, two conversations"
        )
        assert b["own"]["model"] == "ember-stage1" and b["other"]["model"] != "ember-stage1"
        assert re.fullmatch(r"2026-\d\d-\d\dT\d\d:\d\d:\d\dZ", b["created_at"])
        if b["vote"] in DECISIVE:
            assert (b[DECISIVE[b["vote"]]]["answer"] or "").strip(), "empty preferred answer"
        else:
            assert b["own"]["answer"] and b["other"]["answer"], "tie/both_bad needs both answers"
    multi = sum(len(b["messages"]) == 3 for b in battles)
    assert 0.05 < multi / len(battles) < 0.25


def test_decisive_prompts_and_holdout(battles):
    decisive = {b["prompt_id"] for b in battles if b["vote"] in DECISIVE}
    ties = {b["prompt_id"] for b in battles if b["vote"] not in DECISIVE}
    assert len(decisive) == 140
    assert not decisive & ties, "tie and both_bad battles have prompt ids of their own"
    assert len(ties) < sum(b["vote"] not in DECISIVE for b in battles), "some tie prompts repeat"
    assert sum(pid % 5 == 0 for pid in decisive) == 29


def test_dedup_keeps_one_battle_per_prompt(battles):
    kept = dedup(battles)
    assert len(kept) == 140
    shapes = Counter()
    for _, (_, best, by_answer) in kept.items():
        wins = sorted((len(g) for g in by_answer.values()), reverse=True)
        shapes[tuple(wins)] += 1
        raw = {b[DECISIVE[b["vote"]]]["answer"] for b in best}
        if len(best) > 1 and len(raw) > 1:
            shapes["same answer, different markers"] += 1
    # 108 single battles; 20 + 2 prompts whose preferred answer wins two or three times; 4 where
    # answer X wins twice and Y once; 6 where X and Y win once each (the later one is kept)
    assert (shapes[(1,)], shapes[(2,)], shapes[(3,)], shapes[(2, 1)], shapes[(1, 1)]) == (108, 20, 2, 4, 6)
    assert shapes["same answer, different markers"] >= 1


def test_one_one_ties_go_to_the_latest(battles):
    for _, (keep, _, by_answer) in dedup(battles).items():
        if sorted(len(g) for g in by_answer.values()) == [1, 1]:
            assert keep["created_at"] == max(g[0]["created_at"] for g in by_answer.values())


def test_missing_losers(battles):
    kept = dedup(battles)
    unrecoverable, recovered_from_duplicate = [], []
    for pid, (keep, best, _) in kept.items():
        if loser(keep) is None:
            if any(loser(b) is not None for b in best):
                recovered_from_duplicate.append(pid)
            else:
                unrecoverable.append(pid)
    assert len(unrecoverable) == 5
    assert len(recovered_from_duplicate) == 2
    assert len(kept) - len(unrecoverable) == 135
    assert not [pid for pid in unrecoverable if pid % 5 == 0], "every holdout pair is complete"
    superseded_null = [
        b
        for pid, (keep, best, groups) in kept.items()
        for g in groups.values()
        for b in g
        if b is not keep and loser(b) is None
    ]
    assert superseded_null, "some superseded duplicates lack a loser too"


def test_winning_answers_are_longer(battles):
    diffs = [
        len(b[DECISIVE[b["vote"]]]["answer"].split()) - len(loser(b).split())
        for b in battles
        if b["vote"] in DECISIVE and loser(b)
    ]
    assert 60 < sum(diffs) / len(diffs) < 120


def test_citation_styles_and_lookalikes_present(battles):
    answers = [b[side]["answer"] for b in battles for side in ("own", "other") if b[side]["answer"]]
    text = "\n".join(answers)
    for pattern in [
        r"\[\d\]",
        r"\[\d\]\[\d\]",
        r"\[\d, \d\]",
        r"\[1-\d\]",
        r"\[\^\d\]",
        r"^\[\^\d\]: ",
        r"【\d+†source】",
        r"【\d+:\d+†\w+\.pdf】",
        r"<sup>\d</sup>",
        r"\]\(https://",
        r"^## Sources$",
        r"^\*\*Sources:\*\*$",
        r"^Sources:$",
        r"^### References$",
        r"^References:$",
    ]:
        assert re.search(pattern, text, re.M), f"no answer carries {pattern!r}"
    for lookalike in ["matrix[0][2]", "`arr[1]`", "print(arr[1])", "- [x] ", "sources of protein"]:
        assert lookalike in text, lookalike
    with_citations = [a for a in answers if clean(a) != " ".join(a.split())]
    assert 0.25 < len(with_citations) / len(answers) < 0.45


# -----------------------------------------------------------------------------
# Arena export, general mix and eval items


def test_arena_rows():
    rows = load("battles_arena.jsonl")
    assert len(rows) == 24
    assert {r["winner"] for r in rows} == {"model_a", "model_b", "tie", "tie (bothbad)"}
    assert any(r["model_a"] == "ember-stage1" for r in rows) and any(r["model_b"] == "ember-stage1" for r in rows)
    for r in rows:
        a, b = r["conversation_a"], r["conversation_b"]
        assert a[-1]["role"] == b[-1]["role"] == "assistant" and a[:-1] == b[:-1]
        assert r["turn"] == sum(m["role"] == "user" for m in a) and r["language"] == "English"
        assert isinstance(r["tstamp"], float) and isinstance(r["question_id"], str)


def test_general_mix_rows():
    rows = load("general_mix.jsonl")
    assert 2500 <= len(rows) <= 3500
    assert len({r["id"] for r in rows}) == len(rows)
    assert {r["source"] for r in rows} == {"instructions", "math", "constraints", "sharegpt_style", "flan_style"}
    for r in rows:
        roles = [m["role"] for m in r["messages"]]
        assert roles[0] == "user" and roles[-1] == "assistant"
        assert all(x != y for x, y in zip(roles, roles[1:]))
        if r["source"] == "math":
            assert re.search(r"\nThe answer is -?\d+\.$", r["messages"][-1]["content"])
    assert any(len(r["messages"]) > 2 for r in rows)


def eval_texts():
    """Every eval item's prompt text, per file."""
    return {
        "mmlu": [r["question"] for r in load("eval/mmlu.jsonl")],
        "gsm8k": [r["question"] for r in load("eval/gsm8k.jsonl")],
        "ifeval": [r["prompt"] for r in load("eval/ifeval.jsonl")],
        "gen_prompts": [r["messages"][0]["content"] for r in load("eval/gen_prompts.jsonl")],
    }


def test_eval_items_are_disjoint_from_general_mix_and_each_other():
    mix = {norm(m["content"]) for r in load("general_mix.jsonl") for m in r["messages"]}
    seen = set()
    for name, texts in eval_texts().items():
        keys = [norm(t) for t in texts]
        assert len(set(keys)) == len(keys), f"{name} repeats an item"
        assert not set(keys) & mix, f"{name} shares items with the general mix"
        assert not set(keys) & seen, f"{name} shares items with another eval set"
        seen |= set(keys)


def test_mmlu_format():
    rows = load("eval/mmlu.jsonl")
    assert len(rows) == 240 and len({r["subject"] for r in rows}) == 10
    assert Counter(r["answer"] for r in rows) == {0: 60, 1: 60, 2: 60, 3: 60}
    assert all(len(r["choices"]) == 4 and len(set(r["choices"])) == 4 for r in rows)


def test_gsm8k_format():
    rows = load("eval/gsm8k.jsonl")
    assert len(rows) == 160
    assert all(re.search(r"\n#### -?\d+$", r["answer"]) for r in rows)
    assert any(re.search(r"\d,\d{3}", r["answer"]) for r in rows), "thousands separators in the working"


IFEVAL_KWARGS = {  # argument names of lm-eval's IFEval registry
    "punctuation:no_comma": set(),
    "change_case:english_lowercase": set(),
    "change_case:english_capital": set(),
    "detectable_format:number_bullet_lists": {"num_bullets"},
    "detectable_format:title": set(),
    "detectable_format:json_format": set(),
    "keywords:existence": {"keywords"},
    "keywords:forbidden_words": {"forbidden_words"},
    "length_constraints:number_words": {"relation", "num_words"},
    "length_constraints:number_paragraphs": {"num_paragraphs"},
    "startend:end_checker": {"end_phrase"},
    "startend:quotation": set(),
    "detectable_content:postscript": {"postscript_marker"},
    "combination:repeat_prompt": {"prompt_to_repeat"},
}


def test_ifeval_format():
    rows = load("eval/ifeval.jsonl")
    assert len(rows) == 240 and len({r["key"] for r in rows}) == 240
    for r in rows:
        assert 1 <= len(r["instruction_id_list"]) <= 3 and len(r["kwargs"]) == len(r["instruction_id_list"])
        for iid, kwargs in zip(r["instruction_id_list"], r["kwargs"]):
            assert set(kwargs) == IFEVAL_KWARGS[iid], (iid, kwargs)
            if iid == "length_constraints:number_words":
                assert kwargs["relation"] in ("less than", "at least")
            if iid == "combination:repeat_prompt":
                assert r["prompt"].startswith(kwargs["prompt_to_repeat"])


def test_gen_prompts_format():
    rows = load("eval/gen_prompts.jsonl")
    assert len(rows) == 120
    assert all(r["messages"][0]["role"] == "user" and len(r["messages"]) == 1 for r in rows)
