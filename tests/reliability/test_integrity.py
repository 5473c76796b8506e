"""Every checkpoint file has a sha256 in lineage.json, checked before a soup, an eval or a child
training run uses it: a damaged checkpoint is refused with a message naming the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _training_fixtures import build_base, run_in_process, train_args

from lineage.checkpoints.format import LINEAGE_NAME, CheckpointError
from lineage.checkpoints.load import load_model
from lineage.checkpoints.read import shard_files
from lineage.checkpoints.verify import verify_checkpoint
from lineage.soup.stream import make_soup


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    return build_base(tmp_path_factory.mktemp("integrity"))


@pytest.fixture
def checkpoint(pristine, tmp_path) -> Path:
    """A fresh copy of the base checkpoint for each case to damage."""
    return Path(shutil.copytree(pristine["base"], tmp_path / "base"))


def first_shard(directory: Path) -> Path:
    return directory / shard_files(directory)[0]


def truncate(directory: Path) -> Path:
    shard = first_shard(directory)
    data = shard.read_bytes()
    shard.write_bytes(data[: len(data) - 1000])
    return shard


def flip_a_bit(directory: Path) -> Path:
    shard = first_shard(directory)
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0x10
    shard.write_bytes(bytes(data))
    return shard


def delete_shard(directory: Path) -> Path:
    shard = first_shard(directory)
    shard.unlink()
    return shard


def edit_config(directory: Path) -> Path:
    config = directory / "config.json"
    config.write_text(config.read_text().replace('"vocab_size"', '"vocab_size_typo"'))
    return config


def swap_tokenizer(directory: Path) -> Path:
    tokenizer = directory / "tokenizer.json"
    tokenizer.write_text(json.dumps(json.loads(tokenizer.read_text()), indent=1))  # same content, other bytes
    return tokenizer


DAMAGE = {
    "truncated shard": truncate,
    "flipped bit": flip_a_bit,
    "deleted shard": delete_shard,
    "edited config": edit_config,
    "rewritten tokenizer": swap_tokenizer,
}


def use_in_soup(directory: Path, tmp_path: Path) -> None:
    twin = shutil.copytree(directory.parent / "pristine-twin", tmp_path / "twin")
    make_soup([("damaged", directory), ("twin", twin)], tmp_path / "soup", run="soup")


def use_in_eval(directory: Path, tmp_path: Path) -> None:
    load_model(directory)  # what every eval script calls first


def use_in_training(directory: Path, tmp_path: Path, data: Path) -> None:
    run_in_process("train_sft", train_args(directory, data, tmp_path / "child", steps=1))


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("consumer", ["soup", "eval", "training"])
def test_damaged_checkpoint_is_refused_naming_the_file(pristine, checkpoint, tmp_path, damage, consumer):
    shutil.copytree(pristine["base"], checkpoint.parent / "pristine-twin")
    damaged = DAMAGE[damage](checkpoint)
    with pytest.raises((CheckpointError, RuntimeError)) as err:
        if consumer == "soup":
            use_in_soup(checkpoint, tmp_path)
        elif consumer == "eval":
            use_in_eval(checkpoint, tmp_path)
        else:
            use_in_training(checkpoint, tmp_path, pristine["sft"])
    assert str(damaged) in str(err.value)
    assert any(word in str(err.value) for word in ("sha256", "missing", "truncated")), str(err.value)
    assert not (tmp_path / "soup").exists() and not (tmp_path / "child").exists()


def test_every_file_of_a_checkpoint_has_a_recorded_sha256(pristine):
    directory = pristine["base"]
    recorded = json.loads((directory / LINEAGE_NAME).read_text())["files"]
    on_disk = {str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file() and p.name != LINEAGE_NAME}
    assert set(recorded) == on_disk
    assert all(len(digest) == 64 for digest in recorded.values())
    verify_checkpoint(directory)


def test_an_undamaged_copy_passes_every_consumer(pristine, checkpoint, tmp_path):
    """The refusals above come from the damage, not from copying."""
    shutil.copytree(pristine["base"], checkpoint.parent / "pristine-twin")
    use_in_soup(checkpoint, tmp_path)
    use_in_eval(checkpoint, tmp_path)
    use_in_training(checkpoint, tmp_path, pristine["sft"])
    assert verify_checkpoint(tmp_path / "soup") and verify_checkpoint(tmp_path / "child")
