"""What the benchmarks' runners share: run options, log-likelihood of requests, batched generation,
and the completion text of an answer. Each runner (a module of lineage.evaluation.benchmarks) takes
the loaded model, the checkpoint's ChatRenderer and the selected items, and returns
`(extras, records, n_tokens)`: `extras["score"]` is the card's number (a fraction in 0-1), the rest
are the secondary measures, and `n_tokens` is what the throughput figure counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lineage.evaluation.benchmark import Benchmark
from lineage.evaluation.generation import generate_greedy
from lineage.evaluation.packed_scoring import packed_loglikelihood
from lineage.evaluation.prompts import ChatRenderer
from lineage.evaluation.replicas import ONE, Replicas
from lineage.evaluation.scoring import Score, loglikelihood


@dataclass
class RunOptions:
    batch_size: int = 8
    max_new_tokens: int | None = None  # None: the benchmark's own
    max_batch_tokens: int | None = None  # log-likelihood batches: rows x longest row
    pack_tokens: int | None = None  # log-likelihood on packed sequences of this many tokens (None: padded)
    cache: str = "dynamic"  # generation's KV cache (lineage/evaluation/decoders.py)
    bucket: int = 1  # generation prompts padded to a multiple of this
    replicas: Replicas = ONE  # the ranks sharing the batches (lineage/evaluation/replicas.py)

    def new_tokens(self, benchmark: Benchmark) -> int | None:
        """How many tokens `benchmark` generates at most: these options' if set, else its own (None: it scores)."""
        return (self.max_new_tokens or benchmark.max_new_tokens) if benchmark.generates else None


def score_requests(model, requests, opts: RunOptions, pad_id: int) -> list[Score]:
    """Log-likelihood of each (context, continuation): packed when opts.pack_tokens, else padded batches."""
    if opts.pack_tokens:
        return packed_loglikelihood(
            model, requests, pack_tokens=opts.pack_tokens, pad_id=pad_id, replicas=opts.replicas
        )
    return loglikelihood(
        model,
        requests,
        batch_size=opts.batch_size,
        pad_id=pad_id,
        max_batch_tokens=opts.max_batch_tokens,
        replicas=opts.replicas,
    )


def generate(model, chat: ChatRenderer, conversations: Sequence[list[dict]], opts: RunOptions, benchmark: Benchmark):
    """Greedy answers to each conversation after the system turn: (prompt texts, outputs, answer texts)."""
    prompts_text = [chat.render(chat.with_system(c)) for c in conversations]
    prompts = [chat.encode(t) for t in prompts_text]
    outs = generate_greedy(
        model,
        prompts,
        max_new_tokens=opts.new_tokens(benchmark),
        stop_ids=chat.stop_token_ids(),
        pad_id=chat.pad_token_id(),
        batch_size=opts.batch_size,
        cache=opts.cache,
        bucket=opts.bucket,
        replicas=opts.replicas,
    )
    texts = [chat.tokenizer.decode(list(o.token_ids), skip_special_tokens=True) for o in outs]
    return prompts_text, outs, texts


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
