"""Shared fixtures: a scratch copy of the workflow so runs never write into the checkout."""

from __future__ import annotations

from pathlib import Path

import pytest
from workflow_helpers import copy_workflow


@pytest.fixture(scope="session")
def embedded_workflow(tmp_path_factory) -> Path:
    """One scratch copy shared by the end-to-end tests of a session (they build on each other)."""
    return copy_workflow(tmp_path_factory.mktemp("workflow"))
