"""Write the shipped samples of the Stage-1 chain's inputs (deterministic, no download).

    resources/sample/preference_mix.jsonl     DPO round 1 pairs in the Tulu-3 preference format
                                              (chosen: the general mix's answer; rejected: a
                                              truncated answer or one written for another prompt)
    resources/sample/verifier_prompts.jsonl   training-split prompts for the verifier rounds:
                                              GSM8K-style math with '#### N' answers, and
                                              IFEval-style prompts with checker ids and kwargs

They stand in for the Tulu-3 preference mix + UltraFeedback and for the training splits of
GSM8K- and IFEval-style prompts, which a full-scale run reads from local copies instead.
Run as: python tools/make_chain_samples.py --general-mix resources/sample/general_mix.jsonl \
            --out-dir resources/sample
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))

from lineage.io import load_jsonl, write_jsonl  # noqa: E402

NAMES = ["Ana", "Ben", "Chloe", "Dev", "Elif", "Farid", "Grace", "Hugo", "Ines", "Jonah", "Kira", "Luis"]
THINGS = ["marbles", "stamps", "shells", "cards", "coins", "beads", "badges", "pebbles"]
TOPICS = [
    "how bees make honey",
    "why leaves change colour in autumn",
    "how to brew a cup of tea",
    "what a library card is for",
    "how a bicycle chain works",
    "why we need sleep",
    "how to plant a tomato seedling",
    "what a rainbow is",
    "how to fold a paper boat",
    "why bread rises",
    "how a compass points north",
    "what makes a good neighbour",
]
# (instruction id, kwargs, sentence added to the prompt) from the IFEval instruction registry.
CONSTRAINTS = [
    ("change_case:english_lowercase", {}, "Write your whole answer in lowercase letters only."),
    ("punctuation:no_comma", {}, "Do not use any commas."),
    ("length_constraints:number_words", {"relation": "less than", "num_words": 40}, "Use fewer than 40 words."),
    ("detectable_format:title", {}, "Give the answer a title wrapped in double angular brackets, like <<title>>."),
    ("keywords:existence", {"keywords": ["simple"]}, "Use the word 'simple' at least once."),
    (
        "startend:end_checker",
        {"end_phrase": "Is there anything else?"},
        "Finish with the exact phrase 'Is there anything else?'.",
    ),
]


def math_prompts(rng: random.Random, count: int) -> list[dict]:
    """Sticker-style arithmetic, as in the general mix the Stage-1 SFT trains on."""
    rows = []
    for number in range(count):
        name, thing = rng.choice(NAMES), rng.choice(THINGS)
        a, b, c = rng.randint(12, 90), rng.randint(2, 11), rng.randint(2, 30)
        if number % 2:
            question = (
                f"{name} had {a} {thing}, gave away {b} and then found {c} more. How many {thing} does {name} have now?"
            )
            work, result = f"{a} - {b} = {a - b}, and {a - b} + {c} = {a - b + c}.", a - b + c
        else:
            question = f"{name} fills {b} jars with {c} {thing} each. How many {thing} are in the jars?"
            work, result = f"{b} x {c} = {b * c}.", b * c
        rows.append(
            {"id": f"vm-{number:04d}", "type": "math", "question": question, "answer": f"{work}\n#### {result}"}
        )
    return rows


def if_prompts(rng: random.Random, count: int) -> list[dict]:
    rows = []
    for number in range(count):
        topic = TOPICS[number % len(TOPICS)]
        chosen = rng.sample(CONSTRAINTS, 1 if number % 3 else 2)
        text = " ".join([f"Explain {topic}."] + [sentence for _, _, sentence in chosen])
        rows.append(
            {
                "id": f"vi-{number:04d}",
                "type": "if",
                "prompt": text,
                "instruction_id_list": [i for i, _, _ in chosen],
                "kwargs": [dict(k) for _, k, _ in chosen],
            }
        )
    return rows


def preference_pairs(general_mix: list[dict], rng: random.Random, count: int) -> list[dict]:
    """Chosen: a row's own answer. Rejected: its first sentence cut short, or another row's answer."""
    single = [r for r in general_mix if len(r["messages"]) == 2]
    picked = rng.sample(single, min(count, len(single)))
    rows = []
    for number, row in enumerate(picked):
        prompt, answer = row["messages"][0], row["messages"][1]["content"]
        if number % 2:
            other = rng.choice([r for r in single if r is not row])
            rejected = other["messages"][1]["content"]
        else:
            words = answer.split()
            rejected = " ".join(words[: max(1, len(words) // 4)])
        if rejected.strip() == answer.strip():
            continue
        rows.append(
            {
                "id": f"pm-{number:05d}",
                "source": "preference_mix",
                "messages": [prompt],
                "chosen": answer,
                "rejected": rejected,
            }
        )
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--general-mix", required=True)
    parser.add_argument("--out-dir", required=True, type=Path)
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--pairs", type=int, default=400)
    parser.add_argument("--math-prompts", type=int, default=32)
    parser.add_argument("--if-prompts", type=int, default=32)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    pairs = preference_pairs(load_jsonl(args.general_mix), rng, args.pairs)
    prompts = math_prompts(rng, args.math_prompts) + if_prompts(rng, args.if_prompts)
    write_jsonl(args.out_dir / "preference_mix.jsonl", pairs)
    write_jsonl(args.out_dir / "verifier_prompts.jsonl", prompts)
    print(f"{len(pairs)} preference pairs, {len(prompts)} verifier prompts -> {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
