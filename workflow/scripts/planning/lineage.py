"""Every trained run of the card's lineage at a scale of config.yaml (the full scale unless --scale names
another), planned on each node count and expert-parallel degree: memory per GPU, whether it fits, step time, run hours and GPU-hours.

Rows are max_length tokens each unless --token-stats gives the real lengths (the `token_stats` rule: each
training set tokenized as its trainer does): a step's rows are then drawn from the run's sets and packed
per rank into micro-batches of pack_tokens with the trainer's own packer, so a step's tokens and its number
of micro-batches (each one a round of FSDP gathers) are what training sees. DPO runs as train_dpo.py runs
it: packs of pairs, no second model (the reference's log-probs are a job of their own, side_jobs.py).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import torch
import yaml

from lineage.modeling import count_params
from lineage.parallel_dims import SHARDINGS, Keys, ParallelDims
from lineage.training.data import pack_groups
from lineage.training.recipe import RECIPES
from lineage.workflow.cluster import host_memory_mb
from lineage.workflow.runs import speed_settings, with_overrides
from lineage.workflow.trained_model import trained_model
from planning.measured import CHAT_LOSS_SHARE, MEASURED_MFU, mfu_at
from planning.memory import GIB, build_meta_model, check_expert_parallel, expert_params, fits, layer_kinds, plan
from planning.side_jobs import checkpoint_io_note, eval_note, reference_note
from planning.step_time import all_to_all_bytes, step_time

CONFIG = Path(__file__).resolve().parents[3] / "config.yaml"
# What the table's errors name: its degrees are the planner's flags, unless a run's overrides set them.
FLAG_KEYS = Keys(
    nodes="--nodes-list", processes="--gpus", sharding="sharding", expert_parallel="--expert-parallel-list"
)


@dataclass(frozen=True)
class PairLengths:
    """What a reference log-probs file says of the pairs a DPO run trains on (their real lengths)."""

    pairs: int
    mean_tokens: float  # chosen + rejected
    longest: int
    loss_share: float  # labelled completion tokens / tokens

    @classmethod
    def read(cls, path: Path) -> PairLengths:
        lines = [json.loads(line) for line in path.read_text().splitlines()[1:] if line.strip()]
        if not lines or "lengths" not in lines[0]:
            raise SystemExit(f"{path}: expected a reference_logprobs.py file (one line per pair with its lengths)")
        totals = [sum(line["lengths"]) for line in lines]
        labelled = sum(sum(line.get("labelled", line["lengths"])) for line in lines)
        return cls(len(lines), sum(totals) / len(totals), max(totals), labelled / sum(totals))


def micro_batch_tokens(train: dict, kind: str) -> int:
    """Tokens of a `kind` micro-batch under a scale's train settings, by the trainer's own rule (a pack, default
    max_length and a DPO pair twice that, or micro_batch_rows rows padded: TrainRecipe.micro_batch_tokens)."""
    speed = speed_settings(train, kind)
    return RECIPES[kind](
        max_length=train["max_length"],
        micro_batch_rows=train["micro_batch_rows"],
        packing=speed["packing"],
        pack_tokens=speed["pack_tokens"],
    ).micro_batch_tokens


@dataclass(frozen=True)
class Steps:
    """What one optimizer step of a run holds: tokens, the share with a loss, micro-batches per rank."""

    tokens: float
    loss_share: float
    micro_steps: float
    source: str  # where the lengths came from


class RowLengths:
    """The `token_stats` rule's histograms: steps drawn from a run's sets and packed as the trainer packs."""

    def __init__(self, path: Path):
        self.path = path
        self.sets = json.loads(path.read_text())["sets"]

    def covers(self, names) -> bool:
        return all(name in self.sets for name in names)

    def steps(self, names, *, rows: int, world: int, budget: int, samples: int = 64, seed: int = 0) -> Steps:
        lengths = [
            int(length) for name in names for length, n in self.sets[name]["histogram"].items() for _ in range(n)
        ]  # the run's sets concatenated, each row once, as the trainer samples them
        generator = torch.Generator().manual_seed(seed)
        tokens = packs = 0
        per_rank = rows // world
        for _ in range(samples):
            drawn = [lengths[i] for i in torch.randint(len(lengths), (rows,), generator=generator).tolist()]
            tokens += sum(drawn)
            packs += max(len(pack_groups(drawn[r * per_rank : (r + 1) * per_rank], budget)) for r in range(world))
        trained = sum(self.sets[n]["trained_tokens"] for n in names) / sum(self.sets[n]["tokens"] for n in names)
        return Steps(tokens / samples, trained, packs / samples, f"{self.path}")


def run_settings(train: dict, spec: dict, scale: str = "full") -> tuple[dict, int, dict]:
    """A run's train settings and steps at `scale` as the workflow resolves them, and the train keys
    its overrides changed."""
    run_train, schedule = with_overrides(train, spec, scale)
    changed = {k: v for k, v in run_train.items() if train.get(k) != v}
    return run_train, schedule["steps"], changed


def fill_from_scale(args, scale: dict) -> None:
    """The model and GPUs the flags leave open, from the scale: the Base it builds (else the card's shape, whose
    checkpoint it is given), its processes a node and its GPUs' memory."""
    model = trained_model(scale, Path("."))
    if args.family is None:
        args.family = model.family if model.built else "nemotron_h"
    if args.size is None:
        args.size = model.size if model.built else "30b_a3b"
    if args.vocab is None:
        args.vocab = model.vocab if model.built else 131072
    if args.gpus is None:
        args.gpus = scale["train"]["processes"]
    if "gpu_gib" in scale["train"]:
        args.gpu_gib = scale["train"]["gpu_gib"]


