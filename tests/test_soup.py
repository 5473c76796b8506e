"""Model soups on pico Llama checkpoints built in temporary directories (CPU, no network).

The average must equal the fp32 weighted sum rounded to bf16 bit for bit; every refusal
must say what differs; an interrupted soup must leave nothing behind.

    .venv/bin/python -m pytest tests/test_soup.py -v
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soup as soup_cli
import torch
from _soup_fixtures import SHARD, bits, build, companions, edit, runs, stage1, tensors  # noqa: F401 (fixtures)
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM, AutoTokenizer

from lineage.checkpoints.directory import (
    init_root,
    parent_entry,
    read_lineage,
)
from lineage.checkpoints.format import CheckpointError, shown_dtype
from lineage.checkpoints.read import shard_files
from lineage.checkpoints.verify import verify_checkpoint
from lineage.checkpoints.write import ShardWriter, write_safetensors
from lineage.io import sha256_file
from lineage.soup import methods
from lineage.soup.checks import SoupError, read_layout, trace_root
from lineage.soup.stream import make_soup

# --------------------------------------------------------------------------------------------
# The average

ROUNDED_DTYPES = {
    "BF16": torch.bfloat16,
    "F16": torch.float16,
    "F8_E4M3": torch.float8_e4m3fn,
    "F8_E5M2": torch.float8_e5m2,
    "F32": torch.float32,
}


@pytest.mark.parametrize("name", sorted(ROUNDED_DTYPES))
def test_numpy_average_rounds_exactly_as_torch_over_every_bit_pattern(name):
    """Every value the dtype can hold (2^16 for the 16-bit types, 2^20 random patterns of fp32,
    all pairs for fp8), subnormals, infinities and the overflow edge included."""
    dtype, wide = ROUNDED_DTYPES[name], np.float32
    width = torch.finfo(dtype).bits
    unsigned = {8: torch.uint8, 16: torch.uint16, 32: torch.uint32}[width]
    generator = torch.Generator().manual_seed(width)
    if width == 32:
        patterns = torch.randint(0, 2**32, (2**20,), generator=generator, dtype=torch.int64)
    else:
        patterns = torch.arange(2**width, dtype=torch.int64)
    first = patterns.to(unsigned).view(dtype)
    second = first[torch.randperm(first.numel(), generator=generator)]
    if width == 8:  # every pair
        first, second = first.repeat_interleave(256), second.repeat(256)
    weights = (0.3, 0.7)
    expected = (weights[0] * first.float() + weights[1] * second.float()).to(dtype)
    got = torch.empty_like(expected)
    count = got.numel()
    as_numpy = np.dtype(shown_dtype(name))
    with np.errstate(all="ignore"):  # NaN and inf patterns average silently, as in torch
        methods.linear(
            got.view(unsigned).numpy().view(as_numpy),
            [t.view(unsigned).numpy().view(as_numpy) for t in (first, second)],
            [wide(w) for w in weights],
            np.empty(count, wide),
            np.empty(count, wide),
        )
    nan = expected.float().isnan()
    assert torch.equal(got.float().isnan(), nan)
    assert torch.equal(got[~nan].view(unsigned), expected[~nan].view(unsigned))


def test_equal_weights_equal_fp32_average_rounded_to_bf16_bit_for_bit(tmp_path, runs, stage1):
    out = tmp_path / "soup24"
    record = make_soup([("sftw2", runs["sftw2"]), ("sftw4", runs["sftw4"])], out, run="soup24", max_shard_bytes=SHARD)

    a, b, soup = tensors(runs["sftw2"]), tensors(runs["sftw4"]), tensors(out)
    assert soup.keys() == a.keys()
    for name, tensor in soup.items():
        expected = (0.5 * a[name].float() + 0.5 * b[name].float()).to(torch.bfloat16)
        assert tensor.dtype == torch.bfloat16 and tensor.shape == a[name].shape
        assert torch.equal(bits(tensor), bits(expected)), name
    assert len(shard_files(out)) > 1
    assert verify_checkpoint(out) == read_lineage(out) == record
    assert record["kind"] == "soup" and record["root"] == init_root(read_lineage(stage1))
    assert record["weights"] == [0.5, 0.5] and record["recipe"]["weights"] == [0.5, 0.5]
    assert [(p["run"], p["weight"]) for p in record["parents"]] == [("sftw2", 0.5), ("sftw4", 0.5)]
    assert record["parents"][0]["lineage_sha256"] == parent_entry("sftw2", runs["sftw2"])["lineage_sha256"]
    assert all(count == 1 for opens in record["shard_opens"].values() for count in opens.values())
    for name in ("config.json", "tokenizer.json", "chat_template.jinja", "system_prompt.txt", "serving_config.json"):
        assert (out / name).read_bytes() == (runs["sftw2"] / name).read_bytes()


def test_three_parents_with_unequal_weights_read_in_small_blocks(tmp_path, runs):
    weights = [0.5, 0.3, 0.2]
    out = tmp_path / "soup3"
    make_soup(list(runs.items()), out, run="soup3", weights=weights, max_shard_bytes=40_000, block_bytes=96)
    parts = [tensors(d) for d in runs.values()]
    for name, tensor in tensors(out).items():
        expected = (
            weights[0] * parts[0][name].float()
            + weights[1] * parts[1][name].float()
            + weights[2] * parts[2][name].float()
        ).to(torch.bfloat16)
        assert torch.equal(bits(tensor), bits(expected)), name


def test_parents_sharded_differently_still_open_each_shard_once(tmp_path, stage1, companions, runs):
    coarse = build(tmp_path / "coarse", seed=4, companions=companions, parent=stage1, max_shard_bytes=3 * SHARD)
    record = make_soup([("sftw2", runs["sftw2"]), ("coarse", coarse)], tmp_path / "mixed", run="mixed")
    assert len(shard_files(coarse)) < len(shard_files(runs["sftw2"]))
    assert all(count == 1 for opens in record["shard_opens"].values() for count in opens.values())
    a, b = tensors(runs["sftw2"]), tensors(coarse)
    for name, tensor in tensors(tmp_path / "mixed").items():
        assert torch.equal(bits(tensor), bits((0.5 * a[name].float() + 0.5 * b[name].float()).to(torch.bfloat16)))


def test_soup_loads_with_transformers_and_generates(tmp_path, runs):
    out = tmp_path / "soup24"
    make_soup([("sftw2", runs["sftw2"]), ("sftw4", runs["sftw4"])], out, run="soup24")
    model = AutoModelForCausalLM.from_pretrained(out, dtype=torch.bfloat16)
    tokenizer = AutoTokenizer.from_pretrained(out)
    assert torch.equal(model.state_dict()["lm_head.weight"], tensors(out)["lm_head.weight"])
    prompt = tokenizer("hello world", return_tensors="pt")
    generated = model.generate(**prompt, max_new_tokens=5, do_sample=False)
    assert generated.shape == (1, prompt["input_ids"].shape[1] + 5)


def test_integer_tensors_are_copied_when_equal_and_refused_when_not(tmp_path, stage1, companions):
    def with_buffer(value):
        return lambda state: {**state, "extra.position_ids": torch.arange(8) * value}

    one = build(tmp_path / "one", seed=1, companions=companions, parent=stage1, mutate=with_buffer(1))
    two = build(tmp_path / "two", seed=2, companions=companions, parent=stage1, mutate=with_buffer(1))
    three = build(tmp_path / "three", seed=3, companions=companions, parent=stage1, mutate=with_buffer(2))
    make_soup([("one", one), ("two", two)], tmp_path / "ok", run="ok")
    assert torch.equal(tensors(tmp_path / "ok")["extra.position_ids"], torch.arange(8))
    with pytest.raises(SoupError, match=r"extra\.position_ids is a int64 tensor.*one and three hold different"):
        make_soup([("one", one), ("three", three)], tmp_path / "bad", run="bad")


# --------------------------------------------------------------------------------------------
# Roots


def test_soup_of_soups_traces_the_common_root(tmp_path, runs, stage1):
    soup24 = tmp_path / "soup24"
    make_soup([("sftw2", runs["sftw2"]), ("sftw4", runs["sftw4"])], soup24, run="soup24")
    record = make_soup([("soup24", soup24), ("sftwF", runs["sftwF"])], tmp_path / "soupF2", run="soupF2")
    assert record["root"] == init_root(read_lineage(stage1))
    assert trace_root(tmp_path / "soupF2") == (record["root"], ["soupF2", "soup24", "sftw2", "stage1"])


def test_different_root_is_refused(tmp_path, runs, companions):
    other = build(tmp_path / "other", seed=1, companions=companions, root={"run": "elsewhere", "fingerprint": "e" * 64})
    with pytest.raises(
        SoupError,
        match=r"do not share one initialization: sftw2 \(sftw2 <- stage1\) descends from "
        r"stage1@ffffffffffff, other \(other\) from elsewhere@eeeeeeeeeeee",
    ):
        make_soup([("sftw2", runs["sftw2"]), ("other", other)], tmp_path / "out", run="out")
    assert not (tmp_path / "out").exists()


def test_lineage_whose_root_contradicts_its_parents_is_refused(tmp_path, runs, companions):
    soup24 = tmp_path / "soup24"
    make_soup([("sftw2", runs["sftw2"]), ("sftw4", runs["sftw4"])], soup24, run="soup24")
    claimed = {"run": "elsewhere", "fingerprint": "e" * 64}
    edit(soup24, "lineage.json", lambda text: json.dumps({**json.loads(text), "root": claimed}))
    other = build(tmp_path / "other", seed=5, companions=companions, root=claimed)
    with pytest.raises(
        SoupError,
        match=r"soup24/lineage.json records root elsewhere@.*parent sftw2 .* descends from "
        r"stage1@.*inconsistent",
    ):
        make_soup([("soup24", soup24), ("other", other)], tmp_path / "out", run="out")


# --------------------------------------------------------------------------------------------
# Config, tokenizer and bundle


def test_different_config_is_refused_naming_the_field(tmp_path, runs):
    edit(runs["sftw4"], "config.json", lambda text: json.dumps({**json.loads(text), "rms_norm_eps": 1e-5}))
    message = r"config.json of sftw2 and sftw4 differ in 1 field\(s\): rms_norm_eps: 1e-06 vs 1e-05"
    with pytest.raises(SoupError, match=message):
        make_soup([("sftw2", runs["sftw2"]), ("sftw4", runs["sftw4"])], tmp_path / "out", run="out")


def test_harmless_config_fields_are_ignored(tmp_path, runs):
    harmless = {"transformers_version": "9.9.9", "_name_or_path": "/elsewhere", "use_cache": False, "dtype": "float32"}
    edit(runs["sftw4"], "config.json", lambda text: json.dumps({**json.loads(text), **harmless}))
    make_soup([("sftw2", runs["sftw2"]), ("sftw4", runs["sftw4"])], tmp_path / "out", run="out")
    assert json.loads((tmp_path / "out" / "config.json").read_text())["transformers_version"] != "9.9.9"


@pytest.mark.parametrize(
    ("name", "change", "message"),
    [
        (
            "chat_template.jinja",
            lambda t: t.replace("<|im_end|>", "</s>"),
            r"chat_template.jinja .* first difference at line",
        ),
        ("system_prompt.txt", lambda t: "You are terse.", r"system_prompt.txt .* first difference at line 1"),
        ("tokenizer.json", lambda t: t.replace('"w0"', '"v0"'), r"tokenizer.json .* fields differ: model.vocab"),
        (
            "tokenizer_config.json",
            lambda t: json.dumps({**json.loads(t), "eos_token": "<unk>"}),
            r"tokenizer_config.json .* fields differ: eos_token: '<\|im_end\|>' vs '<unk>'",
        ),
    ],
)
def test_different_tokenizer_or_bundle_is_refused(tmp_path, runs, name, change, message):
    edit(runs["sftw4"], name, change)
    with pytest.raises(SoupError, match=message):
        make_soup([("sftw2", runs["sftw2"]), ("sftw4", runs["sftw4"])], tmp_path / "out", run="out")


def test_different_generation_config_is_noted_not_refused(tmp_path, runs):
    edit(runs["sftw4"], "generation_config.json", lambda t: json.dumps({**json.loads(t), "max_new_tokens": 7}))
    logged = []
    record = make_soup(
        [("sftw2", runs["sftw2"]), ("sftw4", runs["sftw4"])], tmp_path / "out", run="out", log=logged.append
    )
    assert record["notes"] and "generation_config.json of sftw4 differs" in logged[0]
    assert "max_new_tokens: 1024 vs 7" in logged[0]


# --------------------------------------------------------------------------------------------
# Tensors and weights


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda s: {("model.norm.scale" if k == "model.norm.weight" else k): v for k, v in s.items()},
            r"1 tensor\(s\) of a missing in b: model.norm.weight; 1 tensor\(s\) of b missing in a: model.norm.scale",
        ),
        (
            lambda s: {**s, "lm_head.weight": s["lm_head.weight"][:60]},
            r"1 shape\(s\) differ: lm_head.weight \[64, 32\] vs \[60, 32\]",
        ),
        (
            lambda s: {**s, "model.norm.weight": s["model.norm.weight"].float()},
            r"1 dtype\(s\) differ: model.norm.weight bfloat16 vs float32",
        ),
    ],
)
def test_different_tensors_are_refused_naming_them(tmp_path, stage1, companions, mutate, message):
    a = build(tmp_path / "a", seed=1, companions=companions, parent=stage1)
    b = build(tmp_path / "b", seed=2, companions=companions, parent=stage1, mutate=mutate)
    with pytest.raises(SoupError, match=r"tensors of a and b differ: " + message):
        make_soup([("a", a), ("b", b)], tmp_path / "out", run="out")


def test_weights_must_sum_to_one_unless_allowed(tmp_path, runs):
    pair = [("sftw2", runs["sftw2"]), ("sftw4", runs["sftw4"])]
    with pytest.raises(SoupError, match=r"sum to 1.1, not 1 .*--allow-unnormalized"):
        make_soup(pair, tmp_path / "out", run="out", weights=[0.5, 0.6])
    with pytest.raises(SoupError, match=r"3 weights given for 2 parents"):
        make_soup(pair, tmp_path / "out", run="out", weights=[0.5, 0.25, 0.25])
    with pytest.raises(SoupError, match=r"negative weight"):
        make_soup(pair, tmp_path / "out", run="out", weights=[1.5, -0.5])
    record = make_soup(pair, tmp_path / "out", run="out", weights=[0.5, 0.6], allow_unnormalized=True)
    assert record["weights"] == [0.5, 0.6] and record["recipe"]["allow_unnormalized"] is True
    make_soup(pair, tmp_path / "near", run="near", weights=[0.3333333, 0.6666667])


def test_output_overlapping_a_parent_is_refused(tmp_path, runs):
    with pytest.raises(SoupError, match=r"overlaps parent"):
        make_soup([("sftw2", runs["sftw2"]), ("sftw4", runs["sftw4"])], runs["sftw4"], run="x")
    assert verify_checkpoint(runs["sftw4"])


# --------------------------------------------------------------------------------------------
# Command line and writer


def test_cli_writes_a_weighted_soup_and_reports_it(tmp_path, runs, capsys):
    out = tmp_path / "cli"
    code = soup_cli.main(
        [
            "--parent",
            f"sftw2={runs['sftw2']}",
            "--parent",
            f"sftw4={runs['sftw4']}",
            "--weights",
            "0.25,0.75",
            "--run",
            "cli",
            "--out",
            str(out),
            "--max-shard-bytes",
            "32KiB",
        ]
    )
    assert code == 0
    assert "sftw2 x 0.25, sftw4 x 0.75" in capsys.readouterr().out
    record = read_lineage(out)
    assert record["weights"] == [0.25, 0.75] and len(shard_files(out)) >= 2
    assert all((out / s).stat().st_size <= 32 * 1024 + 4096 for s in shard_files(out))
    assert (
        soup_cli.main(
            [
                "--parent",
                f"sftw2={runs['sftw2']}",
                "--parent",
                f"sftw4={runs['sftw4']}",
                "--weights",
                "0.3,0.3",
                "--run",
                "x",
                "--out",
                str(tmp_path / "x"),
            ]
        )
        == 4
    )  # config
    assert "refused: weights [0.3, 0.3] sum to 0.6" in capsys.readouterr().err


def test_cli_parses_sizes_and_parents():
    assert soup_cli.parse_size("1GiB") == 1024**3 and soup_cli.parse_size("500M") == 500_000_000
    assert soup_cli.parse_size("2GB") == 2_000_000_000 and soup_cli.parse_size("4096") == 4096
    assert soup_cli.parse_parent("soup24=runs/soup24") == ("soup24", Path("runs/soup24"))
    assert soup_cli.parse_parent("runs/sftw2") == ("sftw2", Path("runs/sftw2"))


def test_writer_output_is_byte_identical_to_safetensors(tmp_path):
    sample = {
        "b": torch.randn(3, 5).to(torch.bfloat16),
        "a": torch.randn(7),
        "i": torch.arange(5, dtype=torch.int32),
        "z": torch.tensor(3.0),
        "e": torch.empty(0, 4),
        "m": torch.tensor([True, False]),
        "h": torch.ones(2).half(),
    }
    save_file(sample, tmp_path / "ref.safetensors", metadata={"format": "pt"})
    digest = write_safetensors(tmp_path / "ours.safetensors", sample, {"format": "pt"})
    assert (tmp_path / "ours.safetensors").read_bytes() == (tmp_path / "ref.safetensors").read_bytes()
    assert digest == sha256_file(tmp_path / "ref.safetensors")


def test_truncated_shard_header_is_refused(tmp_path, runs):
    shard = runs["sftw4"] / shard_files(runs["sftw4"])[0]
    shard.write_bytes(shard.read_bytes()[:-10])
    with pytest.raises(CheckpointError, match=r"the shard is truncated"):
        read_layout(runs["sftw4"])


@pytest.mark.parametrize("background", [False, True])
def test_planned_writer_streams_mixed_dtypes_into_loadable_shards(tmp_path, background):
    sample = {
        "w": torch.randn(40, 3).to(torch.bfloat16),
        "n": torch.randn(5),
        "i": torch.arange(7),
        "e": torch.empty(0, 2),
        "m": torch.tensor([True, False, True]),
        "h": torch.randn(9).half(),
    }
    with ShardWriter(tmp_path, max_shard_bytes=60, background=background, stage_bytes=64) as writer:
        order = writer.plan([(name, t.dtype, t.shape) for name, t in sample.items()])
        for name in order:
            data = sample[name].reshape(-1).view(torch.uint8)
            for begin in range(0, data.numel(), 48):  # pieces smaller than a tensor and than a stage
                piece = data[begin : begin + 48]
                writer.claim(piece.numel(), sample[name].element_size())[:] = piece.numpy()
    assert sorted(order) == sorted(sample) and len(shard_files(tmp_path)) > 2
    assert tensors(tmp_path).keys() == sample.keys()
    for name, tensor in tensors(tmp_path).items():
        assert tensor.dtype == sample[name].dtype and torch.equal(tensor, sample[name]), name
    for file, digest in writer.sha256.items():
        assert sha256_file(tmp_path / file) == digest


def test_planned_writer_refuses_a_short_stream(tmp_path):
    with pytest.raises(CheckpointError, match=r"claimed but the plan holds 80"):
        with ShardWriter(tmp_path, background=True) as writer:
            writer.plan([("a", torch.float32, (10,)), ("b", torch.float32, (10,))])
            writer.claim(40)[:] = 0
