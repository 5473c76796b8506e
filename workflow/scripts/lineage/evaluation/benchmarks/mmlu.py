"""MMLU as lm-eval's mmlu/default task: the letter of highest log-likelihood after the assistant header.

The subject's description joins the system turn, the question and lettered choices are the user
turn, and each letter is scored as lm-eval's continuation (the newline after the header, then the
letter): one forward per batch of prompts when the four continuations differ only in the letter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lineage.evaluation import metrics
from lineage.evaluation.benchmark import Benchmark, ModelIndexEntry, Sample, TableRow

LETTERS = ("A", "B", "C", "D")
DESCRIPTION = "The following are multiple choice questions (with answers) about {subject}.\n\n"
QUESTION = "{question}\nA. {c[0]}\nB. {c[1]}\nC. {c[2]}\nD. {c[3]}\nAnswer:"


def messages(item: Mapping[str, Any]) -> tuple[str, list[dict[str, str]]]:
    """(task description for the system turn, user turn) of one item."""
    subject = str(item["subject"]).replace("_", " ")
    user = QUESTION.format(question=str(item["question"]).strip(), c=item["choices"])
    return DESCRIPTION.format(subject=subject), [{"role": "user", "content": user}]


def check(item: Mapping[str, Any]) -> str | None:
    if len(item["choices"]) != 4 or not all(isinstance(c, str) for c in item["choices"]):
        return "field 'choices' must hold 4 strings"
    if not 0 <= item["answer"] <= 3:
        return f"field 'answer' must be 0-3, got {item['answer']}"
    return None


def requests(chat, item: Mapping[str, Any]) -> tuple[str, list[tuple[list[int], list[int], bool]]]:
    """(prompt text, lm-eval's encoded (context, continuation, clean) for each letter)."""
    from lineage.evaluation.scoring import encode_pair

    description, user = messages(item)
    context = chat.render(chat.with_system(user, description))
    return context, [encode_pair(chat.encode, context, letter) for letter in LETTERS]


def shared_prefix_form(pairs) -> tuple[list[int], int, list[int]] | None:
    """(context + shared tokens, number of shared tokens, last token per letter) when the four
    continuations differ only in their final token; None otherwise.

    lm-eval moves the newline after the assistant header into the continuation, so each
    continuation is that newline plus the letter: the prompt still runs once for all four.
    """
    contexts = {tuple(ctx) for ctx, _, _ in pairs}
    heads = {tuple(cont[:-1]) for _, cont, _ in pairs}
    if len(contexts) != 1 or len(heads) != 1 or not all(clean and cont for _, cont, clean in pairs):
        return None
    (head,) = heads
    return list(pairs[0][0]) + list(head), len(head), [cont[-1] for _, cont, _ in pairs]


def run(model, chat, items: Sequence[dict], opts):
    """Letter of highest log-likelihood after the assistant header; one forward per batch of prompts."""
    from lineage.evaluation.scoring import choice_logprobs
    from lineage.evaluation.tasks import score_requests

    texts, groups, slow, n_tokens = [], {}, [], 0
    for index, item in enumerate(items):
        context, pairs = requests(chat, item)
        texts.append(context)
        n_tokens += len(pairs[0][0])
        form = shared_prefix_form(pairs)
        if form is None:  # a letter that merges with the prompt's last token: score each choice in full
            slow.append((index, [(ctx, cont) for ctx, cont, _ in pairs]))
        else:
            ids, tail, letter_ids = form
            groups.setdefault(tuple(letter_ids), []).append((index, ids, tail))
    logprobs: list[list[float] | None] = [None] * len(items)
    for letter_ids, members in groups.items():
        got = choice_logprobs(
            model,
            [m[1] for m in members],
            list(letter_ids),
            scored_tail=[m[2] for m in members],
            batch_size=opts.batch_size,
            pad_id=chat.pad_token_id(),
            max_batch_tokens=opts.max_batch_tokens,
            replicas=opts.replicas,
        )
        for (index, _, _), lp in zip(members, got):
            logprobs[index] = lp
    if slow:
        scores = score_requests(model, [req for _, reqs in slow for req in reqs], opts, chat.pad_token_id())
        for k, (index, _) in enumerate(slow):
            logprobs[index] = [s.logprob for s in scores[4 * k : 4 * k + 4]]
    records, correct = [], 0
    for item, text, lp in zip(items, texts, logprobs):
        choice = metrics.mmlu_choice(lp)
        correct += choice == item["answer"]
        records.append(
            {
                "id": BENCHMARK.item_id(item),
                "subject": item["subject"],
                "prompt": text,
                "loglikelihoods": lp,
                "choice": LETTERS[choice],
                "answer": LETTERS[item["answer"]],
                "correct": choice == item["answer"],
            }
        )
    return {"score": correct / len(items), "n_full_scoring": len(slow)}, records, n_tokens


BENCHMARK = Benchmark(
    name="mmlu",
    parts=("A", "B"),
    id_field="id",
    fields={"subject": str, "question": str, "choices": list, "answer": int},
    check=check,
    run=run,
    rows=(TableRow("MMLU A / B", "MMLU A / B (1000 each)", ("A", "B"), True),),
    generates=False,
    unit="prompt",
    model_index=ModelIndexEntry("MMLU", "accuracy", "cais/mmlu"),
    card_position=1,
    sample=Sample("resources/sample/eval/mmlu.jsonl", (40, 40)),
)