def busiest_rank_packs(tokens: float, micro_tokens: int, world: int) -> int:
    """Micro-batches of the rank with the most: a step's packs dealt over the ranks (a step waits for it)."""
    packs = math.ceil(tokens / micro_tokens)
    return max(1, math.ceil(packs / world))


def upper_bound_steps(train: dict, dpo: bool, world: int, lengths: PairLengths | None, micro_tokens: int) -> Steps:
    """Every row at max_length (every pair at twice that), unless a reference file gives the pairs;
    `micro_tokens` a micro-batch (a pack, or micro_batch_rows rows padded)."""
    rows, length = train["global_batch_rows"], train["max_length"]
    if not dpo:
        tokens = rows * length
        return Steps(
            tokens, CHAT_LOSS_SHARE, busiest_rank_packs(tokens, micro_tokens, world), "every row at max_length"
        )
    tokens = rows * (lengths.mean_tokens if lengths else 2 * length)
    micro = busiest_rank_packs(tokens, micro_tokens, world)
    return Steps(
        tokens,
        lengths.loss_share if lengths else CHAT_LOSS_SHARE,
        micro,
        "reference file" if lengths else "every pair at 2 x max_length",
    )


def lineage_table(args) -> str:
    """The module docstring's table for tools/plan.py --lineage, with the side jobs' notes below it."""
    return LineagePlan(args).table()


