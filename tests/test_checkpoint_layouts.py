"""Checkpoints in the layout their publisher used, read and written from every rank.

The foreign checkpoint here is written by transformers itself: `save_pretrained` of a Nemotron-H
writes the Hub's layout (`backbone.*`, one tensor per routed expert), as NVIDIA publishes the
card's Base. Training from it must equal training from the same weights in transformers' own
layout, and what the trainer writes keeps the parent's names and shapes. Saves from several ranks
must be byte for byte what one writer of the full state dict writes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import torch
from _training_fixtures import (
    LAUNCHER,
    REPO,
    SCRIPTS,
    build_base,
    launch,
    losses,
    process_family,
    run_in_process,
    train_args,
)
from safetensors import safe_open
from transformers import AutoConfig, AutoModelForCausalLM

from lineage.checkpoints.directory import copy_companion_files, read_lineage, save_checkpoint, write_lineage
from lineage.checkpoints.format import BUNDLE_FILES, INDEX_NAME, LINEAGE_NAME, TOKENIZER_FILES, stored_nbytes
from lineage.checkpoints.layouts import LayoutError, resolve_layout
from lineage.checkpoints.read import checkpoint_shapes, shard_files
from lineage.checkpoints.verify import verify_checkpoint
from lineage.soup.stream import make_soup

HELPER = REPO / "tests" / "_save_roundtrip.py"


def hub_copy(source: Path, target: Path, max_shard_size: str = "24KB") -> Path:
    """`source` re-saved by transformers' save_pretrained from a fresh model (the Hub's layout), with its bundle."""
    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(source))
    model.load_state_dict(AutoModelForCausalLM.from_pretrained(source).state_dict())
    model.save_pretrained(target, max_shard_size=max_shard_size)
    copy_companion_files(source, target, (*TOKENIZER_FILES, *BUNDLE_FILES))
    return target


def tensor_specs(directory: Path) -> dict[str, tuple[tuple[int, ...], str]]:
    """{name: (shape, dtype)} from a checkpoint's index and shards."""
    specs = {}
    for shard in shard_files(directory):
        with safe_open(directory / shard, framework="pt") as handle:
            for name in handle.keys():
                part = handle.get_slice(name)
                specs[name] = (tuple(part.get_shape()), part.get_dtype())
    return specs


def model_weights(directory: Path) -> dict[str, torch.Tensor]:
    return AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32).state_dict()


def run_helper(init: Path, out: Path, processes: int, *flags: str) -> subprocess.CompletedProcess:
    command = [
        *LAUNCHER,
        "--num_processes",
        str(processes),
        str(HELPER),
        "--init",
        str(init),
        "--out",
        str(out),
        *flags,
    ]
    env = {**os.environ, "PYTHONPATH": str(SCRIPTS), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    paths = build_base(tmp_path_factory.mktemp("layouts"))
    return {**paths, "hub": hub_copy(paths["base"], paths["base"].parent / "base_hub")}


def test_transformers_writes_the_hub_layout_that_the_resolver_maps_row_by_row(base):
    hub_names = set(tensor_specs(base["hub"]))
    assert "backbone.layers.1.mixer.experts.3.up_proj.weight" in hub_names
    assert not any(name.startswith("model.") for name in hub_names)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(base["hub"]))
    layout = resolve_layout(base["hub"], checkpoint_shapes(base["hub"]), model)
    experts = layout.pieces["model.layers.1.mixer.experts.up_proj"]
    assert experts.stacked and experts.sources == tuple(
        f"backbone.layers.1.mixer.experts.{k}.up_proj.weight" for k in range(4)
    )
    assert layout.pieces["model.embeddings.weight"].sources == ("backbone.embeddings.weight",)
    assert not layout.is_native
    assert resolve_layout(base["base"], checkpoint_shapes(base["base"]), model).is_native


def test_a_checkpoint_that_does_not_fit_is_refused_naming_the_tensor_and_both_shapes(base):
    with torch.device("meta"):
        config = AutoConfig.from_pretrained(base["hub"])
        config.moe_intermediate_size = 32
        model = AutoModelForCausalLM.from_config(config)
    with pytest.raises(
        LayoutError, match=r"backbone\.layers\.1\.mixer\.experts\.0\.up_proj\.weight has shape \[64, 64\]"
    ):
        resolve_layout(base["hub"], checkpoint_shapes(base["hub"]), model)
    shapes = checkpoint_shapes(base["hub"])
    shapes.pop("backbone.layers.3.mixer.experts.2.down_proj.weight")
    with pytest.raises(LayoutError, match=r"model\.layers\.3\.mixer\.experts\.down_proj has 4 rows .* holds 3 tensors"):
        resolve_layout(base["hub"], shapes, AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(base["hub"])))


