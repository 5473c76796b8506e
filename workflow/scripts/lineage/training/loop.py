"""The optimizer step shared by SFT and DPO: accumulate, normalise globally, clip, step, log, save.

Before any forward pass the ranks all-reduce the step's normaliser (trained tokens for SFT,
pairs for DPO), and every micro-batch backpropagates loss_sum / that global count. Gradients
are summed over micro-batches and ranks, so the update is the gradient of the mean loss over
the whole global batch, however the batch is split.

The host waits for the GPU at the end of each step (the logged numbers). The next step's rows
are packed before that wait, while the GPU still runs this step's backward and optimizer, so
the GPU does not wait for the host's packing (50-75 ms a step of 512 rows on two cores).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.distributed.fsdp import FSDPModule
from torch.profiler import record_function

from lineage.modeling import ParamCounts
from lineage.training.cli import JobOptions
from lineage.training.compiling import graphs_compiled
from lineage.training.dist import DistEnv, all_reduce_sum, barrier, print0
from lineage.training.fsdp import accumulate_unsharded
from lineage.training.lifetime import StateLock, StateLockedError
from lineage.training.metrics import MetricsFile, mfu, peak_flops, step_line
from lineage.training.optim import clip_grad_norm, lr_multiplier, set_lr
from lineage.training.preemption import Preempted, StopRequest
from lineage.training.python_gc import StepCollector
from lineage.training.recipe import TrainRecipe
from lineage.training.state import (
    COMPLETE,
    StateSaver,
    latest_state,
    load_state,
    recipe_state_dir,
    save_state,
    state_name,
)
from lineage.training.tracking import Trackers, hyperparameters, tracked
from lineage.training.validation import due, validation_metrics


@dataclass
class StepData:
    """One rank's share of one optimizer step."""

    micro_batches: list[dict[str, torch.Tensor | int]]  # ints: host-side facts (a pack's longest row)
    normalizer: int  # what the loss is averaged over (trained tokens, or pairs), this rank's part
    tokens: int  # non-padding input tokens, this rank's part (for tok/s)
    head_tokens: int | None = None  # positions whose logits the loss needs, this rank's part (None: all tokens)
    attention_pairs: int = 0  # causal (query, key) pairs of the rows, each row alone (modeling.causal_pairs)


class DivergedError(RuntimeError):
    """A step's loss or gradient norm is not finite: the run stops there and saves nothing after it."""


def check_finite(step: int, steps: int, loss: float, grad_norm: float, last_saved: str) -> None:
    """Stop a run whose step went non-finite (every rank sees the same reduced values, so all stop).

    A NaN or infinite step has already reached the weights through the optimizer; nothing after
    the last complete state can be trusted, and a published checkpoint would carry it to every
    run downstream. No skipping of bad steps is offered: a skipped step hides a learning rate or
    data problem that the next steps usually repeat."""
    if math.isfinite(loss) and math.isfinite(grad_norm):
        return
    raise DivergedError(
        f"step {step}/{steps}: loss {loss}, gradient norm {grad_norm}: the run diverged; nothing was saved "
        f"after {last_saved}. Lower the learning rate (the run's lr or the scale's lr_scale) or check the data, "
        "then rerun: it resumes from that state"
    )


# loss_fn(model, micro_batch) -> (loss summed over the micro-batch, {stat name: summed value})
LossFn = Callable[[torch.nn.Module, dict[str, torch.Tensor]], tuple[torch.Tensor, dict[str, torch.Tensor]]]


def train(
    options: JobOptions,
    recipe: TrainRecipe,
    env: DistEnv,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    *,
    step_data: Callable[[int], StepData],
    loss_fn: LossFn,
    stat_names: tuple[str, ...],
    shown: tuple[str, ...] = (),
    params: ParamCounts,
    recipe_hash: str,
    validation: StepData | None = None,
) -> dict[str, Any]:
    """Run optimizer steps from the last saved state (or 0) to recipe.steps; return totals.

    Every stat is averaged over the global normaliser and written to --metrics and the trackers
    (--report-to); those in `shown` also go on the step line. With `validation` (this rank's share
    of the validation rows) and --validate-every N, the loss on those rows (`val_loss`, and `val_<name>`
    for those in `shown`) joins them every N steps and after the last (lineage/training/validation.py).
    On SIGTERM or SIGUSR1 every rank stops after the same step, the state is saved and `Preempted` is
    raised (see lineage.training.preemption).
    """
    lock = _lock_state(options.state_dir, env)
    try:
        with StopRequest() as stop:
            return _train(
                options,
                recipe,
                env,
                model,
                optimizer,
                step_data,
                loss_fn,
                stat_names,
                shown,
                params,
                recipe_hash,
                stop,
                validation,
            )
    finally:
        if lock is not None:
            lock.release()


