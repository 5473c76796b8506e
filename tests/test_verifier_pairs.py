"""Verifier pairs: checked answers become chosen, failed ones rejected; eval items never train."""

from __future__ import annotations

import json

import pytest
import torch
import verifier_pairs
from _eval_fixtures import make_checkpoint, write_items
from workflow_helpers import REPO

from lineage.checkpoints.load import load_model
from lineage.data.verifier import Overlap, build_pairs, find_overlap, normalize, verify
from lineage.evaluation.generation import generate
from lineage.evaluation.prompts import ChatRenderer
from lineage.evaluation.seeded_sampling import SeededSampler
from lineage.io import DataError, load_jsonl

MATH = {
    "id": "vm-1",
    "type": "math",
    "question": "Ana has 3 jars of 4 beads. How many beads?",
    "answer": "3 x 4 = 12.\n#### 12",
}
LOWER = {
    "id": "vi-1",
    "type": "if",
    "prompt": "Explain tea. Write in lowercase only.",
    "instruction_id_list": ["change_case:english_lowercase"],
    "kwargs": [{}],
}
NO_COMMA_SHORT = {
    "id": "vi-2",
    "type": "if",
    "prompt": "Explain rain in under 10 words, without commas.",
    "instruction_id_list": ["punctuation:no_comma", "length_constraints:number_words"],
    "kwargs": [{}, {"relation": "less than", "num_words": 10}],
}


@pytest.mark.parametrize(
    "item, passing, failing",
    [
        (MATH, ["3 x 4 = 12. The answer is 12.", "12"], ["The answer is 13.", "I do not know."]),
        (LOWER, ["tea is a drink made from leaves."], ["Tea is a drink.", "TEA"]),
        (NO_COMMA_SHORT, ["rain is water falling from clouds"], ["rain, as you know, falls", "rain " * 12]),
    ],
    ids=["math", "lowercase", "two constraints"],
)
def test_checkers_pass_and_fail_known_answers(item, passing, failing):
    assert all(verify(item, text) for text in passing)
    assert not any(verify(item, text) for text in failing)


def test_pairs_take_verified_answers_as_chosen_and_failed_ones_as_rejected():
    items = [MATH, LOWER, NO_COMMA_SHORT]
    samples = [
        ["The answer is 12.", "The answer is 11.", "12 beads.", "The answer is 12."],  # a repeat counts once
        ["Tea is hot.", "TEA!"],  # no verified answer: no pair
        ["rain falls", "rain, falls", "rain falls from clouds", "Rain, rain"],
    ]
    verdicts = [[verify(item, text) for text in row] for item, row in zip(items, samples)]
    rows, stats = build_pairs(items, samples, verdicts, max_pairs_per_prompt=5, round_name="dpo2")
    assert [(r["prompt_id"], r["chosen"], r["rejected"]) for r in rows] == [
        ("vm-1", "The answer is 12.", "The answer is 11."),
        ("vi-2", "rain falls", "rain, falls"),
        ("vi-2", "rain falls from clouds", "Rain, rain"),
    ]
    assert all(
        verify(i, r["chosen"]) and not verify(i, r["rejected"])
        for r in rows
        for i in items
        if i["id"] == r["prompt_id"]
    )
    assert stats["by_type"]["math"] == {
        "prompts": 1,
        "samples": 4,
        "verified": 3,
        "prompts_with_pairs": 1,
        "pairs": 1,
        "acceptance_rate": 0.75,
    }
    assert stats["by_type"]["if"]["prompts_with_pairs"] == 1 and stats["by_type"]["if"]["pairs"] == 2
    assert stats["total"]["acceptance_rate"] == round(5 / 10, 4)
    assert rows[0]["messages"] == [{"role": "user", "content": rows[0]["messages"][0]["content"]}]
    assert MATH["question"] in rows[0]["messages"][0]["content"]  # phrased as the GSM8K eval phrases it


