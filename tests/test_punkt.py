"""The offline Punkt model: real English parameters, NLTK's file layout, correct sentence splits."""

import os
import subprocess
import sys
from pathlib import Path

import install_punkt
import pytest

from lineage.evaluation import nltk_setup

TEXT = install_punkt.CHECK_TEXT


def _split_with(root: Path, text: str) -> list[str]:
    """nltk.sent_tokenize in a fresh interpreter that only knows NLTK_DATA=root (no network use possible)."""
    code = "import json, sys, nltk; print(json.dumps(nltk.sent_tokenize(sys.argv[1])))"
    env = {**os.environ, "NLTK_DATA": str(root)}
    out = subprocess.run([sys.executable, "-c", code, text], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    import json

    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("nltk_data")
    assert install_punkt.main(["--target", str(root)]) == 0
    return root


def test_files_are_complete_and_not_empty(installed):
    directory = nltk_setup.punkt_dir(installed)
    params, counts = install_punkt.english_parameters()
    lines = {name: (directory / name).read_text(encoding="utf-8").split("\n") for name in nltk_setup.PUNKT_FILES}
    assert len(lines["abbrev_types.txt"]) == counts["abbrev_types"] > 100
    assert len(lines["collocations.tab"]) == counts["collocations"] > 10
    assert len(lines["sent_starters.txt"]) == counts["sent_starters"] > 10
    assert len(lines["ortho_context.tab"]) == counts["ortho_context"] > 10_000
    assert {"dr", "jan", "p.m", "mr", "u.s"} <= set(lines["abbrev_types.txt"])
    assert all(len(line.split("\t")) == 2 and line.split("\t")[1].isdigit() for line in lines["ortho_context.tab"])


def test_sent_tokenize_offline_handles_abbreviations(installed):
    assert _split_with(installed, TEXT) == ["Dr. Smith arrived at 3 p.m. on Jan. 5.", "He left."]
    assert _split_with(installed, "Mr. Brown works for the U.S. government. It pays well.") == [
        "Mr. Brown works for the U.S. government.",
        "It pays well.",
    ]


def test_an_untrained_model_would_split_wrongly(tmp_path):
    """Why real parameters matter: empty files load, but 'Dr.' then ends a sentence."""
    directory = nltk_setup.punkt_dir(tmp_path)
    directory.mkdir(parents=True)
    for name in nltk_setup.PUNKT_FILES:
        (directory / name).write_text("")
    assert len(_split_with(tmp_path, TEXT)) > 2


def test_install_is_reproducible(installed, tmp_path):
    install_punkt.install(tmp_path)
    for name in nltk_setup.PUNKT_FILES:
        assert (nltk_setup.punkt_dir(tmp_path) / name).read_bytes() == (
            nltk_setup.punkt_dir(installed) / name
        ).read_bytes()


def test_venv_model_is_installed_and_matches(installed, monkeypatch):
    """The setup step (install_punkt.py --target .venv/nltk_data) has run and wrote the same files."""
    monkeypatch.delenv("NLTK_DATA", raising=False)
    directory = nltk_setup.ensure_punkt()
    for name in nltk_setup.PUNKT_FILES:
        assert (directory / name).read_bytes() == (nltk_setup.punkt_dir(installed) / name).read_bytes()


def test_missing_model_names_the_setup_command(tmp_path, monkeypatch):
    monkeypatch.setenv("NLTK_DATA", str(tmp_path))
    with pytest.raises(nltk_setup.PunktMissingError, match="install_punkt.py --target"):
        nltk_setup.ensure_punkt()
