"""Shared fixtures: a scratch copy of the workflow so runs never write into the checkout."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
COPIED = ("Snakefile", "config.yaml", "rules", "workflow", "resources", "profiles", "envs")


def copy_workflow(target: Path) -> Path:
    """Copy what a workflow run needs (no results, state or venv) into `target`."""
    target.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target / name)
    return target


@pytest.fixture(scope="session")
def embedded_workflow(tmp_path_factory) -> Path:
    """One scratch copy shared by the end-to-end tests of a session (they build on each other)."""
    return copy_workflow(tmp_path_factory.mktemp("workflow"))
