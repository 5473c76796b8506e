"""One runner per benchmark of the card: build prompts, run the model, score, keep per-item records.

Every runner takes the loaded model, the checkpoint's ChatRenderer and the selected items,
and returns `(extras, records, n_tokens)`: `extras["score"]` is the card's number (a
fraction in 0-1), the rest are the secondary measures, and `n_tokens` is what the
throughput figure counts (scored tokens for log-likelihood, generated tokens otherwise).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lineage.evaluation import metrics
from lineage.evaluation.generation import generate_greedy
from lineage.evaluation.items import item_id
from lineage.evaluation.prompts import LETTERS, ChatRenderer, gsm8k_messages, ifeval_messages, mmlu_messages
from lineage.evaluation.packed_scoring import packed_loglikelihood
from lineage.evaluation.scoring import Score, choice_logprobs, encode_pair, encode_pairs, loglikelihood

DEFAULT_MAX_NEW_TOKENS = {"gsm8k": 512, "ifeval": 1280, "degen": 512}


@dataclass
class RunOptions:
    batch_size: int = 8
    max_new_tokens: int | None = None
    max_batch_tokens: int | None = None  # log-likelihood batches: rows x longest row
    pack_tokens: int | None = None  # log-likelihood on packed sequences of this many tokens (None: padded)
    cache: str = "dynamic"  # generation's KV cache (lineage/evaluation/generation.py)
    bucket: int = 1  # generation prompts padded to a multiple of this


def score_requests(model, requests, opts: RunOptions, pad_id: int) -> list[Score]:
    """Log-likelihood of each (context, continuation): packed when opts.pack_tokens, else padded batches."""
    if opts.pack_tokens:
        return packed_loglikelihood(model, requests, pack_tokens=opts.pack_tokens, pad_id=pad_id)
    return loglikelihood(model, requests, batch_size=opts.batch_size, pad_id=pad_id,
                         max_batch_tokens=opts.max_batch_tokens)


def mmlu_requests(chat: ChatRenderer, item: dict) -> tuple[str, list[tuple[list[int], list[int], bool]]]:
    """(prompt text, lm-eval's encoded (context, continuation, clean) for each letter)."""
    description, user = mmlu_messages(item)
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


def run_mmlu(model, chat: ChatRenderer, items: Sequence[dict], opts: RunOptions):
    """Letter of highest log-likelihood after the assistant header; one forward per batch of prompts."""
    texts, groups, slow, n_tokens = [], {}, [], 0
    for index, item in enumerate(items):
        context, pairs = mmlu_requests(chat, item)
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
                "id": item_id("mmlu", item),
                "subject": item["subject"],
                "prompt": text,
                "loglikelihoods": lp,
                "choice": LETTERS[choice],
                "answer": LETTERS[item["answer"]],
                "correct": choice == item["answer"],
            }
        )
    return {"score": correct / len(items), "n_full_scoring": len(slow)}, records, n_tokens


def _generate(model, chat: ChatRenderer, conversations: Sequence[list[dict]], opts: RunOptions, benchmark: str):
    prompts_text = [chat.render(chat.with_system(c)) for c in conversations]
    prompts = [chat.encode(t) for t in prompts_text]
    outs = generate_greedy(
        model,
        prompts,
        max_new_tokens=opts.max_new_tokens or DEFAULT_MAX_NEW_TOKENS[benchmark],
        stop_ids=chat.stop_token_ids(),
        pad_id=chat.pad_token_id(),
        batch_size=opts.batch_size,
        cache=opts.cache,
        bucket=opts.bucket,
    )
    texts = [chat.tokenizer.decode(list(o.token_ids), skip_special_tokens=True) for o in outs]
    return prompts_text, outs, texts


def run_gsm8k(model, chat: ChatRenderer, items: Sequence[dict], opts: RunOptions):
    """Generate a worked answer; exact match of lm-eval's strict-match (the score: the prompt asks for
    "#### N", so a check line after the answer must not change it) and flexible-extract (the last number)."""
    prompts, outs, texts = _generate(model, chat, [gsm8k_messages(it) for it in items], opts, "gsm8k")
    records, flexible, strict = [], 0, 0
    for item, prompt, out, text in zip(items, prompts, outs, texts):
        pred_flex, pred_strict = metrics.gsm8k_flexible(text), metrics.gsm8k_strict(text)
        ok_flex = metrics.gsm8k_exact_match(pred_flex, item["answer"])
        ok_strict = metrics.gsm8k_exact_match(pred_strict, item["answer"])
        flexible += ok_flex
        strict += ok_strict
        records.append(
            {
                "id": item_id("gsm8k", item),
                "prompt": prompt,
                "output": text,
                "finish_reason": out.finish_reason,
                "target": metrics.gsm8k_target(item["answer"]),
                "flexible_extract": pred_flex,
                "strict_match": pred_strict,
                "correct": ok_strict,
                "correct_flexible": ok_flex,
            }
        )
    n = len(items)
    extras = {
        "score": strict / n,
        "flexible_extract": flexible / n,
        "strict_match": strict / n,
        "n_length_stopped": sum(o.finish_reason == "length" for o in outs),
    }
    return extras, records, sum(len(o.token_ids) for o in outs)