def test_a_planted_eval_item_among_the_training_prompts_is_refused(tmp_path):
    items = write_items(tmp_path / "items")
    prompts = load_jsonl(REPO / "resources/sample/verifier_prompts.jsonl")
    evaluation = {str(items[b]): load_jsonl(items[b]) for b in ("gsm8k", "ifeval")}
    assert find_overlap(prompts, evaluation) == []
    planted = dict(MATH, id="vm-planted", question="  TOM has 2 apples, and buys 3 more: how many apples?? ")
    assert normalize(planted["question"]) == normalize(load_jsonl(items["gsm8k"])[2]["question"])
    assert find_overlap([*prompts, planted], evaluation) == [Overlap(len(prompts), str(items["gsm8k"]), 2)]
    file = tmp_path / "prompts.jsonl"
    file.write_text("".join(json.dumps(p) + "\n" for p in [*prompts, planted]))
    with pytest.raises(DataError, match=r"1 training prompt\(s\) repeat evaluation items.*vm-planted") as err:
        verifier_pairs.load_prompts(str(file), [str(items["gsm8k"]), str(items["ifeval"])])
    assert f"{file}:{len(prompts) + 1} ('vm-planted') repeats {items['gsm8k']}:3" in str(err.value)


def test_shipped_verifier_prompts_do_not_repeat_any_shipped_eval_item():
    prompts = load_jsonl(REPO / "resources/sample/verifier_prompts.jsonl")
    evaluation = {p.name: load_jsonl(p) for p in sorted((REPO / "resources/sample/eval").glob("*.jsonl"))}
    assert {p["type"] for p in prompts} == {"math", "if"}
    assert find_overlap(prompts, evaluation) == []


def test_a_prompt_missing_a_field_names_the_line(tmp_path):
    file = tmp_path / "prompts.jsonl"
    file.write_text(json.dumps(MATH) + "\n" + json.dumps({"id": "x", "type": "math", "question": "q"}) + "\n")
    with pytest.raises(DataError, match=rf"{file}:2: field 'answer' is missing"):
        verifier_pairs.load_prompts(str(file), [])


def test_sampling_is_reproducible_and_draws_distinct_answers(tmp_path):
    model_dir = make_checkpoint(tmp_path / "ckpt")
    model, chat = load_model(model_dir).eval(), ChatRenderer(model_dir)
    prompts = [chat.encode(chat.render(chat.with_system([{"role": "user", "content": t}]))) for t in ("a", "b c")]

    def draw(seed):
        out = generate(
            model,
            prompts,
            SeededSampler(seed, temperature=1.0, top_p=1.0, samples=4),
            max_new_tokens=6,
            stop_ids=chat.stop_token_ids(),
            pad_id=chat.pad_token_id(),
            batch_size=2,
        )
        return [[g.token_ids for g in row] for row in out]

    first = draw(1)
    assert len(first) == 2 and all(len(row) == 4 for row in first)
    assert draw(1) == first
    assert draw(2) != first
    assert len(set(first[0])) > 1, "samples of one prompt differ"


def test_a_prompts_samples_do_not_depend_on_its_batch_or_decoder(tmp_path):
    """Draws belong to the prompt (seed, prompt, sample, position): any batch size, and generate() or the
    graph decoder (run eagerly here, the same step it captures on a GPU), give the same answers."""
    model_dir = make_checkpoint(tmp_path / "ckpt")
    model, chat = load_model(model_dir).eval(), ChatRenderer(model_dir)
    texts = ("a", "b c", "d e f", "g", "h i j k")
    prompts = [chat.encode(chat.render(chat.with_system([{"role": "user", "content": t}]))) for t in texts]

    def draw(batch_size, cache="dynamic"):
        out = generate(
            model,
            prompts,
            SeededSampler(11, temperature=1.0, top_p=0.9, samples=3),
            max_new_tokens=6,
            stop_ids=chat.stop_token_ids(),
            pad_id=chat.pad_token_id(),
            batch_size=batch_size,
            cache=cache,
        )
        return [[g.token_ids for g in row] for row in out]

    alone = draw(1)
    assert draw(2) == alone and draw(5) == alone
    assert draw(2, "graph") == alone and draw(5, "graph") == alone
    assert len({answer for row in alone for answer in row}) > 5


