"""Trackers and the validation loss (lineage/training/tracking.py, validation.py): what a run reports, and that
reporting it changes nothing it trains."""

from __future__ import annotations

import importlib.util
import random
import struct

import pytest
from _training_fixtures import build_base, losses, metrics, preference_rows, run_in_process, train_args, write_jsonl

from lineage.io import DataError, sha256_file
from lineage.training.validation import due, rank_groups


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    root = tmp_path_factory.mktemp("tracking")
    paths = build_base(root)
    paths["holdout"] = write_jsonl(root / "holdout.jsonl", holdout_battles(7))
    return paths


def holdout_battles(n: int, seed: int = 7) -> list[dict]:
    """Rows as split_holdout.py writes the held-out battles: the prompt and its preferred answer."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        a, b = rng.randint(41, 90), rng.randint(41, 90)
        rows.append(
            {
                "prompt_id": 5 * i,
                "battle_id": f"bt-{i}",
                "messages": [{"role": "user", "content": f"What is {a} plus {b}?"}],
                "preferred": f"{a} plus {b} is {a + b}.",
                "preferred_side": "a",
            }
        )
    return rows


def event_scalars(folder) -> dict[str, dict[int, float]]:
    """{tag: {step: value}} of the TensorBoard event files under `folder` (TFRecord framing, Event protos)."""
    from tensorboardX.proto.event_pb2 import Event

    found: dict[str, dict[int, float]] = {}
    for path in sorted(folder.rglob("events.out.tfevents.*")):
        data, at = path.read_bytes(), 0
        while at < len(data):
            (length,) = struct.unpack("<Q", data[at : at + 8])
            event = Event.FromString(data[at + 12 : at + 12 + length])
            at += 12 + length + 4
            for value in event.summary.value:
                found.setdefault(value.tag, {})[event.step] = value.simple_value
    return found


def test_validation_changes_no_weight_and_every_number_reaches_tensorboard(base, tmp_path, capsys):
    """The same 4 steps with and without validation every 3 steps: same losses, same bytes; the tracked
    run's val_loss is in its step lines, its metrics.jsonl and its TensorBoard files, at steps 3 and 4."""
    plain, tracked = tmp_path / "plain", tmp_path / "tracked"
    run_in_process("train_sft", train_args(base["base"], base["sft"], plain, steps=4))
    capsys.readouterr()
    extra = dict(steps=4, validation=base["holdout"], validate_every=3, report_to="tensorboard")
    run_in_process("train_sft", train_args(base["base"], base["sft"], tracked, tracking_dir=tmp_path / "tb", **extra))
    out = capsys.readouterr().out
    assert "validation: 7 rows" in out and "none of them trains" in out
    assert [line.count("val_loss") for line in out.splitlines() if line.startswith("step 0")] == [0, 0, 1, 1]

    shards = sorted(p.name for p in plain.glob("*.safetensors"))
    assert [sha256_file(tracked / s) for s in shards] == [sha256_file(plain / s) for s in shards]
    assert losses(tmp_path / "tracked.metrics.jsonl") == losses(tmp_path / "plain.metrics.jsonl")
    records = metrics(tmp_path / "tracked.metrics.jsonl")
    val = {r["step"]: r["val_loss"] for r in records if "val_loss" in r}
    assert sorted(val) == [3, 4] and all(0 < v < 20 for v in val.values())

    scalars = event_scalars(tmp_path / "tb" / "tracked")  # <tracking dir>/<run>/events.*
    assert sorted(scalars["train/loss"]) == [1, 2, 3, 4]
    assert scalars["train/loss"][4] == pytest.approx(records[-1]["loss"], rel=1e-6)
    assert scalars["eval/loss"] == pytest.approx(val, rel=1e-6)
    assert "train/lr" in scalars and "train/tok_per_s" in scalars


