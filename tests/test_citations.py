"""Citation cleaning: each marker style removed, sources sections dropped, code and prose untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from battle_factory import battle

from lineage.data.citations import clean_answer, clean_battles

SAMPLE = Path(__file__).resolve().parents[1] / "resources/sample/battles.jsonl"

MARKERS = {
    "numeric": (
        "Paris is the capital of France [1]. It is large[2][3].",
        "Paris is the capital of France. It is large.",
    ),
    "numeric_list": ("Water boils at 100 °C [1, 2] at sea level.", "Water boils at 100 °C at sea level."),
    "numeric_range": ("It was built in 1889 [1-3] for the fair.", "It was built in 1889 for the fair."),
    "numeric_en_dash": ("It was built in 1889[1–3], for the fair.", "It was built in 1889, for the fair."),
    "after_period": ("The study agrees.[4] Later work differs.", "The study agrees. Later work differs."),
    "start_of_line": ("Intro:\n\n[1] The first point holds.", "Intro:\n\nThe first point holds."),
    "footnote": (
        "Claim one.[^1] Claim two[^note].\n\n[^1]: Smith 2020.\n[^note]: Another source.",
        "Claim one. Claim two.",
    ),
    "fullwidth": ("The tower is 330 m tall【3†source】.", "The tower is 330 m tall."),
    "fullwidth_file": ("As the notes say 【12:0†notes.pdf】 the plan works.", "As the notes say the plan works."),
    "sup": ("Sugar raises it<sup>2</sup> quickly.", "Sugar raises it quickly."),
    "sup_bracket": ("Salt too<sup>[3]</sup>.", "Salt too."),
    "markdown_link": (
        "Read the [official docs](https://docs.python.org/3/library/re.html) first.",
        "Read the official docs first.",
    ),
    "link_with_parens": ("See [Foo](https://en.wikipedia.org/wiki/Foo_(bar)) here.", "See Foo here."),
    "numeric_link": ("Per the study ([1](https://a.example/x)), yes.", "Per the study, yes."),
    "reference_link": (
        "See [the guide][2] for details.\n\n[2]: https://guide.example.com",
        "See the guide for details.",
    ),
    "parenthesised": ("This holds (see [5]) in general.", "This holds (see) in general."),
}


@pytest.mark.parametrize("case", sorted(MARKERS))
def test_marker_styles(case):
    text, expected = MARKERS[case]
    cleaned, counts = clean_answer(text)
    assert cleaned == expected
    assert sum(counts.values()) >= 1
    assert "  " not in cleaned and " ." not in cleaned and " ," not in cleaned


SECTIONS = {
    "heading": "## Sources\n- [WHO](https://who.int)\n- https://cdc.gov\n",
    "bold_colon_inside": "**Sources:**\n1. Mayo Clinic - https://mayo.org\n2. NHS guidance\n",
    "bold_colon_outside": "**References**:\n* https://a.example\n",
    "plain_label": "Sources:\n- https://a.example\n\n- https://b.example",
    "references_h3": "---\n### References\n[1] https://x.org/paper\n[2] https://y.org/other",
    "citations": "Citations:\n[1] https://a.example\n[2] https://b.example",
    "further_reading": "Further reading\n- [Guide](https://guide.example)\n  A short description.\n",
    "inline_urls": "Sources: https://a.example, https://b.example",
    "numbered_brackets": "**Sources**\n【1†source】 https://a.example",
}


@pytest.mark.parametrize("case", sorted(SECTIONS))
def test_sources_sections_dropped(case):
    body = "Drink water regularly; most adults need about two litres a day."
    cleaned, counts = clean_answer(f"{body}\n\n{SECTIONS[case]}")
    assert cleaned == body
    assert counts["sources_section"] == 1


def test_trailing_bare_urls_dropped():
    cleaned, counts = clean_answer("Use the official installer.\n\nhttps://python.org\n<https://pypi.org>\n")
    assert cleaned == "Use the official installer." and counts["bare_url_line"] == 2


UNTOUCHED = [
    "Use `arr[1]` and `matrix[0][2]` to index; ``x[1]`` too.",
    "```python\nx = arr[1]  # see [1]\nprint(matrix[0][2])\n```",
    "~~~\n## Sources\n- https://a.example\n~~~",
    "Steps:\n- [x] install\n- [ ] configure",
    "Good sources of protein include beans [and lentils].",
    "Sources of fiber:\n- oats\n- lentils\n\nEnjoy your meals!",
    "Indexing matrix[0][2] or x[1].y or a[1] = 3 works in prose too.",
    "Keep  two spaces here, and a hard break  \nthere.",
    "![diagram](https://example.com/d.png)",
    "## Sources\n- https://only.example",
    "The Sources section of your essay should list every book.",
]


@pytest.mark.parametrize("text", UNTOUCHED)
def test_untouched(text):
    cleaned, counts = clean_answer(text)
    assert cleaned == text
    assert not counts


def test_code_survives_while_prose_is_cleaned():
    text = "Index with `arr[1]` as shown [1].\n\n```js\nconst a = b[2]; // [3]\n```\n\nDone [2]."
    cleaned, _ = clean_answer(text)
    assert cleaned == "Index with `arr[1]` as shown.\n\n```js\nconst a = b[2]; // [3]\n```\n\nDone."


def test_sources_inside_code_block_are_kept():
    text = "Example:\n\n```\n## Sources\n- https://a.example\n```"
    assert clean_answer(text)[0] == text


def test_clean_battles_stats():
    rows = [
        {
            "battle_id": "b1",
            "vote": "own_better",
            "own": {"model": "a", "answer": "Yes [1]."},
            "other": {"model": "b", "answer": None},
        },
        {
            "battle_id": "b2",
            "vote": "tie",
            "own": {"model": "a", "answer": "Plain."},
            "other": {"model": "b", "answer": "Text.\n\n## Sources\n- x"},
        },
    ]
    cleaned, stats, quarantine = clean_battles(rows)
    assert cleaned[0]["own"]["answer"] == "Yes." and cleaned[1]["other"]["answer"] == "Text."
    assert stats["answers"] == 3 and stats["answers_null"] == 1 and stats["answers_changed"] == 2
    assert stats["markers"]["numeric"] == 1 and stats["sections_dropped"] == 1 and not quarantine
    assert rows[0]["own"]["answer"] == "Yes [1]."  # input rows are not modified


def test_an_answer_of_only_citations_counts_as_empty_under_the_vote_policy():
    rows = [
        {
            "battle_id": "won",
            "vote": "own_better",
            "own": {"model": "a", "answer": "[1][2]"},
            "other": {"model": "b", "answer": "Fine."},
        },
        {
            "battle_id": "lost",
            "vote": "own_better",
            "own": {"model": "a", "answer": "Fine."},
            "other": {"model": "b", "answer": "【3†source】"},
        },
    ]
    cleaned, stats, quarantine = clean_battles(rows, file="clean.jsonl")
    assert [q["battle_id"] for q in quarantine] == ["won"] and quarantine[0]["field"] == "own.answer"
    assert "only citation markers" in quarantine[0]["reason"] and quarantine[0]["line"] == 1
    assert [r["battle_id"] for r in cleaned] == ["lost"] and cleaned[0]["other"]["answer"] is None
    assert stats["citation_only_answers"] == 2


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Protein helps muscles (Source: Harvard Health).", "Protein helps muscles."),
        ("Water boils at 100 °C [source].", "Water boils at 100 °C."),
        ("The moon is made of rock [citation needed].", "The moon is made of rock."),
        (
            "The study¹ found growth.²³ Then E = mc² and 5 cm² stay.",
            "The study found growth. Then E = mc² and 5 cm² stay.",
        ),
        ("Good sources of protein (see below).", "Good sources of protein (see below)."),
    ],
)
def test_source_notes_tags_and_superscript_markers_are_removed(text, expected):
    assert clean_answer(text)[0] == expected


def test_answers_that_differ_only_by_citations_are_quarantined_after_cleaning():
    rows = [
        battle("same", own="Pack light [1].", other="Pack light."),  # identical once cleaned
        battle("tie", vote="tie", own="Pack light [2].", other="Pack light."),  # a tie states no preference: kept
        battle("differ", own="Pack light [1].", other="Pack heavy."),
    ]
    cleaned, _, quarantine = clean_battles(rows, file="battles.jsonl")
    assert [r["battle_id"] for r in cleaned] == ["tie", "differ"]
    reasons = {q["battle_id"]: (q["field"], q["reason"]) for q in quarantine}
    assert reasons["same"] == (
        "other.answer",
        "after citation cleaning: is the same text as the preferred answer: the vote states no preference",
    )


def test_the_shipped_sample_pair_that_differs_by_a_marker_does_not_reach_the_pairs():
    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    (row,) = [r for r in rows if r["battle_id"] == "bt-001489"]
    cleaned, _, quarantine = clean_battles([row], file=str(SAMPLE))
    assert cleaned == [] and quarantine[0]["reason"].startswith("after citation cleaning: is the same text")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Pack light [Source 2].", "Pack light."),
        ("Pack light [Sources 1, 3].", "Pack light."),
        ("Pack light [sources 1-3].", "Pack light."),
        ("Pack light [Ref. 4].", "Pack light."),
        ("Pack light [refs 2 and 5].", "Pack light."),
        ("Pack light [source: 5].", "Pack light."),
        ("Pack light [citation #7].", "Pack light."),
        ("Pack light (Source 2).", "Pack light."),
        ("Pack light (References 1–3).", "Pack light."),
        ("Pack light (cite 4; 6).", "Pack light."),
    ],
)
def test_numbered_source_references_in_one_grammar(text, expected):
    assert clean_answer(text)[0] == expected


@pytest.mark.parametrize(
    "text",
    [
        "```python\nprint([1, 2, 3])\n```",  # code
        "Good sources of protein (see below).",
        "Read the source code (source files are in src/).",
        "Use `arr[1]` and matrix[0][2] here.",
        "The pair (1, 2) is the answer.",
        "See the reference manual, section 2.",
        "[Source code](#build) is linked above.",
    ],
)
def test_near_misses_of_source_references_stay(text):
    assert clean_answer(text)[0] == text
