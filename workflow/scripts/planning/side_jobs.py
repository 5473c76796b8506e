"""The jobs beside training that a lineage also pays for: each DPO run's reference log-probs, loading and
saving checkpoints, and evaluating every checkpoint of the card's table."""

from __future__ import annotations

import math

from lineage.modeling import ParamCounts
from planning.measured import (
    DECODE_LAYERS_MEASURED,
    DECODE_TOKENS_PER_S,
    RANK0_READ_GBS,
    RANK0_WRITE_GBS,
    RANK_READ_GBS,
    RANK_WRITE_GBS,
)
from planning.step_time import step_seconds

ANSWER_TOKENS = {"gsm8k": 184, "ifeval": 375, "degen": 298}  # mean answer lengths of that benchmark (assumed)
SCORING_TOKENS = {"mmlu": 150, "margin": 1100}  # tokens a scored item's forward reads (prompt, both answers)
SCORING_MFU = 0.30  # packed scoring forward (assumed, below the measured training MFU of 32k packs)
MARGIN_ITEMS = 2_000  # held-out battle pairs (the card's holdout split; not known before the data stage)


def reference_note(
    dpo_runs: list[tuple[str, dict, float]], counts: ParamCounts, rows: int, gpus: int, peak_tflops: float, mfu: float
) -> str:
    """One forward pass over each DPO run's pairs (name, spec, tokens a step); runs of one parent and pair
    set share the job, which the workflow names after the first of them by name."""
    lines = [
        f"Reference log-probs: one forward pass over a run's pairs on its node, each of the {gpus} GPUs "
        "scoring a share with the whole bf16 model (an upper bound: every pair of every step scored, repeats "
        "included; runs of one parent and pair set share the job):",
        "",
        "| job | for | pairs scored | hours on 1 node |",
        "|---|---|---|---|",
    ]
    shared: dict[tuple, list] = {}
    for name, spec, step_tokens in dpo_runs:
        shared.setdefault((tuple(spec["parents"]), tuple(spec["data"])), []).append((name, spec, step_tokens))
    for group in shared.values():
        _, spec, step_tokens = max(group, key=lambda entry: entry[1]["steps"])
        flops = 2 * counts.active * step_tokens * spec["steps"]
        names = sorted(name for name, _, _ in group)
        lines.append(
            f"| {names[0]}_reference | {', '.join(names)} | {rows * spec['steps']:,} | "
            f"{step_seconds(flops, gpus, peak_tflops, mfu) / 3600:,.1f} |"
        )
    return "\n".join(lines)


def checkpoint_io_note(params: int, ranks: int, config: dict) -> str:
    """Load and save seconds of one training job's checkpoint, every rank its share against rank 0 alone."""
    gb = 2 * params / 1e9  # bf16
    trained = [spec for spec in config["runs"].values() if spec["kind"] in ("sft", "dpo")]
    load, save = gb / ranks / RANK_READ_GBS, gb / ranks / RANK_WRITE_GBS
    old_load, old_save = gb / RANK0_READ_GBS, gb / RANK0_WRITE_GBS
    return (
        f"Checkpoint I/O of a training job ({gb:.1f} GB in bf16, {ranks} ranks each reading and writing its "
        f"1/{ranks} at one rank's measured {RANK_READ_GBS:g} GB/s read, {RANK_WRITE_GBS:g} GB/s write+hash; "
        f"assumes the node's storage sustains {ranks * RANK_READ_GBS:.1f} / {ranks * RANK_WRITE_GBS:.1f} GB/s): "
        f"load {load:.0f} s, save {save:.0f} s; rank 0 alone, the former path: load {old_load:.0f} s, save "
        f"{old_save:.0f} s. The {len(trained)} trained runs of config.yaml each load a parent and save a child: "
        f"{len(trained) * (load + save) / 60:.0f} min of I/O against "
        f"{len(trained) * (old_load + old_save) / 60:.0f} min. Resumable states are written in the background "
        "(StateSaver): a step pauses only while they are staged in host memory."
    )


def eval_note(counts: ParamCounts, layers: int, config: dict, peak_tflops: float) -> str:
    """GPU-hours of evaluating the lineage's checkpoints: every GPU of the eval job a whole replica that
    loads the checkpoint, decodes its share of the answers and scores its share of the items."""
    full = config["scales"]["full"]
    gpus = full["resources"]["eval"]["gpus"]
    cache = full["eval"]["cache"]
    sizes = {name: sum(parts) for name, parts in full["eval"]["sizes"].items()}
    answers = sum(sizes.get(name, 0) * tokens for name, tokens in ANSWER_TOKENS.items())
    rows = full["eval"]["batch_size"]
    measured = min(DECODE_TOKENS_PER_S, key=lambda key: (key[0] != cache, abs(math.log2(key[1] / rows))))
    decode = DECODE_TOKENS_PER_S[measured] * DECODE_LAYERS_MEASURED / layers
    scored = sizes.get("mmlu", 0) * SCORING_TOKENS["mmlu"] + MARGIN_ITEMS * SCORING_TOKENS["margin"]
    score_s = 2 * counts.active * scored / (peak_tflops * 1e12 * SCORING_MFU)
    load_s = 2 * counts.total / 1e9 / RANK_READ_GBS  # each replica reads the whole bf16 checkpoint
    per_gpu_s = load_s + (answers / decode + score_s) / gpus
    fixed = DECODE_TOKENS_PER_S[("graph", 32)] * DECODE_LAYERS_MEASURED / layers
    before_s = load_s + answers / fixed + score_s  # one GPU, fixed batches of 32: the former eval job
    columns = [*config["eval_table"]["columns"], *config["eval_table"]["chain"]]
    rejected = [name for name, spec in config["runs"].items() if spec.get("rejected")]
    checkpoints = {"soupF2_eval (card table and chain)": len(columns), "ablations (rejected runs)": len(rejected)}
    lines = [
        f"Evaluation: one job per checkpoint on {gpus} GPUs (resources.eval), cache {cache}, {rows} rows; per checkpoint "
        f"{answers:,} answer tokens (assumed mean answers: "
        f"{', '.join(f'{name} {tokens}' for name, tokens in ANSWER_TOKENS.items())} tokens) at "
        f"{decode:,.0f} tokens/s per GPU (measured as {measured[0]} at {measured[1]} rows and "
        f"{DECODE_LAYERS_MEASURED} layers, scaled to {layers}), "
        f"{scored:,} scored tokens at {SCORING_MFU:.0%} MFU, and a {load_s:.0f} s load per replica: "
        f"{per_gpu_s / 60:.1f} min a job, {per_gpu_s * gpus / 3600:.2f} GPU-hours a checkpoint (one GPU in "
        f"fixed batches of 32, the former job: {before_s / 60:.0f} min, {before_s / 3600:.2f} GPU-hours).",
        "",
        "| target | checkpoints | hours (jobs in sequence) | GPU-hours |",
        "|---|---|---|---|",
    ]
    for target, count in checkpoints.items():
        lines.append(f"| {target} | {count} | {count * per_gpu_s / 3600:.2f} | {count * per_gpu_s * gpus / 3600:.1f} |")
    return "\n".join(lines)