def test_dpo_validation_scores_the_held_out_pairs_against_their_reference_and_changes_no_weight(base, tmp_path, capsys):
    """DPO with and without validation every 2 of 4 steps: same losses, same bytes; val_loss, val_margin and
    val_accuracy at steps 2 and 4, on the step line, in metrics and as eval/*. A policy that does not move
    (lr 1e-12) scores log 2 and a zero margin on them: the held-out pairs met their own reference scores."""
    import reference_logprobs

    held = write_jsonl(tmp_path / "holdout_pairs.jsonl", preference_rows(5, seed=9))

    def reference(out, *data):
        args = ["--init", str(base["base"]), "--max-length", "256", "--out", str(out)]
        reference_logprobs.main(reference_logprobs.parse_args(args + [a for d in data for a in ("--data", str(d))]))
        return out

    both = reference(tmp_path / "both.jsonl", base["pairs"], held)

    def dpo(out, lr=1e-2, scored=both, **extra):
        options = dict(steps=4, lr=lr, beta=0.5, reference_logprobs=scored) | extra
        run_in_process("train_dpo", train_args(base["base"], base["pairs"], tmp_path / out, **options))
        return metrics(tmp_path / f"{out}.metrics.jsonl")

    validated = dict(validation=held, validate_every=2)
    plain = dpo("plain")
    capsys.readouterr()
    tracked = dpo("tracked", report_to="tensorboard", tracking_dir=tmp_path / "tb", **validated)
    out = capsys.readouterr().out
    assert "validation: 5 pairs" in out and "none of them trains" in out
    assert [line.count("val_margin") for line in out.splitlines() if line.startswith("step 0")] == [0, 1, 0, 1]
    shards = sorted(p.name for p in (tmp_path / "plain").glob("*.safetensors"))
    assert [sha256_file(tmp_path / "tracked" / s) for s in shards] == [
        sha256_file(tmp_path / "plain" / s) for s in shards
    ]
    assert [r["loss"] for r in tracked] == [r["loss"] for r in plain]
    val = {r["step"]: r for r in tracked if "val_loss" in r}
    assert sorted(val) == [2, 4]
    assert val[4]["val_loss"] < 0.69 and val[4]["val_margin"] > 0  # the pairs are alike: what trains carries over
    scalars = event_scalars(tmp_path / "tb" / "tracked")
    assert scalars["eval/margin"][4] == pytest.approx(val[4]["val_margin"], rel=1e-6)
    assert set(scalars["eval/accuracy"]) == {2, 4}

    still = {r["step"]: r for r in dpo("still", lr=1e-12, **validated) if "val_loss" in r}
    assert still[4]["val_loss"] == pytest.approx(0.693147, abs=1e-4) and abs(still[4]["val_margin"]) < 1e-3

    only_training = reference(tmp_path / "training.jsonl", base["pairs"])
    with pytest.raises(DataError, match="no reference log-probs for 5 of the 5 validation pairs"):
        dpo("unscored", scored=only_training, **validated)


def _with_and_without(script: str, base, data, root, common: dict, validated: dict):
    """`script` trained twice from `base` on `data`, the second time with `validated` added: (metrics, metrics,
    weights, weights)."""
    from _training_fixtures import weights

    run_in_process(script, train_args(base, data, root / "plain", **common))
    run_in_process(script, train_args(base, data, root / "validated", **common, **validated))
    return (
        metrics(root / "plain.metrics.jsonl"),
        metrics(root / "validated.metrics.jsonl"),
        weights(root / "plain"),
        weights(root / "validated"),
    )


def _packed_runs(root, family: str, device: str, **speed) -> tuple[list[dict], list[dict], dict, dict]:
    """Packed training with and without packed validation: (metrics, metrics, weights, weights)."""
    paths = build_base(root, family=family)
    holdout = write_jsonl(root / "holdout.jsonl", holdout_battles(7))
    common = dict(steps=4, packing=True, pack_tokens=512, device=device, **speed)
    validated = dict(validation=holdout, validate_every=2, report_to="tensorboard", tracking_dir=root / "tb")
    return _with_and_without("train_sft", paths["base"], paths["sft"], root, common, validated)


def test_packed_validation_changes_no_weight(tmp_path):
    """Rows packed as the GPU scales train them (here a Llama on CPU, whose packs need no kernels)."""
    plain, validated, before, after = _packed_runs(tmp_path, "llama", "cpu")
    assert [r["loss"] for r in plain] == [r["loss"] for r in validated]
    assert [r.get("val_loss") is not None for r in validated] == [False, True, False, True]
    assert all(before[name].equal(after[name]) for name in before)


def _no_gpu_kernels() -> bool:
    import torch

    from lineage.families.nemotron_h import missing_mamba_kernels

    return not torch.cuda.is_available() or bool(missing_mamba_kernels())