class LineagePlan:
    """The lineage's runs against one model, one scale's settings and the planner's flags."""

    def __init__(self, args):
        self.args = args
        self.config = yaml.safe_load(CONFIG.read_text())
        if args.scale not in self.config["scales"]:
            raise ValueError(f"--scale {args.scale}: config.yaml has scales {', '.join(self.config['scales'])}")
        scale = self.config["scales"][args.scale]
        self.train = scale["train"]
        fill_from_scale(args, scale)
        if args.expert_parallel_list is None:
            args.expert_parallel_list = [self.train.get("expert_parallel", 1)]
        self.model = build_meta_model(args.family, args.size, args.vocab)
        self.counts = count_params(self.model)
        self.experts = expert_params(self.model)
        for degree in args.expert_parallel_list:
            check_expert_parallel(self.model, ParallelDims(processes_per_node=args.gpus, expert=degree, keys=FLAG_KEYS))
        self.pairs = PairLengths.read(args.pair_lengths) if args.pair_lengths else None
        self.stats = RowLengths(args.token_stats) if args.token_stats else None
        self.dpo_runs: list[tuple[str, dict, float]] = []  # (name, spec, tokens a step), for the reference jobs

    def table(self) -> str:
        args, counts = self.args, self.counts
        lines = [
            self.header(),
            "",
            "| run | steps | rows from | tokens/step | micro-batches/rank | nodes | E | sharding | GiB/GPU | "
            "host GiB/node | s/step | hours | GPU-hours |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for name, spec in self.config["runs"].items():
            if spec["kind"] in ("sft", "dpo"):
                lines += self.run_rows(name, spec)
        rows, mfu = self.train["global_batch_rows"], args.mfu or MEASURED_MFU
        weights_gib = 2 * counts.total / GIB
        lines += [
            "",
            reference_note(self.dpo_runs, counts, rows, args.gpus, args.peak_tflops, mfu),
            "",
            checkpoint_io_note(counts.total, args.gpus, self.config),
            "",
        ]
        if args.scale == "full":  # the card's benchmark sizes and the node's eval job (side_jobs.py)
            lines += [eval_note(counts, len(layer_kinds(self.model)), self.config, args.peak_tflops), ""]
        lines += [
            f"Each scoring GPU holds the bf16 weights whole: {weights_gib:.1f} GiB "
            f"({'fits' if weights_gib + 8 <= args.gpu_gib else 'does not fit'} one {args.gpu_gib:g} GiB GPU "
            "with packs of 32,768 tokens).",
        ]
        return "\n".join(lines)

    def micro_tokens(self, train: dict, kind: str) -> int:
        """Tokens of a `kind` micro-batch: --pack-tokens for SFT where given, else the trainer's rule."""
        return (kind == "sft" and self.args.pack_tokens) or micro_batch_tokens(train, kind)

    def header(self) -> str:
        args, train, pairs, stats = self.args, self.train, self.pairs, self.stats
        sft_pack, dpo_pack = self.micro_tokens(train, "sft"), self.micro_tokens(train, "dpo")
        mfu_note = (
            f"{args.mfu:.1%} (given)"
            if args.mfu is not None
            else f"as measured at each pack size ({mfu_at(sft_pack):.1%} for SFT, {mfu_at(dpo_pack, 'dpo'):.1%} "
            "for DPO; planning/measured.py)"
        )
        pair_note = (
            f", DPO pairs as measured in {args.pair_lengths} ({pairs.pairs:,} pairs, mean "
            f"{pairs.mean_tokens:,.0f} tokens, longest {pairs.longest:,})"
            if pairs
            else ""
        )
        return (
            f"{args.family}/{args.size} ({self.counts.total / 1e9:.1f}B, {self.counts.active / 1e9:.1f}B active, "
            f"{self.experts / 1e9:.1f}B in routed experts), {args.gpus} x {args.gpu_gib:g} GiB GPUs per node, "
            f"checkpointing {train['activation_checkpointing']}, head loss {speed_settings(train, 'sft')['fused_loss']} (DPO: "
            f"{speed_settings(train, 'dpo')['fused_loss']}); SFT packs of {sft_pack:,} tokens, DPO packs of "
            f"{dpo_pack:,}; MFU {mfu_note}, {args.intra_gbs:g} GB/s within / {args.inter_gbs:g} GB/s across "
            f"nodes, all-to-all {args.a2a_gbs:g} GB/s. Row lengths: "
            f"{stats.path if stats else 'none given (--token-stats)'}; runs whose sets it lacks: every row at "
            f"max_length{pair_note}. Times: overlapped-serial."
        )

    def run_rows(self, name: str, spec: dict) -> list[str]:
        """One run's rows: each node count of --nodes-list, expert-parallel degree and sharding."""
        args, model, kind = self.args, self.model, spec["kind"]
        run_train, steps, changed = run_settings(self.train, spec, self.args.scale)
        gpus = run_train["processes"] if "processes" in changed else args.gpus
        degrees = [run_train["expert_parallel"]] if "expert_parallel" in changed else args.expert_parallel_list
        overrides = f"runs.{name}.overrides.{args.scale}"  # errors name the key a degree came from
        keys = Keys(**{k: f"{overrides}.{k}" if k in changed else v for k, v in vars(FLAG_KEYS).items()})
        for degree in degrees:
            check_expert_parallel(model, ParallelDims(processes_per_node=gpus, expert=degree, keys=keys))
        micro_tokens = self.micro_tokens(run_train, kind)
        mfu = args.mfu if args.mfu is not None else mfu_at(micro_tokens, kind)
        notes = (["rejected"] if spec.get("rejected") else []) + [f"{k} {changed[k]}" for k in sorted(changed)]
        shown = f"{name} ({'; '.join(notes)})" if notes else name
        lines = []
        for nodes in [run_train["nodes"]] if "nodes" in changed else args.nodes_list:
            world = nodes * gpus
            if self.stats and self.stats.covers(spec["data"]):
                rows = run_train["global_batch_rows"]
                step = self.stats.steps(spec["data"], rows=rows, world=world, budget=micro_tokens)
                source = "token stats"
            else:
                step = upper_bound_steps(run_train, kind == "dpo", world, self.pairs, micro_tokens)
                source = step.source
            if kind == "dpo" and not any(name == known for known, _, _ in self.dpo_runs):
                self.dpo_runs.append((name, spec, step.tokens))
            for degree in degrees:
                for sharding in SHARDINGS if nodes > 1 else ("full",):
                    dims = ParallelDims(nodes, gpus, sharding, degree, keys)
                    result = plan(
                        model,
                        gpus=dims.shard,
                        micro_tokens=micro_tokens,
                        checkpointing=run_train["activation_checkpointing"],
                        loss_share=step.loss_share,
                        fused_loss=speed_settings(run_train, kind)["fused_loss"],
                        expert_parallel=dims.expert,
                        world_size=dims.world_size,
                    )
                    timing = step_time(
                        self.counts,
                        tokens=int(step.tokens),
                        loss_share=step.loss_share,
                        dims=dims,
                        micro_steps=max(1, round(step.micro_steps)),
                        mfu=mfu,
                        peak_tflops=args.peak_tflops,
                        intra_gbs=args.intra_gbs,
                        inter_gbs=args.inter_gbs,
                        experts=self.experts,
                        all_to_all_bytes=all_to_all_bytes(model, step.tokens / world, dims.expert, True),
                        a2a_gbs=args.a2a_gbs,
                    )
                    verdict = "" if fits(result.peak, args.gpu_gib) else " (does not fit)"
                    hours = [steps * t / 3600 for t in (timing.overlapped, timing.serial)]
                    host = host_memory_mb(self.counts.total, gpus, nodes) / 1024
                    lines.append(
                        f"| {shown} | {steps:,} | {source} | {step.tokens:,.0f} | {step.micro_steps:.1f} | {nodes} | "
                        f"{degree} | {sharding} | {result.peak / GIB:.1f}{verdict} | {host:,.0f} | "
                        f"{timing.overlapped:.1f}-{timing.serial:.1f} | {hours[0]:,.2f}-{hours[1]:,.2f} | "
                        f"{hours[0] * world:,.1f}-{hours[1] * world:,.1f} |"
                    )
        return lines
