"""Our batched evaluation against lm-evaluation-harness's HF backend: same items, same scores, how fast.

Run as: python benchmarks/eval_vs_lm_eval.py --size tiny                       # CPU, a minute or two
        python benchmarks/eval_vs_lm_eval.py --size 100m --device cuda --items 200 --batch-size 32 \
            --max-new-tokens 64 --repeats 3 --json out.json

One random-init checkpoint (init_model.py's Llama shape with the embedded tokenizer, both built
from the shipped sample as benchmarks/gpu_data.sh does; or any checkpoint with --model) is loaded
twice in one process: by our evaluation code and by lm-eval's `HFLM(pretrained=<dir>)`, on the
same device, dtype and batch size. Both get the same text and are timed from text in to scores
or text out, after a warm-up on a few items:

- log-likelihood: (context, continuation) pairs built as the margin benchmark builds them (the
  prompt rendered with the checkpoint's chat template and system prompt, the continuation the
  rendered assistant turn), alternating the sample's general-mix turns (short answers) and arena
  battles (long answers). Ours: `encode_pairs` + `loglikelihood` (or `packed_loglikelihood`); lm-eval:
  `HFLM.loglikelihood`.
- greedy generation: the same conversations' rendered prompts, at most --max-new-tokens new
  tokens, stopping at end of turn. Ours: encode + `generate_greedy` + decode, as the generative
  runners do; lm-eval: `HFLM.generate_until` with `until` = the stop tokens' text.

Both sides see the same token ids, and the script checks it before timing anything: prompts are
rendered before either side gets them (lm-eval applies no chat template here), neither adds BOS
(`add_bos_token=False`; the rendered text carries its own special tokens, as
`ChatRenderer.encode` assumes), and both move the context's trailing whitespace into the
continuation (`encode_pair` is lm-eval's `_encode_pair`). Generation stops on the end-of-turn
ids on our side; lm-eval stops on their text and on the generation config's eos_token_id. The
checkpoint's generation_config.json sets max_new_tokens (1024), which transformers lets override
the max_length that HFLM passes; it is cleared on lm-eval's copy so that max_gen_toks holds.
tokens/s counts the same tokens for both: scored context + continuation tokens, and the new
tokens generated.

Scores must agree to 1e-4 per scored token and greedy flags and generated text must match
(float32, TF32 off: torch's matrix products and Triton's dot products, TRITON_F32_DEFAULT=ieee). On a GPU the two sides run different matrix shapes (lm-eval projects every
position onto the vocabulary, we only the scored tail), so a generation may diverge where the
top-2 logits are within --tie-gap; each such case is printed with its gap and any other
divergence fails, as in benchmarks/eval.py. Likewise a batched score over the tolerance is scored
again alone on both sides (one row, no padding: the same matrix shapes on both) and must agree
there: a batch's shapes pick the GPU's GEMM kernels, and in a trained MoE model their last-bit
differences can flip a router's top-k choice, which moves a token's score by far more than
rounding. Each such item is printed with how far batching moved each side.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow" / "scripts"))
sys.path.insert(0, str(REPO / "benchmarks"))

from cuda_timing import wall as timed  # noqa: E402
from eval import DTYPES, add_run_arguments, row, top2_gap  # noqa: E402  (benchmarks/eval.py)
from routing_flips import routing_flips  # noqa: E402

from lineage.checkpoints.load import load_model  # noqa: E402
from lineage.evaluation.generation import generate_greedy  # noqa: E402
from lineage.evaluation.packed_scoring import packed_loglikelihood, scoring_packs  # noqa: E402
from lineage.evaluation.prompts import ChatRenderer  # noqa: E402
from lineage.evaluation.scoring import encode_pair, encode_pairs, loglikelihood  # noqa: E402
from lineage.evaluation.tasks import completion_text  # noqa: E402
from lineage.io import read_jsonl  # noqa: E402
from lineage.modeling import SHAPES  # noqa: E402

SAMPLE = REPO / "resources" / "sample"
PER_TOKEN_TOLERANCE = 1e-4


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def build_checkpoint(work: Path, family: str, size: str, seed: int, vocab_size: int | None = None) -> Path:
    """The embedded tokenizer and a random-init fp32 checkpoint under `work`, reused when present.
    With `vocab_size` the embedding and head have that many rows (a real vocabulary's cost; the
    tokenizer still uses only its own first ids)."""
    import build_tokenizer
    import init_model

    tokenizer = work / "tokenizer"
    if not tokenizer.exists():
        progress(f"building the tokenizer -> {tokenizer}")
        corpora = [f"--corpus={SAMPLE / name}" for name in ("battles.jsonl", "general_mix.jsonl")]
        bundle = REPO / "resources" / "bundle"
        build_tokenizer.main(
            build_tokenizer.parse_args([*corpora, "--vocab-size=2048", f"--bundle={bundle}", f"--out={tokenizer}"])
        )
    model = work / f"{family}-{size}-seed{seed}{f'-vocab{vocab_size}' if vocab_size else ''}"
    if not model.exists():
        progress(f"building a random-init {family}/{size} checkpoint -> {model}")
        shape = [f"--family={family}", f"--size={size}", f"--seed={seed}", "--dtype=fp32"]
        if vocab_size:  # the tokenizer's ids first, the rest rows it never produces
            shape.append(f"--vocab-size={vocab_size}")
        init_model.main(init_model.parse_args([*shape, f"--tokenizer={tokenizer}", f"--out={model}"]))
    return model


def conversations(n: int, seed: int) -> list[tuple[list[dict], str]]:
    """n (messages, answer) pairs, alternating general-mix turns (short answers) and battle answers (long)."""
    short = [(r["messages"][:-1], r["messages"][-1]["content"]) for _, r in read_jsonl(SAMPLE / "general_mix.jsonl")]
    long = [(r["messages"], r[s]["answer"]) for _, r in read_jsonl(SAMPLE / "battles.jsonl") for s in ("own", "other")]
    rng = random.Random(seed)
    rng.shuffle(short)
    rng.shuffle(long)
    mixed = [pair for pairs in zip(short, long) for pair in pairs]
    if n > len(mixed):
        raise SystemExit(f"--items {n}: the sample gives at most {len(mixed)} items")
    return mixed[:n]


class Ours:
    """Our evaluation code as the margin and generative runners call it: text in, scores or text out."""

    def __init__(
        self,
        model,
        chat: ChatRenderer,
        batch_size: int,
        max_new_tokens: int,
        cache: str = "dynamic",
        bucket: int = 1,
        pack_tokens: int = 0,
    ):
        self.model, self.chat, self.batch_size, self.max_new_tokens = model, chat, batch_size, max_new_tokens
        self.cache, self.bucket, self.pack_tokens = cache, bucket, pack_tokens
        self.last_generations = []

    def loglikelihood(self, pairs):
        requests = [(c, k) for c, k, _ in encode_pairs(self.chat.encode_batch, pairs)]
        if self.pack_tokens:
            scores = packed_loglikelihood(
                self.model, requests, pack_tokens=self.pack_tokens, pad_id=self.chat.pad_token_id()
            )
        else:
            scores = loglikelihood(self.model, requests, batch_size=self.batch_size, pad_id=self.chat.pad_token_id())
        return [(s.logprob, s.is_greedy) for s in scores]

    def generate(self, prompts):
        self.last_generations = generate_greedy(
            self.model,
            [self.chat.encode(p) for p in prompts],
            max_new_tokens=self.max_new_tokens,
            stop_ids=self.chat.stop_token_ids(),
            pad_id=self.chat.pad_token_id(),
            batch_size=self.batch_size,
            cache=self.cache,
            bucket=self.bucket,
        )
        return [self.chat.tokenizer.decode(list(g.token_ids), skip_special_tokens=True) for g in self.last_generations]


class LmEval:
    """lm-eval's HF backend on the same checkpoint, given the same texts as Instances (no task YAML)."""

    def __init__(
        self, directory: Path, chat: ChatRenderer, device: str, dtype: str, batch_size: int, max_new_tokens: int
    ):
        from lm_eval.models.huggingface import HFLM

        self.lm = HFLM(
            pretrained=str(directory), device=device, batch_size=batch_size, dtype=dtype, add_bos_token=False
        )
        self.lm.model.generation_config.max_new_tokens = None  # else it overrides max_gen_toks (docstring)
        until = [chat.tokenizer.decode([i], skip_special_tokens=False) for i in chat.stop_token_ids()]
        self.gen_kwargs = {"until": until, "max_gen_toks": max_new_tokens, "do_sample": False}

    def loglikelihood(self, pairs):
        from lm_eval.api.instance import Instance

        requests = [Instance(request_type="loglikelihood", doc={}, arguments=p, idx=i) for i, p in enumerate(pairs)]
        return self.lm.loglikelihood(requests, disable_tqdm=True)

    def generate(self, prompts):
        from lm_eval.api.instance import Instance

        requests = [
            Instance(request_type="generate_until", doc={}, arguments=(p, dict(self.gen_kwargs)), idx=i)
            for i, p in enumerate(prompts)
        ]
        return self.lm.generate_until(requests, disable_tqdm=True)


