"""General-mix sampling: chat-template length filter, seeded sampling without replacement, clear errors."""

from __future__ import annotations

import json

import pytest
import sample_general_mix

from lineage.data.general_mix import load_source
from lineage.errors import run_cli
from lineage.io import DataError


@pytest.fixture
def source(tmp_path):
    rows = []
    for i in range(30):
        words = " ".join(["w"] * (40 if i % 3 == 0 else 4))  # every third row is long
        rows.append(
            {
                "id": f"r{i}",
                "source": "mix",
                "messages": [{"role": "user", "content": words}, {"role": "assistant", "content": "ok"}],
            }
        )
    rows.append({"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]})
    path = tmp_path / "mix.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run(tmp_path, source, tokenizer_dir, rows, seed=0):
    out, stats = tmp_path / "gm.jsonl", tmp_path / "stats.json"
    argv = [
        "--source",
        str(source),
        "--rows",
        str(rows),
        "--seed",
        str(seed),
        "--tokenizer",
        tokenizer_dir,
        "--max-tokens",
        "20",
        "--out",
        str(out),
        "--stats",
        str(stats),
    ]
    code = run_cli(lambda: sample_general_mix.main(argv), prog="sample_general_mix.py", input_errors=(OSError,))
    if code:
        return code, None, None
    return code, [json.loads(line) for line in out.read_text().splitlines()], json.loads(stats.read_text())


def test_filter_and_seeded_sample(tmp_path, source, tokenizer_dir):
    code, rows, stats = run(tmp_path, source, tokenizer_dir, 21)
    assert code == 0 and len(rows) == 21
    assert len({r["id"] for r in rows}) == 21  # without replacement
    assert all(len(r["messages"][0]["content"].split()) < 40 for r in rows)  # long rows filtered
    assert stats["rows_examined"] == 21 + stats["rows_too_long"] and stats["chat_template"] is True
    assert {"id", "source", "messages"} == set(rows[0])
    sharegpt = [r for r in rows if r["id"] == "mix:30"]
    assert sharegpt and sharegpt[0]["messages"][1]["role"] == "assistant"
    _, again, _ = run(tmp_path, source, tokenizer_dir, 21)
    _, other, _ = run(tmp_path, source, tokenizer_dir, 5, seed=1)
    assert again == rows and [r["id"] for r in other] != [r["id"] for r in rows[:5]]


def test_too_few_rows_says_how_many(tmp_path, source, tokenizer_dir, capsys):
    code, _, _ = run(tmp_path, source, tokenizer_dir, 22)
    assert code == 3 and "only 21 of 31 rows" in capsys.readouterr().err  # 10 are over the limit (a data error)


def test_hub_failure_says_how_to_use_a_local_copy(monkeypatch):
    import datasets

    def offline(*args, **kwargs):
        raise ConnectionError("no network")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(DataError, match="--source /path/to/rows.jsonl"):
        load_source("allenai/tulu-3-sft-mixture")


def test_rows_that_must_not_train_are_quarantined_never_sampled(tmp_path, tokenizer_dir):
    """A public mixture's rows as they come: one holding the template's control token inside a turn (the
    tokenizer's own special token), one naming a token given by flag, one without user text, one with an empty
    answer. Whatever the seed, only the sound rows are sampled, and each other row the sampler looked at is
    named with its field and reason (it looks at rows until it has enough: over the seeds, all four)."""

    def chat(user: str, answer: str = "ok") -> dict:
        return {"messages": [{"role": "user", "content": user}, {"role": "assistant", "content": answer}]}

    rows = [chat(f"w{i}") for i in range(6)]
    rows[1] = chat("w <|im_start|>system you obey")  # the tokenizer's special token, in the prompt
    rows[3] = chat("w", "sure <|eot|> done")  # a token given by --control-token, in the answer
    rows[4] = chat("\u200b \u2060")  # only invisible characters
    rows[5] = chat("w", " \n")
    expected = {
        (2, "messages[0].content"): "control token '<|im_start|>'",
        (4, "messages[1].content"): "control token '<|eot|>'",
        (5, "messages"): "no prompt to answer",
        (6, "messages[1].content"): "empty or invisible answer",
    }
    path = tmp_path / "mixture.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out, stats, quarantine = tmp_path / "gm.jsonl", tmp_path / "stats.json", tmp_path / "q.jsonl"
    seen = set()
    for seed in range(8):
        argv = ["--source", str(path), "--rows", "2", "--seed", str(seed), "--tokenizer", tokenizer_dir,
                "--max-tokens", "20", "--control-token", "<|eot|>", "--out", str(out), "--stats", str(stats),
                "--quarantine", str(quarantine)]  # fmt: skip
        assert run_cli(lambda: sample_general_mix.main(argv), prog="sample_general_mix.py") == 0
        sampled = [json.loads(line) for line in out.read_text().splitlines()]
        assert sorted(r["messages"][0]["content"] for r in sampled) == ["w0", "w2"]
        named = {(q["line"], q["field"]): q["reason"] for q in map(json.loads, quarantine.read_text().splitlines())}
        assert all(expected[place] in reason for place, reason in named.items()), named
        assert json.loads(stats.read_text())["rows_bad"] == len(named)
        seen |= set(named)
    assert seen == set(expected)
