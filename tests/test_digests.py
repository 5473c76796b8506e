"""Content digests (lineage/workflow/digests.py): what a start-up reads, and what it calls damaged."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from workflow_helpers import REPO

import lineage.workflow.digests as digests
from lineage.checkpoints.directory import write_lineage
from lineage.workflow.digests import (
    DigestCache,
    check_companions,
    companion_of,
    companions_under,
    record_external,
    write_companion,
)

MB = 2**20


@pytest.fixture
def hashed(monkeypatch):
    """The files sha256_file reads, in order."""
    seen = []
    real = digests.sha256_file

    def counting(path):
        seen.append(os.path.basename(path))
        return real(path)

    monkeypatch.setattr(digests, "sha256_file", counting)
    return seen


def old(path, seconds=10):
    """Give a file an mtime in the past, as a file written before the last start-up has."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns - seconds * 10**9))


def test_a_large_unchanged_input_is_read_once_across_start_ups(tmp_path, hashed):
    big = tmp_path / "export.jsonl"
    with big.open("wb") as out:  # 256 MB of real bytes: a read would show in the count and the time
        out.write(os.urandom(MB) * 256)
    old(big)
    companion, cache_file = tmp_path / "inputs/export.jsonl.sha256", tmp_path / "cache.json"

    first = DigestCache.load(cache_file)
    assert record_external(big, companion, first) is True
    first.save()
    assert hashed == ["export.jsonl"] and first.hashed_bytes == 256 * MB
    stamp = companion.stat().st_mtime_ns

    again = DigestCache.load(cache_file)  # the next start-up
    assert record_external(big, companion, again) is False
    assert hashed == ["export.jsonl"] and again.hashed_bytes == 0 and again.trusted_bytes == 256 * MB
    assert companion.stat().st_mtime_ns == stamp  # not rewritten: nothing downstream sees a change

    os.utime(big)  # touched: read again, same bytes, the companion left alone
    touched = DigestCache.load(cache_file)
    assert record_external(big, companion, touched) is False and touched.hashed_bytes == 256 * MB


def test_an_input_with_one_other_byte_gets_a_new_companion(tmp_path):
    export = tmp_path / "export.jsonl"
    export.write_text('{"battle_id": "bt-1"}\n')
    old(export)
    companion, cache = tmp_path / "inputs/export.jsonl.sha256", DigestCache.load(tmp_path / "cache.json")
    record_external(export, companion, cache)
    before = companion.read_text()
    export.write_text('{"battle_id": "bt-2"}\n')  # same size; the mtime moves
    assert record_external(export, companion, cache) is True and companion.read_text() != before


def test_the_companion_is_sha256sum_format_for_files_and_directories(tmp_path):
    model = tmp_path / "models/sftw2"
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}\n")
    (model / "model.safetensors").write_bytes(b"\0" * 1000)
    (model / ".snakemake_timestamp").write_text("")  # Snakemake's marker is not content
    data = tmp_path / "pairs.jsonl"
    data.write_text("{}\n")
    write_companion(model), write_companion(data)
    assert [line.split("  ")[1] for line in companion_of(model).read_text().splitlines()] == [
        "sftw2/config.json",
        "sftw2/model.safetensors",
    ]
    for companion in (companion_of(model), companion_of(data)):
        check = subprocess.run(
            ["sha256sum", "--check", "--quiet", companion.name], cwd=companion.parent, capture_output=True, text=True
        )
        assert check.returncode == 0, check.stdout + check.stderr


def test_a_checkpoint_is_vouched_for_by_its_lineage_json(tmp_path, hashed):
    model = tmp_path / "sftw2"
    model.mkdir()
    (model / "model.safetensors").write_bytes(os.urandom(4096))
    old(model / "model.safetensors")
    write_lineage(model, {"run": "sftw2"})
    write_companion(model)
    assert hashed == ["lineage.json"]  # the shard's sha256 came from lineage.json, not from a read


def test_a_rewrite_with_the_same_bytes_is_not_damage_and_other_bytes_are(tmp_path):
    models = tmp_path / "models"
    model = models / "sftw2"
    model.mkdir(parents=True)
    shard = model / "model-00001-of-00002.safetensors"
    shard.write_bytes(b"weights" * 100)
    write_companion(model)
    cache = DigestCache.load(tmp_path / "cache.json")
    assert companions_under(tmp_path) == [companion_of(model)]

    shard.write_bytes(b"weights" * 100)  # same bytes, new mtime
    assert check_companions(companions_under(tmp_path), cache) == {}
    assert companion_of(model).is_file()

    before = companion_of(model).read_text()
    shard.write_bytes(b"WEIGHTS" * 100)
    damaged = check_companions(companions_under(tmp_path), cache)
    assert list(damaged) == [model] and "model-00001-of-00002.safetensors" in damaged[model][0]
    # set aside under another name (nothing reads it as sftw2), its companion changed: Snakemake
    # plans the readers (their input changed) and so the job that wrote it (their input is missing)
    assert not model.exists() and (models / "sftw2.damaged" / shard.name).read_bytes() == b"WEIGHTS" * 100
    assert companion_of(model).read_text().startswith(before) and "# damaged: " in companion_of(model).read_text()
    assert check_companions(companions_under(tmp_path), cache) == {}  # the next start-up: nothing more to do


def test_external_companions_are_not_checked_as_outputs(tmp_path):
    (tmp_path / "inputs").mkdir()
    (tmp_path / "inputs/export.jsonl.sha256").write_text("0" * 64 + "  export.jsonl\n")
    assert companions_under(tmp_path) == []


def test_digest_artifact_writes_the_companions_among_the_outputs(tmp_path):
    data, stats = tmp_path / "pairs.jsonl", tmp_path / "stats.json"
    data.write_text("{}\n"), stats.write_text("{}\n")
    run = subprocess.run(
        [
            sys.executable,
            str(REPO / "workflow/scripts/digest_artifact.py"),
            str(data),
            str(companion_of(data)),
            str(stats),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "workflow/scripts")},
    )
    assert run.returncode == 0, run.stderr
    assert companion_of(data).is_file() and not companion_of(stats).exists()