def same_token_ids(chat: ChatRenderer, theirs: LmEval, pairs, prompts) -> tuple[int, int]:
    """(pairs, prompts) that lm-eval's own encoding turns into exactly our token ids."""
    ours = encode_pairs(chat.encode_batch, pairs)  # as the timed path encodes them
    same_pairs = sum([c, k] == [list(t) for t in theirs.lm._encode_pair(*pair)] for (c, k, _), pair in zip(ours, pairs))
    return same_pairs, sum(chat.encode(p) == theirs.lm.tok_encode(p) for p in prompts)


def divergence(model, chat: ChatRenderer, prompt: str, ours: tuple[int, ...], theirs: str) -> tuple[int, float | None]:
    """(first of our tokens whose text leaves lm-eval's output, top-2 logit gap of a one-row forward there).

    The gap is None where lm-eval's text goes on past our last token: there is no choice to compare.
    """
    decode = chat.tokenizer.decode
    step = next(
        (k for k in range(len(ours)) if not theirs.startswith(decode(list(ours[: k + 1]), skip_special_tokens=True))),
        len(ours),
    )
    if step == len(ours):
        return step, None
    return step, top2_gap(model, chat.encode(prompt) + list(ours[:step]))


def scored_alone(ours: Ours, theirs: LmEval, pairs, items) -> dict[int, tuple]:
    """{item: (our score, lm-eval's)} of each item scored in a batch of its own on both sides: one row, no
    padding, so both run the same matrix shapes and no batch mate picks their GEMM kernels."""
    return {i: (ours.loglikelihood([pairs[i]])[0], theirs.loglikelihood([pairs[i]])[0]) for i in items}


