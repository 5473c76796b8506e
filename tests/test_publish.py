"""The published model as a Hub repository: a model card huggingface_hub reads, config.json naming
its architecture, the system prompt exactly as trained, no workflow files, lineage re-recorded."""

from __future__ import annotations

import json
from pathlib import Path

import publish
import pytest
import yaml
from _training_fixtures import build_base
from huggingface_hub import ModelCard
from huggingface_hub.repocard_data import eval_results_to_model_index, model_index_to_eval_results
from transformers import AutoConfig

from lineage.chat import load_bundle
from lineage.checkpoints.read import shard_files
from lineage.checkpoints.verify import verify_checkpoint
from lineage.workflow.runs import build_lineage

REPO = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((REPO / "config.yaml").read_text())


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("publish")
    model = build_base(root)["base"]
    (model / ".snakemake_timestamp").write_text("")  # what Snakemake leaves in a directory() output
    results = []
    for benchmark, part, score in (
        ("mmlu", "A", 0.31),
        ("mmlu", "B", 0.29),
        ("gsm8k", "A", 0.05),
        ("ifeval", "C", 0.4),
        ("degen", "A", 0.12),
        ("margin", None, 0.55),
    ):
        path = root / f"{benchmark}_{part}.json"
        path.write_text(json.dumps({"benchmark": benchmark, "part": part, "run": "soupF2", "score": score, "n": 16}))
        results.append(str(path))
    table = root / "eval_table.md"
    table.write_text("| metric | soupF2 |\n|---|---|\n| MMLU A / B (n 16 / 16) | 31.0 / 29.0 |\n")
    meta = build_lineage(CONFIG, base_dir=REPO).card_meta(CONFIG["publish"])
    out = root / "published" / "soupF2"
    publish.main(
        [
            "--model",
            str(model),
            "--meta",
            json.dumps(meta),
            "--eval-table",
            str(table),
            "--result",
            *results,
            "--out",
            str(out),
        ]
    )
    return out


def test_the_card_loads_and_its_metadata_validates_offline(published):
    card = ModelCard.load(published / "README.md")
    data = card.data
    assert data.license == "other" and data.license_name == "OpenMDW-1.1" and data.license_link.startswith("https://")
    assert data.model_name == "RSIAgent-Ember-Stage2" and data.pipeline_tag == "text-generation"
    assert len(data.eval_results) == 6
    mmlu_a = next(r for r in data.eval_results if r.dataset_name.startswith("MMLU part A"))
    # embedded: the shipped sample, named with the file the part was cut from, not a Hub data set it is not
    assert mmlu_a.dataset_type == "sample" and mmlu_a.metric_value == 0.31  # not a local path posing as a data set
    assert mmlu_a.dataset_name.endswith("(sample items: resources/sample/eval/mmlu.jsonl)")
    # the model-index round-trips through huggingface_hub's own parser (what the Hub validates)
    name, parsed = model_index_to_eval_results(eval_results_to_model_index(data.model_name, data.eval_results))
    assert name == data.model_name and parsed == data.eval_results
    body = card.text
    for section in ("## Use", "## Lineage", "## Evaluation", "| soupF2 | soup |", "| sftwF | sft | stage1 |"):
        assert section in body, section


def test_config_names_the_architecture_and_no_workflow_file_ships(published):
    assert AutoConfig.from_pretrained(published).architectures == ["NemotronHForCausalLM"]
    assert not list(published.glob(".snakemake*"))
    verify_checkpoint(published)  # lineage.json lists exactly these files' checksums
    lineage = json.loads((published / "lineage.json").read_text())
    rewritten = lineage["published_from"]["rewritten"]
    assert rewritten[:3] == [
        "config.json",
        "system_prompt.txt",
        "README.md",
    ]  # then the weights, in the published layout
    assert set(rewritten[3:]) == {*shard_files(published), "model.safetensors.index.json"}


def test_the_weights_are_what_save_pretrained_writes_for_the_model_type(published, tmp_path):
    """The base was saved in transformers' internal names (`model.*`, 3-D experts); the bundle holds what
    save_pretrained writes for a model of its config built from scratch (`backbone.*`, one tensor per expert)."""
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    def tensors(directory: Path) -> dict:
        return {name: t for shard in shard_files(directory) for name, t in load_file(directory / shard).items()}

    native = tensors(published_from(published))
    assert all(name.startswith(("model.", "lm_head.")) for name in native)
    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(published))
    model.load_state_dict(native)
    model.save_pretrained(tmp_path / "reference")
    expected, got = tensors(tmp_path / "reference"), tensors(published)
    assert sorted(got) == sorted(expected) and any(".experts.0." in name for name in got)
    assert all(torch.equal(got[name], expected[name]) for name in expected)
    reloaded = AutoModelForCausalLM.from_pretrained(published)  # and it reads back into the same model
    assert all(torch.equal(reloaded.state_dict()[k], v) for k, v in model.state_dict().items())
    modes = {path.stat().st_mode & 0o777 for path in published.iterdir() if path.is_file()}
    assert modes == {(tmp_path / "reference" / "config.json").stat().st_mode & 0o777}  # shards readable as the rest


def published_from(published: Path) -> Path:
    """The checkpoint the bundle was published from (lineage.json records it)."""
    return Path(json.loads((published / "lineage.json").read_text())["published_from"]["directory"])


def test_the_card_s_snippet_runs_on_the_folder(published, monkeypatch):
    card = (published / "README.md").read_text(encoding="utf-8")
    snippet = card.split("```python\n", 1)[1].split("```", 1)[0]
    path_line = next(line for line in snippet.splitlines() if line.startswith("path = "))
    monkeypatch.chdir(published)  # the card's path is "." without a repo id: the folder it ships in
    assert path_line.startswith('path = "."')
    scope: dict = {}
    exec(compile(snippet.replace("max_new_tokens=256", "max_new_tokens=4"), "card", "exec"), scope)
    assert scope["system"] == (published / "system_prompt.txt").read_text(encoding="utf-8")
    assert scope["out"].shape[1] > scope["inputs"]["input_ids"].shape[1]


def test_the_system_prompt_is_exactly_what_training_used(published):
    text = (published / "system_prompt.txt").read_text(encoding="utf-8")
    assert text == load_bundle(published).system_prompt and text == text.strip()
    assert text == (REPO / "resources/bundle/system_prompt.txt").read_text(encoding="utf-8").strip()
    assert f"```text\n{text}\n```" in (published / "README.md").read_text()


def test_at_full_scale_the_public_sets_are_named_by_their_hub_ids():
    from lineage.evaluation.card import eval_results

    results = [
        {"benchmark": "mmlu", "part": "A", "score": 0.7, "n": 1000},
        {"benchmark": "ifeval", "part": "C", "score": 0.73, "n": 753},
    ]
    entries = eval_results(results, {"mmlu": "data/mmlu.jsonl", "ifeval": "data/if.jsonl"}, full_scale=True)
    assert [e.dataset_type for e in entries] == ["cais/mmlu", "data/if.jsonl"]  # the card's IF sets are its own