def test_the_trainer_refuses_a_misfit_parent_with_one_line_on_every_rank(base, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    for item in base["hub"].iterdir():
        (bad / item.name).write_bytes(item.read_bytes())
    config = json.loads((bad / "config.json").read_text())
    config["moe_intermediate_size"] = 32
    (bad / "config.json").write_text(json.dumps(config))
    command = [*LAUNCHER, "--num_processes", "2", str(SCRIPTS / "train_sft.py")]
    command += train_args(bad, base["sft"], tmp_path / "out")
    env = {**os.environ, "PYTHONPATH": str(SCRIPTS), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
    assert proc.returncode == 5, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("train_sft.py: integrity error: ") and "expects [32, 64]" in last, last
    assert "Traceback" not in proc.stderr and not (tmp_path / "out").exists()


@pytest.mark.parametrize("processes", [2, pytest.param(4, marks=pytest.mark.slow)])
def test_a_hub_layout_parent_trains_the_native_parent_s_curve_and_weights_and_keeps_its_layout(
    base, tmp_path, processes
):
    outs = {}
    for parent in ("base", "hub"):
        outs[parent] = tmp_path / parent
        launch("train_sft", train_args(base[parent], base["sft"], outs[parent], micro_batch_rows=2), processes)
    assert losses(tmp_path / "base.metrics.jsonl") == losses(tmp_path / "hub.metrics.jsonl")
    native, hub = model_weights(outs["base"]), model_weights(outs["hub"])
    assert native.keys() == hub.keys() and all(torch.equal(native[k], hub[k]) for k in native)
    for parent in ("base", "hub"):  # the child speaks its parent's layout: names and shapes (dtype: the recipe's)
        parent_shapes = {name: shape for name, (shape, _) in tensor_specs(base[parent]).items()}
        assert {name: shape for name, (shape, _) in tensor_specs(outs[parent]).items()} == parent_shapes
    verify_checkpoint(outs["hub"])


@pytest.mark.parametrize("processes", [2, 4])
def test_a_save_from_every_rank_equals_the_single_writer_byte_for_byte(base, tmp_path, processes):
    """load -> save round trip over several files: the bytes of one writer of the full state dict."""
    out = tmp_path / "roundtrip"
    run_helper(base["base"], out, processes, "--max-shard-bytes", "20000")
    reference = tmp_path / "single"
    state = AutoModelForCausalLM.from_pretrained(base["base"], dtype=torch.float32).state_dict()
    save_checkpoint(
        reference,
        state,
        config=AutoConfig.from_pretrained(base["base"]),
        companions_from=base["base"],
        lineage={"run": "single"},
        max_shard_bytes=20000,
    )
    files = [*shard_files(reference), INDEX_NAME]
    assert len(files) > 4 and shard_files(out) == shard_files(reference)
    for name in files:
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name
    verify_checkpoint(out)
    assert all(torch.equal(a, b) for a, b in zip(state.values(), model_weights(out).values(), strict=True))


def test_a_hub_layout_round_trip_keeps_names_shapes_and_values(base, tmp_path):
    """...and each of the 2 ranks reads only its rows: together they read the checkpoint's bytes once, but
    for the persistent buffers (the routers' score corrections) that every rank holds whole."""
    out, reads = tmp_path / "hub_roundtrip", tmp_path / "reads"
    run_helper(base["hub"], out, 2, "--bytes-read", str(reads))
    stored = sum(stored_nbytes(dtype, shape) for shape, dtype in tensor_specs(base["hub"]).values())
    model = AutoModelForCausalLM.from_pretrained(base["hub"], dtype=torch.float32)
    saved = model.state_dict()
    replicated = sum(b.numel() * b.element_size() for name, b in model.named_buffers() if name in saved)
    per_rank = [int((reads / f"rank{rank}").read_text()) for rank in range(2)]
    assert sum(per_rank) == stored + replicated and max(per_rank) < 0.6 * stored, (per_rank, stored, replicated)
    assert tensor_specs(out) == tensor_specs(base["hub"])
    expected, got = model_weights(base["hub"]), model_weights(out)
    assert all(torch.equal(expected[k], got[k]) for k in expected)


def test_kill_9_mid_save_leaves_the_last_good_checkpoint(base, tmp_path):
    out = tmp_path / "ckpt"
    run_helper(base["base"], out, 2, "--max-shard-bytes", "20000")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    marker = tmp_path / "rows-written"
    command = [*LAUNCHER, "--num_processes", "2", str(HELPER), "--init", str(base["hub"]), "--out", str(out)]
    command += ["--pause-after-rows", str(marker)]
    env = {**os.environ, "PYTHONPATH": str(SCRIPTS), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(command, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert marker.exists(), "the save never reached its rows"
    for pid in process_family(proc.pid):
        os.kill(pid, signal.SIGKILL)
    proc.wait(timeout=60)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before, "the last good checkpoint is untouched"
    verify_checkpoint(out)
    assert list(tmp_path.glob(".ckpt.tmp-*")), "the killed save left its temporary (removed by the next writer)"
    run_helper(base["hub"], out, 2)
    assert not list(tmp_path.glob(".ckpt.tmp-*"))
    assert tensor_specs(out) == tensor_specs(base["hub"])


def test_a_soup_of_one_model_in_two_layouts_equals_the_soup_of_one_layout_byte_for_byte(base, tmp_path):
    """Two children of one parent; the second also re-saved by transformers in the Hub's layout."""
    children = {}
    for name, lr in (("a", 3e-3), ("b", 1e-3)):
        children[name] = tmp_path / name
        run_in_process("train_sft", train_args(base["base"], base["sft"], children[name], steps=2, lr=lr))
    hub_b = hub_copy(children["b"], tmp_path / "b_hub")
    record = {k: v for k, v in read_lineage(children["b"]).items() if k not in ("files", "file_stats")}
    write_lineage(hub_b, record)  # the same run, in another layout
    make_soup([("a", children["a"]), ("b", children["b"])], tmp_path / "soup", run="soup")
    mixed = make_soup([("a", children["a"]), ("b", hub_b)], tmp_path / "mixed", run="mixed")
    assert any("another checkpoint layout" in note for note in mixed["notes"])
    for name in [*shard_files(tmp_path / "soup"), INDEX_NAME]:
        assert (tmp_path / "mixed" / name).read_bytes() == (tmp_path / "soup" / name).read_bytes(), name
    hub_first = make_soup([("b", hub_b), ("a", children["a"])], tmp_path / "hub_first", run="hub_first")
    assert set(tensor_specs(tmp_path / "hub_first")) == set(tensor_specs(hub_b))  # the first parent's layout
    expected, got = model_weights(tmp_path / "soup"), model_weights(tmp_path / "hub_first")
    assert all(torch.equal(expected[k], got[k]) for k in expected)
    assert hub_first["tensors"] == len(tensor_specs(hub_b)) and (tmp_path / "hub_first" / LINEAGE_NAME).is_file()


def _two_shards(directory: Path, index_names: dict[str, str]) -> Path:
    """Shards a (x, y) and b (z) with an index of `index_names` (name -> shard)."""
    from safetensors.torch import save_file

    directory.mkdir()
    save_file({"x": torch.zeros(2, 3), "y": torch.ones(4)}, str(directory / "a.safetensors"))
    save_file({"z": torch.zeros(5)}, str(directory / "b.safetensors"))
    (directory / INDEX_NAME).write_text(json.dumps({"metadata": {}, "weight_map": index_names}))
    return directory


def test_an_index_naming_a_tensor_its_shard_lacks_is_refused_naming_both(tmp_path):
    from lineage.checkpoints.format import CheckpointError
    from lineage.soup.checks import read_layout

    bad = _two_shards(tmp_path / "bad", {"x": "a.safetensors", "y": "a.safetensors", "z": "a.safetensors"})
    for read in (checkpoint_shapes, read_layout):
        with pytest.raises(CheckpointError, match=r"a\.safetensors: the index maps z to this shard, which lacks it"):
            read(bad)


def test_a_tensor_the_index_does_not_list_is_ignored_by_loading_and_refused_by_a_soup(tmp_path):
    """transformers loads by the index; a soup would drop the unlisted tensor silently, so it says so."""
    from lineage.checkpoints.format import CheckpointError
    from lineage.soup.checks import read_layout

    partial = _two_shards(tmp_path / "partial", {"x": "a.safetensors", "z": "b.safetensors"})
    assert checkpoint_shapes(partial) == {"x": (2, 3), "z": (5,)}
    with pytest.raises(CheckpointError, match=r"a\.safetensors: holds tensors the index does not list: y"):
        read_layout(partial)
