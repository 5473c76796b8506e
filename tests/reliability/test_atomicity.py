"""An interrupted or disk-starved stage leaves no output that a later run would take as complete.

Outputs are written into a temporary sibling and renamed when whole. Here each kind of stage
(data, training, soup, eval) writes onto a real tmpfs with too little room, or fails midway:
it must raise a clear error naming the output, and leave the directory as it was.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from pathlib import Path

import eval_model
import pytest
import read_battles
from _eval_fixtures import make_checkpoint, write_items
from _training_fixtures import REPO, build_base, run_in_process, train_args

from lineage.evaluation import tasks
from lineage.io import DiskFullError, write_jsonl
from lineage.soup.stream import make_soup

EXPORT = REPO / "resources" / "sample" / "battles.jsonl"
TMPFS_BYTES = 2 * 1024**2


def _mount(directory: Path) -> bool:
    for command in (["mount"], ["sudo", "-n", "mount"]):
        if shutil.which(command[0]) is None:
            continue
        done = subprocess.run(
            [*command, "-t", "tmpfs", "-o", f"size={TMPFS_BYTES}", "tmpfs", str(directory)], capture_output=True
        )
        if done.returncode == 0:
            return True
    return False


@pytest.fixture
def small_disk(tmp_path):
    """A real 2 MiB tmpfs; `fill(room)` leaves only `room` bytes free on it."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if not _mount(mount):
        pytest.skip("mounting a tmpfs needs root (or passwordless sudo); the disk-full cases need one")

    def fill(room: int) -> Path:
        ballast = mount / "ballast"
        free = shutil.disk_usage(mount).free
        with open(ballast, "wb") as handle:
            handle.write(b"\0" * max(0, free - room))
        return mount

    try:
        yield fill
    finally:
        subprocess.run(["umount", str(mount)], check=False) if os.geteuid() == 0 else subprocess.run(
            ["sudo", "-n", "umount", str(mount)], check=False
        )


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name != "ballast")


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return build_base(tmp_path_factory.mktemp("atomic"))


# --------------------------------------------------------------------------------------------
# Disk full


def test_data_stage_on_a_full_disk(small_disk):
    disk = small_disk(64 * 1024)  # the validated export is ~400 KB
    with pytest.raises(DiskFullError, match=rf"{disk / 'battles.jsonl'}: No space left on device"):
        read_battles.main(
            [
                "--export",
                str(EXPORT),
                "--out",
                str(disk / "battles.jsonl"),
                "--quarantine",
                str(disk / "quarantine.jsonl"),
            ]
        )
    assert not {"battles.jsonl"} & set(leftovers(disk))
    assert not [name for name in leftovers(disk) if ".tmp-" in name]


def test_training_checkpoint_on_a_full_disk(small_disk, base, tmp_path):
    disk = small_disk(128 * 1024)  # the tiny model's checkpoint is ~0.6 MB
    with pytest.raises(DiskFullError, match=rf"{disk / 'child'}: No space left on device"):
        run_in_process(
            "train_sft", train_args(base["base"], base["sft"], disk / "child", steps=1, metrics=tmp_path / "m.jsonl")
        )
    assert leftovers(disk) == []


def test_soup_on_a_full_disk(small_disk, base, tmp_path):
    twin = shutil.copytree(base["base"], tmp_path / "twin")
    disk = small_disk(128 * 1024)
    with pytest.raises(DiskFullError, match=rf"{disk / 'soup'}: No space left on device"):
        make_soup([("base", base["base"]), ("twin", twin)], disk / "soup", run="soup", max_shard_bytes=64 * 1024)
    assert leftovers(disk) == []


def test_eval_on_a_full_disk(small_disk, tmp_path):
    model, items = make_checkpoint(tmp_path / "ckpt", run="pico"), write_items(tmp_path / "items")
    disk = small_disk(0)
    argv = [
        "--model",
        str(model),
        "--items",
        f"gsm8k={items['gsm8k']}",
        "--sizes",
        "gsm8k=2,2",
        "--parts",
        "gsm8k_A",
        "--max-new-tokens",
        "4",
        "--out-dir",
        str(disk),
    ]
    with pytest.raises(DiskFullError, match=r"No space left on device"):
        eval_model.main(argv)
    assert leftovers(disk) == []


def test_the_disk_full_error_is_an_oserror_with_its_errno(small_disk):
    disk = small_disk(0)
    with pytest.raises(OSError) as err:
        write_jsonl(disk / "rows.jsonl", ({"i": i, "pad": "x" * 100} for i in range(100)))
    assert err.value.errno == errno.ENOSPC and "free space" in str(err.value).lower()


# --------------------------------------------------------------------------------------------
# Interrupted midway


def test_an_interrupted_data_write_leaves_nothing(tmp_path):
    def rows():
        for i in range(1000):
            if i == 500:
                raise KeyboardInterrupt("interrupted mid-write")
            yield {"i": i}

    with pytest.raises(KeyboardInterrupt):
        write_jsonl(tmp_path / "rows.jsonl", rows())
    assert os.listdir(tmp_path) == []


def test_an_eval_interrupted_midway_leaves_no_result(tmp_path, monkeypatch):
    model, items = make_checkpoint(tmp_path / "ckpt", run="pico"), write_items(tmp_path / "items")
    calls = []
    real = tasks.generate_greedy

    def failing(*args, **kwargs):  # generates every output, then the job is interrupted
        calls.append(real(*args, **kwargs))
        raise KeyboardInterrupt("interrupted mid-eval")

    monkeypatch.setattr(tasks, "generate_greedy", failing)
    out = tmp_path / "out"
    argv = [
        "--model",
        str(model),
        "--items",
        f"gsm8k={items['gsm8k']}",
        "--sizes",
        "gsm8k=4,4",
        "--parts",
        "gsm8k_A",
        "--batch-size",
        "2",
        "--max-new-tokens",
        "4",
        "--out-dir",
        str(out),
    ]
    with pytest.raises(KeyboardInterrupt):
        eval_model.main(argv)
    assert len(calls) == 1 and len(calls[0]) == 4
    assert not out.exists() or os.listdir(out) == []