def fastest(label: str, fn, device: str, repeats: int):
    """(output, seconds) of the fastest of `repeats` timed calls."""
    best = None
    for r in range(repeats):
        out, seconds = timed(fn, device)
        progress(f"{label}{f' (repeat {r + 1}/{repeats})' if repeats > 1 else ''}: {seconds:.2f} s")
        if best is None or seconds < best[1]:
            best = (out, seconds)
    return best


def profile(device: str, phases: dict) -> None:
    """torch.profiler's top operators by device time (CPU time without a GPU) of one pass of each phase."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as profiler

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    key = "cuda_time_total" if device == "cuda" else "cpu_time_total"
    for name, fn in phases.items():
        with profiler(activities=activities) as prof:
            timed(fn, device)
        print(f"profile of one pass, {name}:")
        print(prof.key_averages().table(sort_by=key, row_limit=14, max_name_column_width=60))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", choices=sorted({f for f, _ in SHAPES}), default="llama")
    parser.add_argument("--size", choices=sorted({s for _, s in SHAPES}), default="tiny")
    parser.add_argument("--model", type=Path, help="an existing checkpoint directory instead of a random-init one")
    parser.add_argument(
        "--work",
        type=Path,
        default=REPO / "benchmarks" / "out" / "eval_vs_lm_eval",
        help="where the tokenizer and random-init checkpoints are built (and reused)",
    )
    add_run_arguments(parser)
    parser.add_argument("--vocab-size", type=int, help="rows of the random-init model's embedding and head")
    parser.add_argument(
        "--caches",
        default="",
        help="comma-separated extra generation caches to time: static (transformers compiles the "
        "decode step), graph (our static cache, the decode step replayed as a CUDA graph)",
    )
    parser.add_argument("--static", action="store_const", const="static", dest="caches", help="same as --caches static")
    parser.add_argument(
        "--pack-tokens",
        type=int,
        default=0,
        help="also time our packed log-likelihood (sequences of at most this many tokens, no padding)",
    )
    parser.add_argument("--bucket", type=int, default=64, help="prompt padding multiple of the static-cache runs")
    parser.add_argument(
        "--reference-dtype",
        choices=sorted(DTYPES),
        help="also generate with a copy of the model in this dtype (graph cache on a GPU) and count, "
        "for every implementation, the texts identical to it (how far bf16 rounding moves each)",
    )
    parser.add_argument(
        "--profile",
        nargs="?",
        const="all",
        choices=["all", "scoring"],
        help="print torch.profiler's top operators of one pass of each of our phases (scoring: "
        "the log-likelihood passes only)",
    )
    parser.add_argument("--warmup-items", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=1, help="time each phase this often and keep the fastest")
    parser.add_argument("--json", type=Path, help="also write the results here")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if args.dtype == "float32":
        # Triton's float32 dot products default to TF32 whatever torch says, and the Mamba-2 scan (mamba-ssm's
        # Triton kernels) is built of them: set before the first kernel compiles
        os.environ.setdefault("TRITON_F32_DEFAULT", "ieee")
    import lm_eval

    directory = args.model or build_checkpoint(args.work, args.family, args.size, args.seed, args.vocab_size)
    chat = ChatRenderer(directory)
    convs = conversations(args.items, args.seed)
    pairs = [completion_text(chat, messages, answer) for messages, answer in convs]
    prompts = [chat.render(chat.with_system(messages)) for messages, _ in convs]

    progress(f"loading {directory} ({args.dtype}, {args.device}): ours, then lm-eval {lm_eval.__version__}'s HFLM")
    model = load_model(directory, dtype=DTYPES[args.dtype], device=args.device).eval()
    ours = Ours(model, chat, args.batch_size, args.max_new_tokens)
    theirs = LmEval(directory, chat, args.device, args.dtype, args.batch_size, args.max_new_tokens)
    same_pairs, same_prompts = same_token_ids(chat, theirs, pairs, prompts)
    if same_pairs != len(pairs) or same_prompts != len(prompts):
        raise SystemExit(f"token ids differ: {same_pairs}/{len(pairs)} pairs, {same_prompts}/{len(prompts)} prompts")
    encoded = [encode_pair(chat.encode, c, k)[:2] for c, k in pairs]
    ctx_lens, cont_lens = [len(c) for c, _ in encoded], [len(k) for _, k in encoded]
    score_tokens = sum(ctx_lens) + sum(cont_lens)

    progress(f"warm-up on {args.warmup_items} items, both sides")
    for side in (ours, theirs):
        side.loglikelihood(pairs[: args.warmup_items])
        side.generate(prompts[: args.warmup_items])

    def run(label, fn):
        return fastest(label, fn, args.device, args.repeats)

    scored = f"log-likelihood, {len(pairs)} items, {score_tokens} tokens"
    generating = f"greedy generation, {len(prompts)} prompts, up to {args.max_new_tokens} new tokens"
    theirs_ll, t_theirs_ll = run(f"{scored}: lm-eval", lambda: theirs.loglikelihood(pairs))
    ours_ll, t_ours_ll = run(f"{scored}: ours", lambda: ours.loglikelihood(pairs))
    asked = args.pack_tokens
    args.pack_tokens, why_padded = scoring_packs(model, asked)
    if why_padded:
        progress(f"--pack-tokens {asked}: no packed row ({why_padded})")
    packed = Ours(model, chat, args.batch_size, args.max_new_tokens, pack_tokens=args.pack_tokens)
    if args.pack_tokens:
        packed.loglikelihood(pairs[: args.warmup_items])
        packed_ll, t_packed_ll = run(f"{scored}: ours, packed {args.pack_tokens}", lambda: packed.loglikelihood(pairs))
    theirs_text, t_theirs_gen = run(f"{generating}: lm-eval", lambda: theirs.generate(prompts))
    ours_text, t_ours_gen = run(f"{generating}: ours", lambda: ours.generate(prompts))
    generations = ours.last_generations
    extra, extra_tokens = {}, {}  # cache -> [(texts, seconds) per pass] (the first captures or compiles)
    for cache in filter(None, args.caches.split(",")):
        side = Ours(model, chat, args.batch_size, args.max_new_tokens, cache=cache, bucket=args.bucket)
        try:
            extra[cache] = [timed(lambda: side.generate(prompts), args.device) for _ in range(max(2, args.repeats))]
        except Exception as err:  # noqa: BLE001 - report it and keep the other rows
            progress(f"{cache} cache failed: {type(err).__name__}: {err}")
            continue
        extra_tokens[cache] = [g.token_ids for g in side.last_generations]
        for r, (_, seconds) in enumerate(extra[cache]):
            progress(f"{generating}: ours, {cache} cache (pass {r + 1}): {seconds:.2f} s")
    reference = None
    if args.reference_dtype:
        ref_model = load_model(directory, dtype=DTYPES[args.reference_dtype], device=args.device).eval()
        ref_cache = "graph" if args.device == "cuda" else "dynamic"
        reference, seconds = timed(
            lambda: Ours(
                ref_model, chat, args.batch_size, args.max_new_tokens, cache=ref_cache, bucket=args.bucket
            ).generate(prompts),
            args.device,
        )
        progress(f"{generating}: reference in {args.reference_dtype} ({ref_cache} cache): {seconds:.2f} s")
        reference_ll = Ours(ref_model, chat, args.batch_size, args.max_new_tokens).loglikelihood(pairs)
        del ref_model
    if args.profile:
        phases = {"log-likelihood": lambda: ours.loglikelihood(pairs)}
        if args.pack_tokens:
            phases["log-likelihood, packed"] = lambda: packed.loglikelihood(pairs)
        if args.profile == "all":
            phases["generation"] = lambda: ours.generate(prompts)
            for c in extra:
                phases[f"generation, {c} cache"] = lambda c=c: Ours(
                    model, chat, args.batch_size, args.max_new_tokens, cache=c, bucket=args.bucket
                ).generate(prompts)
        profile(args.device, phases)

    def gaps(mine):
        """|Δ summed log-prob| of each item against lm-eval."""
        return [abs(a[0] - b[0]) for a, b in zip(mine, theirs_ll)]

    def agreement(mine):
        """(max |Δ summed log-prob|, max per scored token, is_greedy agreements) against lm-eval."""
        per_item = gaps(mine)
        return (
            max(per_item),
            max(d / n for d, n in zip(per_item, cont_lens)),
            sum(a[1] == b[1] for a, b in zip(mine, theirs_ll)),
        )

    max_item, per_token, greedy_agree = agreement(ours_ll)
    over = [i for i, (d, n) in enumerate(zip(gaps(ours_ll), cont_lens)) if d / n > PER_TOKEN_TOLERANCE]
    alone = scored_alone(ours, theirs, pairs, over)
    gen_tokens = sum(len(g.token_ids) for g in generations)
    stopped = sum(g.finish_reason == "stop" for g in generations)
    mismatched = [i for i, (a, b) in enumerate(zip(ours_text, theirs_text)) if a != b]
    ties = {i: divergence(model, chat, prompts[i], generations[i].token_ids, theirs_text[i]) for i in mismatched}
    unexplained = [i for i, (_, gap) in ties.items() if gap is None or gap > args.tie_gap]

    device = torch.cuda.get_device_name() if args.device == "cuda" else f"CPU, {torch.get_num_threads()} threads"
    n_params = sum(p.numel() for p in model.parameters())
    print(
        f"{directory.name}: {n_params / 1e6:.1f}M parameters, vocabulary {len(chat.tokenizer)}, {args.dtype}"
        f"{', TF32 off' if args.device == 'cuda' else ''}, {device}; torch {torch.__version__}, lm-eval "
        f"{lm_eval.__version__}; {args.items} items, batch {args.batch_size} on both sides"
    )
    print(
        f"log-likelihood items: contexts {min(ctx_lens)}-{max(ctx_lens)} tokens (median "
        f"{statistics.median(ctx_lens):.0f}), continuations {min(cont_lens)}-{max(cont_lens)} (median "
        f"{statistics.median(cont_lens):.0f}); token ids identical on both sides for {same_pairs} of {len(pairs)} "
        f"pairs and {same_prompts} of {len(prompts)} prompts"
    )
    print(
        f"scores: max |Δ summed log-prob| {max_item:.1e}, per scored token {per_token:.1e}; is_greedy "
        f"agrees for {greedy_agree} of {len(pairs)} ({sum(b[1] for b in theirs_ll)} greedy per lm-eval)"
    )
    rows = [c + k for c, k in encoded]
    longest = max(rows, key=len)
    for i, (mine, lm) in alone.items():
        n = cont_lens[i]
        print(
            f"  item {i} ({n} scored tokens): ours - lm-eval {(ours_ll[i][0] - theirs_ll[i][0]) / n:+.1e} a token "
            f"batched, {(mine[0] - lm[0]) / n:+.1e} scored alone on both sides; batching moved ours by "
            f"{(ours_ll[i][0] - mine[0]) / n:+.1e}, lm-eval by {(theirs_ll[i][0] - lm[0]) / n:+.1e} a token"
        )
        moved, positions, layers = routing_flips(model, rows[i], longest, chat.pad_token_id())
        if layers:
            print(
                f"    beside the longest item, {moved} of its {positions} positions go to other experts ({layers} routed layers)"
            )
    apart_alone = [i for i, (mine, lm) in alone.items() if abs(mine[0] - lm[0]) / cont_lens[i] > PER_TOKEN_TOLERANCE]
    if args.pack_tokens:
        p_item, p_token, p_greedy = agreement(packed_ll)
        print(
            f"packed scores: max |Δ summed log-prob| {p_item:.1e}, per scored token {p_token:.1e} against lm-eval; "
            f"is_greedy agrees for {p_greedy} of {len(pairs)}"
        )
    print(
        f"generation: text identical for {len(prompts) - len(mismatched)} of {len(prompts)} prompts; "
        f"{gen_tokens} new tokens, {stopped} prompts stopped at end of turn, the rest at {args.max_new_tokens}"
    )
    for i, (step, gap) in ties.items():
        if gap is None:
            print(f"  prompt {i}: lm-eval's text goes on after our {step} tokens ({generations[i].finish_reason})")
        else:
            verdict = "a near-tie: rounding picks either token" if gap <= args.tie_gap else "NOT a near-tie"
            print(f"  prompt {i} diverges at step {step}: top-2 logit gap {gap:.1e} ({verdict})")
    print()
    print("| phase | implementation | items | tokens | s | items/s | tokens/s | vs lm-eval |")
    print("|---|---|---|---|---|---|---|---|")
    batch = f"batch {args.batch_size}"
    print(row("log-likelihood", f"lm-eval HFLM ({batch})", len(pairs), score_tokens, t_theirs_ll))
    print(row("log-likelihood", f"ours ({batch})", len(pairs), score_tokens, t_ours_ll, t_theirs_ll))
    if args.pack_tokens:
        print(
            row(
                "log-likelihood", f"ours, packed {args.pack_tokens}", len(pairs), score_tokens, t_packed_ll, t_theirs_ll
            )
        )
    print(row("greedy generation", f"lm-eval HFLM ({batch})", len(prompts), gen_tokens, t_theirs_gen))
    print(row("greedy generation", f"ours ({batch})", len(prompts), gen_tokens, t_ours_gen, t_theirs_gen))
    for cache, passes in extra.items():
        first, best = passes[0][1], min(seconds for _, seconds in passes[1:])
        label = f"ours, {cache} cache, bucket {args.bucket} ({batch})"
        # a graph is captured again by every call; compiled shapes stay compiled for later calls
        later = "later passes (each captures anew)" if cache == "graph" else "later passes (compiled)"
        warm = "capturing" if cache == "graph" else "compiling"
        print(row("greedy generation", f"{label}, first pass ({warm})", len(prompts), gen_tokens, first, t_theirs_gen))
        print(row("greedy generation", f"{label}, {later}", len(prompts), gen_tokens, best, t_theirs_gen))
    print()
    if reference is not None:
        sides = {
            "lm-eval HFLM": theirs_text,
            "ours": ours_text,
            **{f"ours, {c} cache": p[-1][0] for c, p in extra.items()},
        }
        print(
            f"against the same model in {args.reference_dtype} ({len(prompts)} prompts): "
            + "; ".join(
                f"{name} identical for {sum(a == b for a, b in zip(texts, reference))}" for name, texts in sides.items()
            )
        )
        scorers = {"lm-eval HFLM": theirs_ll, "ours": ours_ll}
        if args.pack_tokens:
            scorers["ours, packed"] = packed_ll
        print(
            f"log-likelihood against the same model in {args.reference_dtype}, |Δ| per scored token (mean, max): "
            + "; ".join(
                f"{name} {statistics.fmean(d):.1e}, {max(d):.1e}"
                for name, d in (
                    (name, [abs(a[0] - b[0]) / n for a, b, n in zip(lls, reference_ll, cont_lens)])
                    for name, lls in scorers.items()
                )
            )
        )
    for cache, passes in extra.items():
        texts = passes[-1][0]
        print(
            f"{cache} cache: text identical to our dynamic-cache run for "
            f"{sum(a == b for a, b in zip(texts, ours_text))} of {len(prompts)} prompts, to lm-eval's for "
            f"{sum(a == b for a, b in zip(texts, theirs_text))}"
        )
        if args.dtype == "float32":  # where it leaves lm-eval's text, and whether that is a near-tie
            for i in (i for i, (a, b) in enumerate(zip(texts, theirs_text)) if a != b):
                step, gap = divergence(model, chat, prompts[i], extra_tokens[cache][i], theirs_text[i])
                where = "lm-eval's text goes on" if gap is None else f"top-2 logit gap {gap:.1e}"
                print(f"  prompt {i} leaves lm-eval's text at step {step}: {where}")

    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "checkpoint": str(directory),
                    "parameters": n_params,
                    "device": device,
                    "dtype": args.dtype,
                    "torch": torch.__version__,
                    "lm_eval": lm_eval.__version__,
                    "items": args.items,
                    "batch_size": args.batch_size,
                    "max_new_tokens": args.max_new_tokens,
                    "repeats": args.repeats,
                    "loglikelihood": {
                        "tokens": score_tokens,
                        "ours_s": t_ours_ll,
                        "lm_eval_s": t_theirs_ll,
                        "speedup": t_theirs_ll / t_ours_ll,
                        "max_abs_diff": max_item,
                        "max_abs_diff_per_token": per_token,
                        "is_greedy_agree": greedy_agree,
                        "over_tolerance_batched": len(over),
                        "max_abs_diff_per_token_alone": max(
                            (abs(m[0] - t[0]) / cont_lens[i] for i, (m, t) in alone.items()), default=None
                        ),
                        **(
                            {
                                "packed_s": t_packed_ll,
                                "packed_speedup": t_theirs_ll / t_packed_ll,
                                "packed_max_abs_diff_per_token": agreement(packed_ll)[1],
                            }
                            if args.pack_tokens
                            else {}
                        ),
                    },
                    "generation": {
                        "new_tokens": gen_tokens,
                        "ours_s": t_ours_gen,
                        "lm_eval_s": t_theirs_gen,
                        "speedup": t_theirs_gen / t_ours_gen,
                        "identical": len(prompts) - len(mismatched),
                        "divergences": {str(i): {"step": s, "top2_gap": g} for i, (s, g) in ties.items()},
                    },
                    "caches": {
                        cache: {
                            "passes_s": [seconds for _, seconds in passes],
                            "identical_to_lm_eval": sum(a == b for a, b in zip(passes[-1][0], theirs_text)),
                        }
                        for cache, passes in extra.items()
                    },
                },
                indent=2,
            )
            + "\n"
        )
    if args.dtype != "float32":
        print(f"{args.dtype}: agreement is reported, not checked (it is asserted in float32)")
        return 0
    assert not apart_alone, (
        f"items {apart_alone[:10]} differ from lm-eval's by over {PER_TOKEN_TOLERANCE:g} a token alone too"
    )
    assert greedy_agree == len(pairs), f"is_greedy differs for {len(pairs) - greedy_agree} items"
    assert not unexplained, f"our generations differ from lm-eval's for items {unexplained[:10]}"
    if args.pack_tokens:
        _, p_token, p_greedy = agreement(packed_ll)
        assert p_token <= PER_TOKEN_TOLERANCE, f"packed scores differ from lm-eval's by {p_token:.2e} per token"
        assert p_greedy == len(pairs), f"packed is_greedy differs for {len(pairs) - p_greedy} items"
    print(
        f"same scores: within {PER_TOKEN_TOLERANCE:g} per scored token"
        f"{f' ({len(alone)} items scored alone on both sides, listed above)' if alone else ''}, is_greedy equal, "
        f"generated text equal{' (or diverging at a near-tie, listed above)' if ties else ''}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
