"""A soup over damaged or interrupted inputs: a changed byte in either parent aborts it, naming the file;
sizes and mtimes are trusted only where recorded; an interrupted or killed soup leaves nothing behind.

    .venv/bin/python -m pytest tests/test_soup_integrity.py -v
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import soup as soup_cli
import torch
from _soup_fixtures import REPO, SHARD, bits, build, companions, edit, runs, stage1, tensors  # noqa: F401 (fixtures)

from lineage.checkpoints.format import CheckpointError
from lineage.checkpoints.read import shard_files
from lineage.checkpoints.verify import StreamingVerifier, verify_checkpoint
from lineage.checkpoints.write import _ShardStream
from lineage.soup import methods
from lineage.soup.stream import make_soup

# --------------------------------------------------------------------------------------------
# Damage and interruption


def test_corrupted_parent_shard_is_refused_naming_the_file(tmp_path, runs, capsys):
    shard = runs["sftw4"] / shard_files(runs["sftw4"])[1]
    data = bytearray(shard.read_bytes())
    data[-3] ^= 0xFF
    shard.write_bytes(bytes(data))
    code = soup_cli.main(
        [
            "--parent",
            f"sftw2={runs['sftw2']}",
            "--parent",
            f"sftw4={runs['sftw4']}",
            "--run",
            "out",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 5  # lineage.errors: integrity
    assert f"refused: {shard}: sha256" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def _flip_byte_inside(shard: Path, fraction: float) -> None:
    """Flip one byte of tensor data (not the header), `fraction` of the way through the file."""
    data = bytearray(shard.read_bytes())
    header_end = 8 + int.from_bytes(data[:8], "little")
    position = header_end + int((len(data) - header_end) * fraction)
    data[position] ^= 0x01
    shard.write_bytes(bytes(data))


@pytest.mark.parametrize("parent,fraction", [("sftw2", 0.0), ("sftw2", 0.5), ("coarse", 0.5), ("coarse", 0.99)])
def test_a_flipped_bit_in_either_parent_aborts_the_streamed_soup(tmp_path, stage1, companions, runs, parent, fraction):
    """Shards are verified from the bytes the average reads (in file order or not); a mismatch
    found after the first output bytes were written still leaves no output."""
    runs["coarse"] = build(
        tmp_path / "coarse", seed=4, companions=companions, parent=stage1, max_shard_bytes=3 * SHARD
    )  # read out of file order: cut differently from sftw2
    shard = runs[parent] / shard_files(runs[parent])[0]
    _flip_byte_inside(shard, fraction)
    with pytest.raises(CheckpointError, match=rf"{shard}: sha256 .* does not match"):
        make_soup([("sftw2", runs["sftw2"]), ("coarse", runs["coarse"])], tmp_path / "out", run="out")
    assert not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


def _age_and_rerecord(directory: Path, seconds: int = 10) -> None:
    """Move every shard's mtime into the past and re-record lineage.json, as for a checkpoint
    written a while ago (a fresh pico checkpoint may share one clock tick with its lineage.json)."""
    for shard in shard_files(directory):
        stat = (directory / shard).stat()
        os.utime(directory / shard, ns=(stat.st_atime_ns, stat.st_mtime_ns - seconds * 10**9))
    edit(directory, "system_prompt.txt", lambda text: text)


def test_stat_verification_trusts_recorded_shards_and_hashes_changed_ones(tmp_path, runs):
    for name in ("sftw2", "sftw4"):
        _age_and_rerecord(runs[name])
    rewritten = runs["sftw4"] / shard_files(runs["sftw4"])[0]
    rewritten.write_bytes(rewritten.read_bytes())  # same bytes, new mtime: hashed again, and still valid
    record = make_soup([("sftw2", runs["sftw2"]), ("sftw4", runs["sftw4"])], tmp_path / "soup", run="soup")
    verified = record["parent_shards_verified"]
    assert verified["sftw2"] == {"by_content": [], "by_stat": shard_files(runs["sftw2"])}
    assert verified["sftw4"]["by_content"] == [rewritten.name]
    assert verified["sftw4"]["by_stat"] == shard_files(runs["sftw4"])[1:]
    content = make_soup(
        [("sftw2", runs["sftw2"]), ("sftw4", runs["sftw4"])], tmp_path / "soup_content", run="soup", verify="content"
    )["parent_shards_verified"]
    assert content["sftw2"] == {"by_content": shard_files(runs["sftw2"]), "by_stat": []}
    assert tensors(tmp_path / "soup").keys() == tensors(tmp_path / "soup_content").keys()
    assert all(
        torch.equal(bits(a), bits(tensors(tmp_path / "soup_content")[name]))
        for name, a in tensors(tmp_path / "soup").items()
    )


def test_a_change_that_keeps_size_and_mtime_needs_content_verification(tmp_path, runs):
    """The documented limit of `--verify stat`: bit rot, or a deliberately restored mtime."""
    _age_and_rerecord(runs["sftw2"])
    shard = runs["sftw2"] / shard_files(runs["sftw2"])[1]
    before = shard.stat()
    _flip_byte_inside(shard, 0.5)
    os.utime(shard, ns=(before.st_atime_ns, before.st_mtime_ns))
    pair = [("sftw2", runs["sftw2"]), ("sftw4", runs["sftw4"])]
    make_soup(pair, tmp_path / "by_stat", run="out")
    with pytest.raises(CheckpointError, match=rf"{shard}: sha256 .* does not match"):
        make_soup(pair, tmp_path / "by_content", run="out", verify="content")
    assert not (tmp_path / "by_content").exists()


def test_a_checkpoint_recorded_without_sizes_and_times_is_hashed_in_full(tmp_path, runs):
    lineage = json.loads((runs["sftw2"] / "lineage.json").read_text())
    del lineage["file_stats"]
    (runs["sftw2"] / "lineage.json").write_text(json.dumps(lineage))
    record = make_soup([("sftw2", runs["sftw2"]), ("sftw4", runs["sftw4"])], tmp_path / "soup", run="soup")
    assert record["parent_shards_verified"]["sftw2"] == {"by_content": shard_files(runs["sftw2"]), "by_stat": []}


def test_streaming_verifier_hashes_gaps_and_out_of_order_blocks(tmp_path):
    blob = os.urandom(10_000)
    (tmp_path / "s.safetensors").write_bytes(blob)
    digest = hashlib.sha256(blob).hexdigest()
    with StreamingVerifier(tmp_path, {"s.safetensors": digest}) as verifier:
        for begin, end in ((100, 300), (250, 400), (2000, 2500), (50, 60), (9000, 9990)):  # gaps, overlap, rewind
            verifier.feed("s.safetensors", begin, memoryview(blob)[begin:end])
        assert verifier.finish(["s.safetensors"]) == ["s.safetensors"]
    (tmp_path / "s.safetensors").write_bytes(blob[:-1])
    with StreamingVerifier(tmp_path, {"s.safetensors": digest}) as verifier:
        verifier.feed("s.safetensors", 0, memoryview(blob)[:4096])
        with pytest.raises(CheckpointError, match=r"s.safetensors: sha256 .* truncated or was altered"):
            verifier.finish(["s.safetensors"])


def _fail_on_call(real, number):
    calls = []

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) == number:
            raise OSError("No space left on device (simulated)")
        return real(*args, **kwargs)

    return failing


@pytest.mark.parametrize("where", ["average", "writer thread"])
def test_interrupted_soup_leaves_nothing_and_a_rerun_completes(tmp_path, runs, monkeypatch, where):
    if where == "average":
        monkeypatch.setitem(methods.METHODS, "linear", _fail_on_call(methods.linear, 6))
    else:
        monkeypatch.setattr(_ShardStream, "feed", _fail_on_call(_ShardStream.feed, 1))
    pair = [("sftw2", runs["sftw2"]), ("sftw4", runs["sftw4"])]
    with pytest.raises(OSError, match="simulated"):
        make_soup(pair, tmp_path / "soup24", run="soup24", max_shard_bytes=SHARD // 4)
    assert sorted(os.listdir(tmp_path)) == ["sftw2", "sftw4", "sftwF"]
    monkeypatch.undo()
    make_soup(pair, tmp_path / "soup24", run="soup24")
    assert verify_checkpoint(tmp_path / "soup24")["run"] == "soup24"


def test_killed_soup_leaves_no_output_and_the_rerun_clears_its_leftovers(tmp_path, runs):
    marker, out = tmp_path / "halfway", tmp_path / "soup24"
    child = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from lineage.soup import methods, stream
        real, calls = methods.linear, []
        def linear(*args):
            real(*args)
            calls.append(1)
            if len(calls) == 8:
                Path({str(marker)!r}).touch()
                time.sleep(60)
        methods.METHODS["linear"] = linear
        stream.make_soup([("a", {str(runs["sftw2"])!r}), ("b", {str(runs["sftw4"])!r})], {str(out)!r}, run="soup24",
                       max_shard_bytes={SHARD // 4})
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow" / "scripts")}
    process = subprocess.Popen([sys.executable, "-c", child], env=env)
    try:
        deadline = time.time() + 120
        while not marker.exists():
            assert process.poll() is None and time.time() < deadline, "the soup ended before it was killed"
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    leftovers = [p for p in tmp_path.iterdir() if p.name.startswith(".soup24.tmp-")]
    assert not out.exists() and len(leftovers) == 1
    assert (
        soup_cli.main(
            [
                "--parent",
                f"a={runs['sftw2']}",
                "--parent",
                f"b={runs['sftw4']}",
                "--run",
                "soup24",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    assert verify_checkpoint(out)["run"] == "soup24"
    assert not leftovers[0].exists()