def test_gumbel_noise_samples_the_softmax():
    """argmax(logits + noise) over 40,000 independent keys lands on each token at its softmax probability."""
    from lineage.evaluation.seeded_sampling import gumbel, uniform

    logits = torch.tensor([2.0, 1.0, 0.0, -1.0])
    keys = torch.arange(40_000)
    picks = (logits + gumbel(3, keys, 0, 4)).argmax(-1)
    frequencies = torch.bincount(picks, minlength=4).double() / len(keys)
    assert torch.allclose(frequencies, torch.softmax(logits.double(), -1), atol=0.01)
    u = uniform(3, keys[:1000], 5, 50)
    assert 0 < u.min() and u.max() < 1 and abs(u.mean().item() - 0.5) < 0.01
    assert not torch.equal(uniform(3, keys[:10], 5, 50), uniform(3, keys[:10], 6, 50))  # a new step, new noise
    assert not torch.equal(uniform(3, keys[:10], 5, 50), uniform(4, keys[:10], 5, 50))  # a new seed too


def test_the_script_pairs_what_its_checker_verified(tmp_path, monkeypatch):
    """End to end on a real checkpoint: every chosen answer passed the checker, every rejected one failed."""
    model_dir = make_checkpoint(tmp_path / "ckpt")
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(
        "".join(json.dumps(dict(LOWER, id=f"vi-{i}", prompt=f"Topic {i}. Lowercase.")) + "\n" for i in range(4))
    )
    judged = {}

    def oracle(item, text):  # a checker whose verdicts are known: even-length answers pass
        judged[(item["id"], text)] = len(text) % 2 == 0
        return judged[(item["id"], text)]

    monkeypatch.setattr(verifier_pairs, "verify", oracle)
    out, stats = tmp_path / "pairs.jsonl", tmp_path / "stats.json"
    verifier_pairs.main(
        [
            "--model",
            str(model_dir),
            "--round",
            "dpo2",
            "--prompts",
            str(prompts),
            "--samples",
            "6",
            "--max-new-tokens",
            "8",
            "--out",
            str(out),
            "--stats",
            str(stats),
        ]
    )
    rows = load_jsonl(out)
    assert rows
    assert all(judged[(r["prompt_id"], r["chosen"])] and not judged[(r["prompt_id"], r["rejected"])] for r in rows)
    summary = json.loads(stats.read_text())
    assert summary["total"]["samples"] == 24 and 0 < summary["total"]["verified"] < 24
    assert summary["total"]["pairs"] == len(rows)


def test_the_shipped_chain_samples_are_what_their_script_writes(tmp_path):
    import make_chain_samples

    make_chain_samples.main(
        ["--general-mix", str(REPO / "resources/sample/general_mix.jsonl"), "--out-dir", str(tmp_path)]
    )
    for name in ("preference_mix.jsonl", "verifier_prompts.jsonl"):
        assert (tmp_path / name).read_bytes() == (REPO / "resources/sample" / name).read_bytes(), name
    pairs = load_jsonl(tmp_path / "preference_mix.jsonl")
    assert all(p["chosen"].strip() != p["rejected"].strip() for p in pairs)


def test_the_audit_reports_acceptance_per_round_and_prompt_type(tmp_path):
    import verifier_audit

    files = []
    for number, name in enumerate(("dpo2", "dpo3")):
        samples = [
            ["The answer is 12."] * (number + 1) + ["The answer is 1."],
            ["tea is a drink made from the leaves of a plant.", "Tea is a drink."],
        ]
        items = [MATH, LOWER]
        verdicts = [[verify(i, t) for t in row] for i, row in zip(items, samples)]
        _, stats = build_pairs(items, samples, verdicts, max_pairs_per_prompt=2, round_name=name)
        files.append(tmp_path / f"{name}.json")
        files[-1].write_text(json.dumps(stats))
    verifier_audit.main([*map(str, files), "--out-json", str(tmp_path / "a.json"), "--out-md", str(tmp_path / "a.md")])
    table = (tmp_path / "a.md").read_text()
    assert "| dpo2 | ? | 1 | math (GSM8K-style, final number) | 2 | 1 | 50.0% | 1 | 1 |" in table
    assert "| dpo3 | ? | 1 | math (GSM8K-style, final number) | 3 | 2 | 66.7% | 1 | 1 |" in table
    assert "| dpo3 | ? | 1 | instructions (IFEval checkers, strict) | 2 | 1 | 50.0% | 1 | 1 |" in table
    assert [r["round"] for r in json.loads((tmp_path / "a.json").read_text())["rounds"]] == ["dpo2", "dpo3"]