def run_ifeval(model, chat: ChatRenderer, items: Sequence[dict], opts: RunOptions):
    """Strict prompt-level accuracy (the card's score), plus loose and instruction-level."""
    from lineage.evaluation import ifeval

    ifeval.registry()  # fail on a missing Punkt model before spending time on generation
    prompts, outs, texts = _generate(model, chat, [ifeval_messages(it) for it in items], opts, "ifeval")
    records, verdicts = [], []
    for item, prompt, out, text in zip(items, prompts, outs, texts):
        verdict = ifeval.check_response(item, text)
        verdicts.append(verdict)
        records.append(
            {
                "id": item_id("ifeval", item),
                "prompt": prompt,
                "output": text,
                "finish_reason": out.finish_reason,
                "instruction_id_list": item["instruction_id_list"],
                "strict": verdict["strict"],
                "loose": verdict["loose"],
                "correct": all(verdict["strict"]),
                "lm_eval_chance": verdict["lm_eval_chance"],
            }
        )
    agg = ifeval.aggregate(verdicts)
    # Where lm-eval's verdict is a draw (lineage/evaluation/ifeval.py): ours, and how often lm-eval's passes.
    chance = [{"item": rec["id"], **c} for rec in records for c in rec["lm_eval_chance"]]
    extras = {
        "score": agg["prompt_level_strict_acc"],
        **agg,
        "n_length_stopped": sum(o.finish_reason == "length" for o in outs),
        "lm_eval_chance": chance,
    }
    return extras, records, sum(len(o.token_ids) for o in outs)


def run_degen(model, chat: ChatRenderer, items: Sequence[dict], opts: RunOptions):
    """Mean seq-rep-4 over the generated token ids of each response (lower is better)."""
    prompts, outs, texts = _generate(model, chat, [it["messages"] for it in items], opts, "degen")
    result = metrics.degen_score([o.token_ids for o in outs])
    records = [
        {
            "id": item_id("degen", item),
            "prompt": prompt,
            "output": text,
            "n_tokens": len(out.token_ids),
            "finish_reason": out.finish_reason,
            "seq_rep_4": value,
            "short": len(out.token_ids) < 4,
        }
        for item, prompt, out, text, value in zip(items, prompts, outs, texts, result["per_item"])
    ]
    extras = {
        "score": result["score"],
        "n_short": result["n_short"],
        "mean_tokens": sum(len(o.token_ids) for o in outs) / len(outs),
        "n_length_stopped": sum(o.finish_reason == "length" for o in outs),
    }
    return extras, records, sum(len(o.token_ids) for o in outs)


def completion_text(chat: ChatRenderer, messages: list[dict], answer: str) -> tuple[str, str]:
    """(prompt, completion): the completion is the rendered assistant turn, end-of-turn included."""
    prompt = chat.render(chat.with_system(messages))
    full = chat.render(
        chat.with_system([*messages, {"role": "assistant", "content": answer}]), add_generation_prompt=False
    )
    if not full.startswith(prompt):
        raise ValueError(
            "the chat template does not render the prompt as a prefix of prompt + answer; cannot score the answer"
        )
    return prompt, full[len(prompt) :]


def run_margin(model, chat: ChatRenderer, items: Sequence[dict], opts: RunOptions):
    """Share of held-out battles where the preferred answer has the higher summed (and per-token mean) log-prob."""
    texts = [completion_text(chat, item["messages"], item[side]) for item in items for side in ("chosen", "rejected")]
    encoded = encode_pairs(chat.encode_batch, texts)
    requests = [(context, continuation) for context, continuation, _ in encoded]
    boundary_merges = sum(not clean for _, _, clean in encoded)
    prompts = [prompt for prompt, _ in texts[0::2]]
    scores = score_requests(model, requests, opts, chat.pad_token_id())
    chosen, rejected = scores[0::2], scores[1::2]
    records = [
        {
            "id": item_id("margin", item),
            "prompt_id": item.get("prompt_id"),
            "prompt": prompt,
            "chosen_logprob": c.logprob,
            "chosen_tokens": c.n_tokens,
            "rejected_logprob": r.logprob,
            "rejected_tokens": r.n_tokens,
            "correct": c.logprob > r.logprob,
            "correct_per_token": c.mean_logprob > r.mean_logprob,
            "margin": c.logprob - r.logprob,
            "per_token_margin": c.mean_logprob - r.mean_logprob,
            "truncated": c.truncated or r.truncated,
        }
        for item, prompt, c, r in zip(items, prompts, chosen, rejected)
    ]
    extras = {
        "score": metrics.margin_accuracy([c.logprob for c in chosen], [r.logprob for r in rejected]),
        "per_token_margin_acc": metrics.margin_accuracy(
            [c.mean_logprob for c in chosen], [r.mean_logprob for r in rejected]
        ),
        "mean_margin": sum(c.logprob - r.logprob for c, r in zip(chosen, rejected)) / len(items),
        "mean_per_token_margin": sum(c.mean_logprob - r.mean_logprob for c, r in zip(chosen, rejected)) / len(items),
        "n_truncated": sum(rec["truncated"] for rec in records),
        "n_boundary_merges": boundary_merges,
    }
    return extras, records, sum(s.n_tokens for s in scores)


RUNNERS: dict[str, Callable[..., tuple[dict[str, Any], list[dict[str, Any]], int]]] = {
    "mmlu": run_mmlu,
    "gsm8k": run_gsm8k,
    "ifeval": run_ifeval,
    "degen": run_degen,
    "margin": run_margin,
}