def _lock_state(state_dir, env: DistEnv) -> StateLock | None:
    """Rank 0 locks the run's state directory; every rank stops if it could not (see lifetime.py)."""
    if state_dir is None:
        return None
    lock, refusal = None, None
    if env.is_main:
        try:
            lock = StateLock(state_dir).acquire()
        except StateLockedError as error:
            refusal = error
    refused = all_reduce_sum(torch.tensor([refusal is not None], dtype=torch.float64, device=env.device))
    if refused.item() > 0:
        raise refusal or StateLockedError(f"{state_dir} is in use by another run (rank 0 says by whom)")
    return lock


def _minutes_since(moment: float) -> float:
    return (time.perf_counter() - moment) / 60


def _train(
    options: JobOptions,
    recipe,
    env,
    model,
    optimizer,
    step_data,
    loss_fn,
    stat_names,
    shown,
    params,
    recipe_hash,
    stop: StopRequest,
    validation: StepData | None = None,
) -> dict[str, Any]:
    totals = {"tokens": 0, "normalizer": 0, "final_loss": None}
    start, resumed = 0, None
    state_dir, saver = None, None
    if options.state_dir is not None:
        state_dir = recipe_state_dir(options.state_dir, recipe_hash, prune=env.is_main)
        saver = StateSaver(state_dir, env, keep=options.keep_states)
        barrier()
        resumed = latest_state(state_dir, recipe_hash)
        if resumed is not None:
            meta = load_state(resumed, model, optimizer, env)
            start = meta["step"]
            totals.update(meta.get("totals", {}))
            print0(f"resumed from {resumed} (step {start})")
    last_saved = f"the saved state of step {start} ({resumed})" if resumed else "the start (no state was saved)"
    metrics = MetricsFile(options.metrics, start, env.is_main)
    peak = peak_flops(env.device, recipe.precision, options.peak_flops)
    names = ("loss", *stat_names)
    validate_every = options.validate_every if validation is not None else 0
    trackers = Trackers.start(
        options.report_to,
        folder=options.tracking_dir,
        project=options.tracking_project,
        run=options.run or options.out.name,
        config=hyperparameters(recipe),
        start_step=start,
        enabled=env.is_main,
    )

    step_data = pinned_steps(step_data, env.device)
    with trackers_finished(trackers), StepCollector(options.python_gc) as collector:
        began = time.perf_counter()
        saved_at = began
        upcoming = step_data(start) if start < recipe.steps else None
        for step in range(start, recipe.steps):
            t0, graphs_before = time.perf_counter(), graphs_compiled()
            lr = recipe.lr * lr_multiplier(
                step,
                steps=recipe.steps,
                warmup=recipe.warmup_steps,
                schedule=recipe.schedule,
                min_ratio=recipe.min_lr_ratio,
            )
            set_lr(optimizer, lr)
            data = upcoming
            counts = all_reduce_sum(
                torch.tensor(
                    [
                        data.normalizer,
                        data.tokens,
                        data.tokens if data.head_tokens is None else data.head_tokens,
                        data.attention_pairs,
                        stop.requested is not None,
                        _minutes_since(saved_at) >= (options.save_every_minutes or math.inf),
                    ],
                    dtype=torch.float64,
                    device=env.device,
                )
            )
            normalizer, tokens, head_tokens, pairs = (int(c) for c in counts[:4])
            if counts[4] > 0:  # some rank was asked to stop: all stop here, before this step changes anything
                _stop(
                    options,
                    recipe.steps,
                    env,
                    model,
                    optimizer,
                    state_dir,
                    step,
                    {"recipe_hash": recipe_hash, "totals": totals},
                    stop,
                    saver,
                )
            if (
                saver is not None
                and step > start
                and (counts[5] > 0 or (options.save_every and step % options.save_every == 0))
            ):
                # the state after `step` steps, written while this step runs; never the last step's (the checkpoint is)
                pending = saver.save(step, model, optimizer, {"recipe_hash": recipe_hash, "totals": totals})
                saved_at = time.perf_counter()
                print0(f"saving state of step {step} to {pending} in the background")
            sums = torch.zeros(len(names), dtype=torch.float64, device=env.device)
            for index, micro in enumerate(data.micro_batches):
                last = index == len(data.micro_batches) - 1
                if isinstance(model, FSDPModule):  # hybrid sharding: gradients cross nodes once, after the last
                    model.set_requires_all_reduce(last)
                    if options.accumulate == "unsharded":
                        accumulate_unsharded(model, last)
                micro = {
                    key: value.to(env.device, non_blocking=True) if isinstance(value, torch.Tensor) else value
                    for key, value in micro.items()
                }
                with record_function("forward"):
                    loss_sum, stats = loss_fn(model, micro)
                with record_function("backward"):
                    (loss_sum / max(normalizer, 1)).backward()
                sums += torch.stack([loss_sum.detach(), *(stats[name].detach() for name in stat_names)]).double()
            with record_function("optimizer"):
                # on the device: reading it now would wait
                grad_norm = clip_grad_norm(model, recipe.grad_clip, optimizer)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
            with record_function("next step's data"):
                upcoming = step_data(step + 1) if step + 1 < recipe.steps else None  # packed while the GPU works
            with record_function("python gc"):
                collector.after_step()  # while the GPU works too, not in the middle of a backward
            means = (all_reduce_sum(sums) / max(normalizer, 1)).tolist()
            grad_norm = float(grad_norm)
            if env.device.type == "cuda":
                torch.cuda.synchronize(env.device)
            dt = time.perf_counter() - t0

            values = dict(zip(names, means, strict=True))
            if due(step + 1, recipe.steps, validate_every):  # after the step's time: tok/s and MFU stay the step's
                v0 = time.perf_counter()
                values |= validation_metrics(model, loss_fn, validation, env, shown)
                values["val_time_s"] = time.perf_counter() - v0
            compiled = graphs_compiled() - graphs_before  # the step's and its validation's
            tokens_per_s = tokens / dt
            peak_mem = torch.cuda.max_memory_allocated(env.device) / 2**30 if env.device.type == "cuda" else None
            mfu_value = mfu(params.step_flops(tokens, head_tokens, pairs) / dt, env.world_size, peak)
            mfu_matmuls = mfu(params.step_flops(tokens, head_tokens) / dt, env.world_size, peak)  # no attention scores
            totals["tokens"] += tokens
            totals["normalizer"] += normalizer
            totals["final_loss"] = values["loss"]
            print0(
                step_line(
                    step + 1,
                    recipe.steps,
                    values["loss"],
                    lr,
                    grad_norm,
                    tokens_per_s,
                    mfu_value,
                    {k: values[k] for k in (*shown, "val_loss", *(f"val_{n}" for n in shown)) if k in values},
                    peak_mem,
                    elapsed_s=time.perf_counter() - began,
                    eta_s=(time.perf_counter() - began) / (step + 1 - start) * (recipe.steps - step - 1),
                    compiled=compiled,
                )
            )
            record = {
                "step": step + 1,
                **values,
                "lr": lr,
                "grad_norm": grad_norm,
                "tokens": tokens,
                "normalizer": normalizer,
                "tok_per_s": tokens_per_s,
                "mfu": mfu_value,
                "mfu_without_attention": mfu_matmuls,
                "step_time_s": dt,
                "peak_mem_gib": peak_mem,
                "graphs_compiled": compiled,
                **collector.timer.take(),
            }
            metrics.write(record)
            trackers.log(tracked(record), step + 1)
            if saver is not None and saver.poll() is not None:
                last_saved = f"the saved state of step {int(saver.published.name[len('step_') :])} ({saver.published})"
            check_finite(step + 1, recipe.steps, values["loss"], grad_norm, last_saved)
    if saver is not None:
        saver.wait()
    return {**totals, "resumed_from": str(resumed) if resumed else None, "start_step": start}