@pytest.mark.skipif(_no_gpu_kernels(), reason="needs a CUDA GPU and the Mamba-2 kernels")
def test_packed_validation_on_the_gpu_scale_s_path(tmp_path):
    """Nemotron-H on the Mamba-2 kernels, varlen attention, compiled blocks, the chunked head loss, bf16: the
    validation pass (eval mode, no_grad, its own pack shapes) leaves the compiled training steps as they were."""
    speed = dict(precision="bf16", compile=True, fused_loss="inplace_chunked", packed_attention="varlen")
    plain, validated, before, after = _packed_runs(tmp_path, "nemotron_h", "cuda", **speed)
    assert [r["loss"] for r in plain] == pytest.approx([r["loss"] for r in validated], rel=1e-3)
    assert [r.get("val_loss") is not None for r in validated] == [False, True, False, True]
    assert all(0 < r["val_loss"] < 20 for r in validated if "val_loss" in r)


def _packed_dpo_runs(root, family: str, device: str, **speed) -> tuple[list[dict], list[dict], dict, dict]:
    """Packed DPO with and without validation on held-out pairs: (metrics, metrics, weights, weights)."""
    import reference_logprobs

    paths = build_base(root, family=family)
    held = write_jsonl(root / "holdout_pairs.jsonl", preference_rows(5, seed=9))
    scored = root / "reference.jsonl"
    flags = ["--init", str(paths["base"]), "--max-length", "256", "--device", device, "--out", str(scored)]
    reference_logprobs.main(reference_logprobs.parse_args(flags + ["--data", str(paths["pairs"]), "--data", str(held)]))
    common = dict(steps=4, lr=1e-2, beta=0.5, reference_logprobs=scored, packing=True, pack_tokens=1024, device=device)
    common |= speed
    return _with_and_without(
        "train_dpo", paths["base"], paths["pairs"], root, common, dict(validation=held, validate_every=2)
    )


def test_packed_dpo_validation_changes_no_weight(tmp_path):
    """Pairs packed as the GPU scale's DPO packs them (a Llama on CPU): the validation pass changes nothing."""
    plain, validated, before, after = _packed_dpo_runs(tmp_path, "llama", "cpu")
    assert [r["loss"] for r in plain] == [r["loss"] for r in validated]
    assert [r.get("val_margin") is not None for r in validated] == [False, True, False, True]
    assert all(before[name].equal(after[name]) for name in before)


@pytest.mark.skipif(_no_gpu_kernels(), reason="needs a CUDA GPU and the Mamba-2 kernels")
def test_packed_dpo_validation_on_the_gpu_scale_s_path(tmp_path):
    """DPO as the gpu scale runs it (Mamba-2 kernels, varlen attention, compiled blocks, the chunked head loss's
    log-probs, bf16), validating on held-out pairs: the training steps as without, a finite val_loss."""
    speed = dict(precision="bf16", compile=True, fused_loss="inplace_chunked", packed_attention="varlen")
    plain, validated, before, after = _packed_dpo_runs(tmp_path, "nemotron_h", "cuda", **speed)
    assert [r["loss"] for r in plain] == pytest.approx([r["loss"] for r in validated], rel=1e-3)
    assert [r.get("val_loss") is not None for r in validated] == [False, True, False, True]
    assert all(0 < r["val_loss"] < 5 and -50 < r["val_margin"] < 50 for r in validated if "val_loss" in r)


@pytest.mark.skipif(importlib.util.find_spec("wandb") is None, reason="wandb is not installed (pip install wandb)")
def test_a_named_wandb_tracker_keeps_an_offline_run(base, tmp_path, monkeypatch):
    """WANDB_MODE=offline: the run is written under <tracking dir>/wandb for `wandb sync`, nothing is sent."""
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    out = tmp_path / "offline"
    run_in_process(
        "train_sft", train_args(base["base"], base["sft"], out, steps=2, report_to="wandb", tracking_dir=tmp_path / "t")
    )
    (run,) = (tmp_path / "t" / "wandb").glob("offline-run-*")
    assert list(run.glob("run-*.wandb")), sorted(p.name for p in run.iterdir())


def test_tracker_and_validation_flags_say_how_to_fix_them(base, tmp_path, capsys):
    import train_sft

    def refused(**flags):
        with pytest.raises(SystemExit):
            train_sft.parse_args(train_args(base["base"], base["sft"], tmp_path / "x", **flags))
        return capsys.readouterr().err

    assert "unknown tracker 'tensorbord'" in refused(report_to="tensorbord", tracking_dir=tmp_path)
    assert "needs --tracking-dir" in refused(report_to="tensorboard")
    assert "needs --validation" in refused(validate_every=5)
    if importlib.util.find_spec("mlflow") is None:
        assert "pip install mlflow" in refused(report_to="mlflow", tracking_dir=tmp_path)


