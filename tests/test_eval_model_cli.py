"""eval_model.py end to end on a pico checkpoint: every benchmark part writes its result and records."""

import json

import eval_model
import pytest
from _eval_fixtures import make_checkpoint, write_items

from lineage.evaluation.benchmarks import BENCHMARKS
from lineage.io import DataError

COMMON = ["--batch-size", "3", "--max-new-tokens", "6"]
PARTS = {  # benchmark -> (its flags, the part it evaluates)
    "mmlu": (["--sizes", "mmlu=4,4"], "mmlu_B"),
    "gsm8k": (["--sizes", "gsm8k=2,2"], "gsm8k_A"),
    "ifeval": (["--sizes", "ifeval=1,2,3"], "ifeval_C"),
    "degen": (["--sizes", "degen=4"], "degen_A"),
    "margin": ([], "margin_A"),  # no sizes: the whole set
}


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    return make_checkpoint(root / "ckpt", run="sftw2"), write_items(root / "items"), root


def test_every_registered_benchmark_has_a_case():
    assert set(PARTS) == set(BENCHMARKS)


@pytest.mark.parametrize("benchmark", sorted(PARTS))
def test_every_benchmark_writes_result_and_records(setup, benchmark):
    ckpt, items, root = setup
    sizes, part = PARTS[benchmark]
    argv = [
        "--model",
        str(ckpt),
        "--items",
        f"{benchmark}={items[benchmark]}",
        *sizes,
        "--parts",
        part,
        *COMMON,
        "--out-dir",
        str(root / benchmark),
    ]
    assert eval_model.main(argv) == 0
    result = json.loads((root / benchmark / f"{part}.json").read_text())
    records = [json.loads(line) for line in (root / benchmark / f"{part}.records.jsonl").read_text().splitlines()]
    assert sorted(p.name for p in (root / benchmark).iterdir()) == [f"{part}.json", f"{part}.records.jsonl"]
    assert result["benchmark"] == benchmark and result["run"] == "sftw2"
    assert result["n"] == len(result["item_ids"]) == len(records) == len(set(result["item_ids"]))
    assert 0.0 <= result["score"] <= 1.0
    assert result["wall_time_s"] > 0 and result["items_per_s"] > 0
    assert [r["id"] for r in records] == result["item_ids"]
    assert all("prompt" in r for r in records)
    assert (result["max_new_tokens"] is None) == (not BENCHMARKS[benchmark].generates)
    if benchmark == "ifeval":
        assert result["part"] == "C" and result["n"] == 3
        assert {"prompt_level_loose_acc", "inst_level_strict_acc", "inst_level_loose_acc"} <= result.keys()
    if benchmark == "gsm8k":
        assert {"strict_match", "flexible_extract"} <= result.keys()
    if benchmark == "margin":
        assert "per_token_margin_acc" in result and result["part"] is None
    if benchmark == "degen":
        assert "n_short" in result


def test_one_load_evaluates_every_part_and_parts_of_one_file_are_disjoint(setup):
    ckpt, items, root = setup
    out = root / "both"
    argv = ["--model", str(ckpt), "--items", f"mmlu={items['mmlu']}", "--sizes", "mmlu=5,5", "--out-dir", str(out)]
    assert eval_model.main(argv) == 0
    ids = [set(json.loads((out / f"mmlu_{part}.json").read_text())["item_ids"]) for part in "AB"]
    assert len(ids[0]) == len(ids[1]) == 5 and not ids[0] & ids[1]


def test_too_few_items_is_an_error_before_the_model_loads(setup, monkeypatch):
    ckpt, items, root = setup
    monkeypatch.setattr(eval_model, "load_replica", lambda *a, **k: pytest.fail("loaded the model"))
    with pytest.raises(DataError, match="only 12 items"):
        eval_model.main(
            [
                "--model",
                str(ckpt),
                "--items",
                f"mmlu={items['mmlu']}",
                "--sizes",
                "mmlu=10,5",
                "--out-dir",
                str(root / "x"),
            ]
        )


def test_unknown_parts_and_benchmarks_are_refused(setup):
    ckpt, items, root = setup
    for argv, message in (
        (["--items", f"mmlu={items['mmlu']}", "--parts", "mmlu_C"], "mmlu_C"),
        (["--items", f"arc={items['mmlu']}"], "arc"),
        (["--items", f"mmlu={items['mmlu']}", "--sizes", "gsm8k=2"], "gsm8k"),
    ):
        with pytest.raises(SystemExit, match=message):
            eval_model.main(["--model", str(ckpt), *argv, "--out-dir", str(root / "y")])


@pytest.mark.parametrize("arch, scoring", [("llama", "packed"), ("nemotron_h", "padded")])
def test_pack_tokens_scores_packed_where_the_model_allows_it(tmp_path, capsys, arch, scoring):
    """Same margin scores either way; a model that cannot be packed here is scored padded, saying why."""
    ckpt, items = make_checkpoint(tmp_path / "ckpt", run="sftw2", arch=arch), write_items(tmp_path / "items")
    results = {}
    for pack_tokens in ("0", "512"):
        out = tmp_path / f"out{pack_tokens}"
        argv = [
            "--model",
            str(ckpt),
            "--items",
            f"margin={items['margin']}",
            "--parts",
            "margin_A",
            *COMMON,
            "--pack-tokens",
            pack_tokens,
            "--out-dir",
            str(out),
        ]
        assert eval_model.main(argv) == 0
        results[pack_tokens] = json.loads((out / "margin_A.json").read_text())
        records = [json.loads(line) for line in (out / "margin_A.records.jsonl").read_text().splitlines()]
        results[pack_tokens]["logprobs"] = [r["chosen_logprob"] for r in records]
    assert results["0"]["scoring"] == "padded" and results["512"]["scoring"] == scoring
    assert results["512"]["logprobs"] == pytest.approx(results["0"]["logprobs"], abs=1e-4)
    fallback = "--pack-tokens 512: scoring padded instead" in capsys.readouterr().out
    assert fallback == (scoring == "padded")
