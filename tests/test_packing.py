"""train_sft.py --packing: packed rows give the padded run's loss and weights, and no row sees another."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from _training_fixtures import build_base, losses, one_thread, run_in_process, train_args, weights
from transformers import AutoModelForCausalLM

from lineage.chat import IGNORE_INDEX
from lineage.training import varlen_attention
from lineage.training.data import BatchPlan, collate_packed, pack_groups, packed_rank_rows, sample_order
from lineage.training.packing import PackingError, boundary_inputs, seq_idx_from_cu_seq_lens


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return build_base(tmp_path_factory.mktemp("packing"), family="llama")


def train(base, name: str, **overrides):
    out = base["base"].parent / name
    run_in_process("train_sft", train_args(base["base"], base["sft"], out, **overrides))
    return losses(out.parent / f"{name}.metrics.jsonl"), weights(out)


@pytest.fixture(scope="module")
def padded(base):
    return train(base, "padded")


def assert_same_run(run, reference, weight_tol: float) -> None:
    (curve, state), (ref_curve, ref_state) = run, reference
    diffs = [abs(a - b) for a, b in zip(curve, ref_curve, strict=True)]
    assert max(diffs) < 1e-5, diffs
    assert max((state[k] - ref_state[k]).abs().max().item() for k in ref_state) < weight_tol


def test_packed_run_matches_the_padded_run(base, padded):
    # a step's rows need more than one 256-token pack, each padded at its tail
    assert_same_run(train(base, "packed", packing=True), padded, 1e-4)


def test_chunked_cross_entropy_matches_the_per_row_loss(base, padded):
    assert_same_run(train(base, "chunked", ce_chunk_tokens=7), padded, 1e-4)


def packed_logits(model, rows) -> torch.Tensor:
    batch = collate_packed(rows, pad_id=0, length=sum(len(r.input_ids) for r in rows) + 5)
    with torch.no_grad():
        # with a cache, transformers does not read position_ids as row boundaries
        return model(input_ids=batch["input_ids"], position_ids=batch["position_ids"], use_cache=False).logits[0]


def test_a_packed_row_sees_only_itself(base):
    model = AutoModelForCausalLM.from_pretrained(base["base"], attn_implementation="sdpa", dtype=torch.float32)
    generator = torch.Generator().manual_seed(0)
    vocab = model.config.vocab_size
    rows = [SimpleNamespace(input_ids=torch.randint(3, vocab, (n,), generator=generator).tolist()) for n in (9, 14, 6)]
    for row in rows:
        row.labels = row.input_ids
    with one_thread():
        logits = packed_logits(model, rows)
        changed = [rows[0], SimpleNamespace(input_ids=[7] * 14, labels=[7] * 14), rows[2]]
        logits_changed = packed_logits(model, changed)
        alone = [model(input_ids=torch.tensor([r.input_ids])).logits[0].detach() for r in rows]
    spans = [(0, 9), (9, 23), (23, 29)]
    for (start, end), own in zip(spans, alone, strict=True):
        assert torch.allclose(logits[start:end], own, atol=1e-5), "a packed row differs from the row run alone"
    for start, end in (spans[0], spans[2]):  # the rows before and after the changed one
        assert torch.equal(logits[start:end], logits_changed[start:end])
    assert not torch.allclose(logits[9:23], logits_changed[9:23])


def test_packing_keeps_the_order_and_every_rank_runs_the_same_number_of_packs():
    assert pack_groups([5, 4, 2, 8, 1], budget=8) == [[0], [1, 2], [3], [4]]
    order = sample_order(10, 40, seed=3)
    plan = BatchPlan(global_rows=8, micro_rows=1, world_size=2)
    lengths = [1, 8, 2, 7, 3, 6, 4, 5, 8, 8]
    for step in range(5):
        packs = [packed_rank_rows(order, step, plan, rank, lengths, budget=8) for rank in range(2)]
        assert len(packs[0]) == len(packs[1])
        flat = [i for rank_packs in packs for pack in rank_packs for i in pack]
        assert flat == order[step * 8 : (step + 1) * 8].tolist()
        assert all(sum(lengths[i] for i in pack) <= 8 for rank_packs in packs for pack in rank_packs)


def test_packed_labels_never_cross_a_row_boundary():
    rows = [SimpleNamespace(input_ids=[1, 2, 3], labels=[1, 2, 3]), SimpleNamespace(input_ids=[4, 5], labels=[4, 5])]
    batch = collate_packed(rows, pad_id=0, length=8)
    assert batch["input_ids"].tolist() == [[1, 2, 3, 4, 5, 0, 0, 0]]
    assert batch["position_ids"].tolist() == [[0, 1, 2, 0, 1, 0, 1, 2]]
    assert batch["labels"].tolist() == [[IGNORE_INDEX, 2, 3, IGNORE_INDEX, 5] + [IGNORE_INDEX] * 3]
    assert batch["cu_seq_lens"].tolist() == [0, 3, 5, 8]  # the padding tail is a row of its own
    assert collate_packed(rows, pad_id=0, length=5)["cu_seq_lens"].tolist() == [0, 3, 5]
    assert collate_packed([], pad_id=0, length=4)["cu_seq_lens"].tolist() == [0, 4]  # a rank's empty pack
    trimmed = collate_packed(rows, pad_id=0, length=16, multiple=4)  # 5 tokens of rows: cut to 8, not 16
    assert trimmed["input_ids"].tolist() == [[1, 2, 3, 4, 5, 0, 0, 0]] and trimmed["cu_seq_lens"].tolist() == [
        0,
        3,
        5,
        8,
    ]
    assert collate_packed(rows, pad_id=0, length=6, multiple=4)["input_ids"].shape == (1, 6)  # never past length


def test_the_kernel_bound_is_the_pack_s_longest_row_in_whole_tiles():
    rows = [SimpleNamespace(input_ids=[1] * n, labels=[1] * n) for n in (300, 129, 40)]
    assert collate_packed(rows, pad_id=0, length=469)["longest"] == 300  # no tail
    assert collate_packed(rows[1:], pad_id=0, length=600)["longest"] == 600 - 169  # the tail is a row the kernel sees
    trimmed = collate_packed(rows[1:], pad_id=0, length=1024, multiple=256)  # cut to 256: a tail of 87
    assert trimmed["longest"] == 129 and isinstance(trimmed["longest"], int)  # a host int: reading it never waits
    assert [varlen_attention.grid_length(n) for n in (1, 128, 129, 300, 4096)] == [128, 128, 256, 384, 4096]


def test_packing_a_mamba_model_without_its_kernels_is_refused_with_what_to_install(tmp_path):
    nemotron = build_base(tmp_path, family="nemotron_h")
    with pytest.raises(PackingError, match="needs the Mamba-2 kernels") as error:
        run_in_process("train_sft", train_args(nemotron["base"], nemotron["sft"], tmp_path / "out", packing=True))
    assert "bash envs/mamba-kernels.sh" in str(error.value) and "padded training works" in str(error.value)


def test_each_model_family_gets_the_row_boundaries_its_layers_need(monkeypatch):
    assert boundary_inputs("llama", torch.device("cpu")) == ("position_ids",)
    with pytest.raises(PackingError, match="not supported for 'gpt2'"):
        boundary_inputs("gpt2", torch.device("cuda"))
    from lineage.families.family import Family

    monkeypatch.setattr(Family, "missing_kernels", lambda self: [])  # as on a GPU machine with both kernels
    assert boundary_inputs("nemotron_h", torch.device("cuda")) == ("position_ids", "seq_idx")
    with pytest.raises(PackingError, match="need CUDA, not cpu"):
        boundary_inputs("nemotron_h", torch.device("cpu"))


def test_seq_idx_numbers_each_token_by_its_row_as_cu_seq_lens_cut_them():
    rows = [SimpleNamespace(input_ids=[1, 2, 3], labels=[1, 2, 3]), SimpleNamespace(input_ids=[4, 5], labels=[4, 5])]
    batch = collate_packed(rows, pad_id=0, length=8)
    assert batch["seq_idx"].dtype == torch.int32 and batch["seq_idx"].tolist() == [[0, 0, 0, 1, 1, 2, 2, 2]]
    for length, multiple in ((5, None), (16, 4), (300, None)):
        packed = collate_packed(rows, pad_id=0, length=length, multiple=multiple)
        cu, seq_idx = packed["cu_seq_lens"], packed["seq_idx"][0]
        assert seq_idx.numel() == packed["input_ids"].shape[1]
        starts = [0] + [i for i in range(1, seq_idx.numel()) if seq_idx[i] != seq_idx[i - 1]]
        assert starts == cu[:-1].tolist()  # a new row number exactly where a row starts
        assert (packed["position_ids"][0][starts] == 0).all()
    assert collate_packed([], pad_id=0, length=4)["seq_idx"].tolist() == [[0, 0, 0, 0]]
    for bad in ([0, 3, 3, 8], [1, 8], [0, 5]):
        with pytest.raises(ValueError, match="does not split 8 tokens"):
            seq_idx_from_cu_seq_lens(torch.tensor(bad, dtype=torch.int32), 8)


def test_pack_tokens_below_max_length_is_refused(base, tmp_path, capsys):
    with pytest.raises(SystemExit):
        run_in_process(
            "train_sft", train_args(base["base"], base["sft"], tmp_path / "out", packing=True, pack_tokens=64)
        )
    assert "pack_tokens 64 is below 256 tokens, the longest row at max_length 256" in capsys.readouterr().err


def test_varlen_attention_is_refused_on_cpu(base, tmp_path, capsys):
    args = train_args(
        base["base"], base["sft"], tmp_path / "out", packing=True, packed_attention="varlen", device="cpu"
    )
    with pytest.raises(SystemExit):
        run_in_process("train_sft", args)
    assert "--packed-attention varlen runs a CUDA kernel; on CPU use sdpa" in capsys.readouterr().err


def test_varlen_attention_in_fp32_is_refused_before_any_step(base, tmp_path, capsys):
    args = train_args(
        base["base"],
        base["sft"],
        tmp_path / "out",
        packing=True,
        packed_attention="varlen",
        device="cuda",
        precision="fp32",
    )
    with pytest.raises(SystemExit):
        run_in_process("train_sft", args)
    assert "computes in bfloat16 or float16, not float32; train in bf16" in capsys.readouterr().err


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="FlashAttention's varlen kernel needs a CUDA GPU")


@cuda
def test_varlen_packed_rows_match_the_sdpa_row_mask_and_see_only_themselves(base):
    varlen_attention.register()
    load = dict(dtype=torch.bfloat16, device_map="cuda")
    sdpa = AutoModelForCausalLM.from_pretrained(base["base"], attn_implementation="sdpa", **load)
    varlen = AutoModelForCausalLM.from_pretrained(base["base"], attn_implementation="varlen", **load)
    generator = torch.Generator().manual_seed(0)
    vocab = sdpa.config.vocab_size
    rows = [
        SimpleNamespace(input_ids=torch.randint(3, vocab, (n,), generator=generator).tolist()) for n in (90, 140, 60)
    ]
    for row in rows:
        row.labels = row.input_ids

    def logits(model, rows):
        pack = collate_packed(rows, pad_id=0, length=300)
        batch = {k: v.cuda() for k, v in pack.items() if isinstance(v, torch.Tensor)}
        extra = {}
        if model is varlen:  # the trainer's bound: the longest row (140) in whole tiles, not the pack's 300
            cu, bound = batch["cu_seq_lens"], varlen_attention.grid_length(pack["longest"])
            extra = dict(cu_seq_lens_q=cu, cu_seq_lens_k=cu, max_length_q=bound, max_length_k=bound)
        with torch.no_grad():
            out = model(input_ids=batch["input_ids"], position_ids=batch["position_ids"], use_cache=False, **extra)
        return out.logits[0].float()

    reference, packed = logits(sdpa, rows), logits(varlen, rows)
    assert (packed[:290] - reference[:290]).abs().max().item() < 0.05  # bf16 kernels round differently
    changed = logits(varlen, [rows[0], SimpleNamespace(input_ids=[7] * 140, labels=[7] * 140), rows[2]])
    assert torch.equal(packed[:90], changed[:90]) and torch.equal(packed[230:290], changed[230:290])
    assert not torch.allclose(packed[90:230], changed[90:230])


@cuda
def test_varlen_packed_run_follows_the_padded_run_on_gpu(base):
    common = dict(device="cuda", precision="bf16")
    padded_run = train(base, "padded_cuda", **common)
    packed_run = train(base, "varlen_cuda", packing=True, packed_attention="varlen", **common)
    (curve, _), (ref_curve, _) = packed_run, padded_run
    assert max(abs(a - b) / b for a, b in zip(curve, ref_curve, strict=True)) < 0.01, (curve, ref_curve)