@pytest.mark.parametrize("world,micro,budget", [(1, 4, None), (2, 4, None), (3, 2, None), (2, 4, 40), (4, 1, 25)])
def test_every_validation_row_is_scored_once_and_every_rank_runs_as_many_passes(world, micro, budget):
    lengths = [5 + (7 * i) % 20 for i in range(11)]
    shares = [rank_groups(lengths, world, rank, micro, budget) for rank in range(world)]
    assert len({len(groups) for groups in shares}) == 1  # each forward all-gathers: the ranks must keep in step
    assert sorted(i for groups in shares for group in groups for i in group) == list(range(11))
    for groups in shares:
        assert (
            all(len(g) <= micro for g in groups)
            if budget is None
            else all(sum(lengths[i] for i in g) <= budget for g in groups)
        )


def test_validation_comes_every_n_steps_and_after_the_last():
    assert [s for s in range(1, 11) if due(s, 10, 4)] == [4, 8, 10]
    assert not any(due(s, 10, 0) for s in range(1, 11))


def test_a_tracker_that_does_not_start_stops_the_run_in_one_line_and_closes_the_others(tmp_path, monkeypatch):
    """A tracker library's own refusal (MLflow 3's file store, a W&B login) comes before the first step as one
    line naming the tracker and how to leave it out; the trackers already started are closed."""
    from lineage.errors import exit_code
    from lineage.training import tracking

    finished = []

    class Started:
        def __init__(self, *args):
            pass

        def config(self, values):
            pass

        def finish(self):
            finished.append("tensorboard")

    class Refusing:
        def __init__(self, *args):
            raise RuntimeError("The filesystem tracking backend is in maintenance mode.\nPlease migrate.")

    monkeypatch.setitem(tracking.WRITERS, "tensorboard", Started)
    monkeypatch.setitem(tracking.WRITERS, "mlflow", Refusing)
    with pytest.raises(tracking.TrackerError) as refused:
        tracking.Trackers.start(
            ("tensorboard", "mlflow"), folder=tmp_path, project="p", run="r", config={}, start_step=0, enabled=True
        )
    message = str(refused.value)
    assert message.startswith("tracker mlflow did not start (RuntimeError: The filesystem tracking backend")
    assert "\n" not in message and "leave mlflow out of scales.<scale>.train.report_to" in message
    assert finished == ["tensorboard"] and exit_code(refused.value) == 7


@pytest.mark.skipif(
    importlib.util.find_spec("mlflow") is None, reason="mlflow is not installed (pip install mlflow-skinny)"
)
def test_a_named_mlflow_tracker_keeps_a_local_run(tmp_path, monkeypatch):
    """Without MLFLOW_TRACKING_URI the run lands in <tracking dir>/mlruns, which MLflow 3 refuses unless opted in."""
    from lineage.training.tracking import Trackers

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    trackers = Trackers.start(
        ("mlflow",), folder=tmp_path, project="p", run="r", config={"lr": 1.0}, start_step=0, enabled=True
    )
    trackers.log({"train/loss": 2.5}, 1)
    trackers.finish()
    assert list((tmp_path / "mlruns").rglob("train_loss"))


def test_a_built_run_s_metrics_replay_into_a_tracker_without_retraining(tmp_path):
    """tools/replay_metrics.py sends results/<scale>/metrics/<run>.jsonl as the run's rank 0 would have."""
    import json

    import replay_metrics

    metrics = tmp_path / "results/embedded/metrics/sftw2.jsonl"
    metrics.parent.mkdir(parents=True)
    records = [{"step": 1, "loss": 2.5, "lr": 1e-4}, {"step": 2, "loss": 2.25, "lr": 1e-4, "val_loss": 2.75}]
    metrics.write_text("".join(json.dumps(r) + "\n" for r in records))
    lineage = tmp_path / "results/embedded/models/sftw2/lineage.json"
    lineage.parent.mkdir(parents=True)
    lineage.write_text(json.dumps({"recipe": {"lr": 1e-4, "adam_betas": [0.9, 0.95]}}))

    assert replay_metrics.replay("sftw2", "embedded", ("tensorboard",), root=tmp_path) == 2
    scalars = event_scalars(tmp_path / "logs/embedded/tracking/sftw2")
    assert scalars["train/loss"] == {1: 2.5, 2: 2.25} and scalars["eval/loss"] == {2: 2.75}
    with pytest.raises(SystemExit, match="no metrics for run 'sftw4'"):
        replay_metrics.replay("sftw4", "embedded", ("tensorboard",), root=tmp_path)
