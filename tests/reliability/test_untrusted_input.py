"""Inputs are untrusted: exports are fuzzed, weights are read from safetensors only, remote
code never runs unless asked for, and no shell command is built from data."""

from __future__ import annotations

import ast
import json
import random
import re
import shutil
from pathlib import Path

import pytest
import torch
from _training_fixtures import build_base, run_in_process, train_args
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from workflow_helpers import REPO

from lineage.checkpoints.directory import read_lineage, write_lineage
from lineage.checkpoints.format import CheckpointError
from lineage.checkpoints.load import load_model
from lineage.data.battles import validate_battle
from lineage.data.export import read_export
from lineage.io import DataError
from lineage.soup.stream import make_soup

SAMPLES = {
    "native": [json.loads(line) for line in (REPO / "resources/sample/battles.jsonl").read_text().splitlines()[:40]],
    "arena": [
        json.loads(line) for line in (REPO / "resources/sample/battles_arena.jsonl").read_text().splitlines()[:40]
    ],
}
OUR_MODEL = "ember-stage1"
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


def _paths(obj, prefix=()):
    """Every (path to a container, key) pair inside a JSON value."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield prefix, key
            yield from _paths(value, (*prefix, key))
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            yield prefix, index
            yield from _paths(value, (*prefix, index))


def _container(obj, path):
    for key in path:
        obj = obj[key]
    return obj


@st.composite
def export_line(draw, fmt: str) -> bytes:
    """A sample row, kept, damaged in its JSON values, or damaged as bytes."""
    row = json.loads(json.dumps(draw(st.sampled_from(SAMPLES[fmt]))))
    how = draw(st.sampled_from(["keep", "drop", "replace", "truncate", "bytes", "not an object", "blank answer"]))
    if how in ("drop", "replace"):
        path, key = draw(st.sampled_from(list(_paths(row))))
        parent = _container(row, path)
        if how == "drop":
            del parent[key]
        else:
            parent[key] = draw(JSON_VALUES)
    elif how == "not an object":
        row = draw(JSON_VALUES.filter(lambda v: not isinstance(v, dict)))
    elif how == "blank answer":
        texts = [(p, k) for p, k in _paths(row) if isinstance(_container(row, p)[k], str)]
        path, key = draw(st.sampled_from(texts))
        _container(row, path)[key] = draw(st.sampled_from(["", "  ", "\n\t"]))
    line = json.dumps(row, ensure_ascii=draw(st.booleans())).encode()
    if how == "truncate":
        line = line[: draw(st.integers(1, max(1, len(line) - 1)))]
    elif how == "bytes":
        at = draw(st.integers(0, len(line)))
        line = line[:at] + draw(st.binary(min_size=1, max_size=6)).replace(b"\n", b"\xff") + line[at:]
    return line.replace(b"\n", b" ")


@pytest.mark.parametrize("fmt", ["native", "arena"])
def test_fuzzed_export_rows_are_kept_valid_or_quarantined_never_lost(tmp_path, cases, fmt):
    tried = []

    @settings(
        max_examples=150,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(lines=st.lists(export_line(fmt), min_size=1, max_size=6), seed=st.integers(0, 2**16))
    def check(lines, seed):
        random.Random(seed).shuffle(lines)
        path = tmp_path / f"export-{len(tried)}.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        tried.append(len(lines))
        result = read_export(path, fmt=fmt, our_model=OUR_MODEL)  # never raises on a bad row
        rows = [line for line in path.read_bytes().split(b"\n") if line.strip()]
        # every row is kept, quarantined, or set aside (a battle of two other models: not ours to learn from)
        accounted = len(result.kept) + len(result.quarantine) + len(result.set_aside)
        assert result.n_read == len(rows) == accounted, "a row was lost"
        for entry in [*result.quarantine, *result.set_aside]:
            assert 1 <= entry["line"] <= len(lines) and entry["field"] and entry["reason"], entry
            assert entry["file"] == str(path)
        for row in result.kept:
            assert validate_battle(json.loads(json.dumps(row))) == row
        if result.quarantine:  # --strict stops at the first, naming the file, line and field
            first = result.quarantine[0]
            expected = rf"{re.escape(str(path))}:{first['line']}: field '{re.escape(first['field'])}'"
            with pytest.raises(DataError, match=expected):
                read_export(path, fmt=fmt, our_model=OUR_MODEL, strict=True)
        else:
            assert read_export(path, fmt=fmt, our_model=OUR_MODEL, strict=True).kept == result.kept

    check()
    cases(sum(tried))


# --------------------------------------------------------------------------------------------
# Weights and code


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return build_base(tmp_path_factory.mktemp("untrusted"))


def pickled_copy(base: Path, target: Path) -> Path:
    """The same checkpoint with its weights as a pickle (pytorch_model.bin) instead of safetensors."""
    shutil.copytree(base, target)
    model = load_model(base)
    for shard in [*target.glob("*.safetensors"), target / "model.safetensors.index.json"]:
        shard.unlink(missing_ok=True)
    torch.save(model.state_dict(), target / "pytorch_model.bin")
    record = {key: value for key, value in read_lineage(target).items() if key != "files"}
    write_lineage(target, record)
    return target


@pytest.mark.parametrize("consumer", ["eval", "soup", "training"])
def test_pickled_weights_are_refused(base, tmp_path, consumer):
    pickled = pickled_copy(base["base"], tmp_path / "pickled")
    with pytest.raises((CheckpointError, RuntimeError), match=r"pickled weights .* refused"):
        if consumer == "eval":
            load_model(pickled)
        elif consumer == "soup":
            make_soup([("a", base["base"]), ("p", pickled)], tmp_path / "soup", run="soup")
        else:
            run_in_process("train_sft", train_args(pickled, base["sft"], tmp_path / "child", steps=1))


@pytest.mark.parametrize("model_type", ["native", "unknown"])
def test_remote_code_in_a_checkpoint_never_runs(base, tmp_path, model_type):
    """A config that maps the model to code shipped in the checkpoint: the code never runs. With a
    model type transformers knows, its own class loads; with an unknown one, loading is refused."""
    evil = Path(shutil.copytree(base["base"], tmp_path / "evil"))
    marker = tmp_path / "code-ran"
    (evil / "evil_model.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    config = json.loads((evil / "config.json").read_text())
    native_type = config["model_type"]
    config["auto_map"] = {"AutoConfig": "evil_model.EvilConfig", "AutoModelForCausalLM": "evil_model.EvilModel"}
    if model_type == "unknown":
        config["model_type"] = "evil_arch"
    (evil / "config.json").write_text(json.dumps(config))
    record = {key: value for key, value in read_lineage(evil).items() if key != "files"}
    write_lineage(evil, record)
    if model_type == "unknown":
        with pytest.raises(ValueError, match="trust_remote_code=True"):
            load_model(evil)
    else:
        assert load_model(evil).config.model_type == native_type
    assert not marker.exists()


def _calls(path: Path):
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Call):
            yield node


def _name(call: ast.Call) -> str:
    return ast.unparse(call.func)


CODE = sorted(p for folder in ("workflow/scripts", "benchmarks") for p in (REPO / folder).rglob("*.py"))


@pytest.mark.parametrize("path", CODE, ids=lambda p: str(p.relative_to(REPO)))
def test_no_shell_pickle_or_remote_code_in_the_code(path):
    """No shell built from strings, no unpickling, remote code only when a user option says so."""
    for call in _calls(path):
        name, keywords = _name(call), {k.arg: k.value for k in call.keywords}
        where = f"{path.relative_to(REPO)}:{call.lineno}"
        assert name not in ("os.system", "os.popen", "pickle.load", "pickle.loads"), f"{where}: {name}"
        shell = keywords.get("shell")
        assert not (isinstance(shell, ast.Constant) and shell.value), f"{where}: shell=True"
        if name.endswith("torch.load") or name == "load" and "weights_only" in keywords:
            flag = keywords.get("weights_only")
            assert isinstance(flag, ast.Constant) and flag.value is True, f"{where}: torch.load without weights_only"
        trust = keywords.get("trust_remote_code")
        assert not (isinstance(trust, ast.Constant) and trust.value), f"{where}: trust_remote_code=True"