@contextlib.contextmanager
def trackers_finished(trackers: Trackers):
    """Close the trackers however the loop ends (a preempted or diverged run keeps what it logged)."""
    try:
        yield trackers
    finally:
        trackers.finish()


def pinned_steps(step_data: Callable[[int], StepData], device: torch.device) -> Callable[[int], StepData]:
    """`step_data` whose batches lie in pinned host memory for a CUDA device (pinned while the GPU runs the step
    before): a copy from pageable memory first waits for the GPU's queue to drain, one from pinned memory is
    queued behind it."""
    if device.type != "cuda":
        return step_data

    def pinned(step: int) -> StepData:
        data = step_data(step)
        for micro in data.micro_batches:
            for key, value in micro.items():
                if isinstance(value, torch.Tensor) and value.device.type == "cpu":
                    micro[key] = value.pin_memory()
        return data

    return pinned


def _stop(
    options: JobOptions,
    steps: int,
    env,
    model,
    optimizer,
    state_dir,
    done: int,
    meta: dict[str, Any],
    stop: StopRequest,
    saver: StateSaver | None,
) -> None:
    """Save the state after `done` of `steps` steps (unless that state exists) and raise Preempted."""
    why = f"stop requested ({stop.requested or 'signal on another rank'}) after step {done}/{steps}"
    if state_dir is None:
        raise Preempted(f"{why}; no --state-dir, so the rerun starts over")
    if saver is not None:
        saver.wait()
    if done == 0:
        raise Preempted(f"{why}; nothing to save yet, the rerun starts over")
    saved = state_dir / state_name(done)
    if not (saved / COMPLETE).is_file():
        saved = save_state(state_dir, done, model, optimizer, env, meta, keep=options.keep_states)
    print0(f"{why}: state saved to {saved}; rerun the same command to resume")
    raise Preempted(f"{why}: state saved to {saved}")
