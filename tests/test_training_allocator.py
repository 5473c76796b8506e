"""Training jobs give the CUDA allocator growing segments, and never override a user's own setting."""

from __future__ import annotations

import pytest
import torch

from lineage.training import dist as tdist


@pytest.fixture
def clean_env(monkeypatch):
    for name in tdist.ALLOCATOR_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    return monkeypatch


def test_training_sets_expandable_segments_before_cuda_starts(clean_env):
    said = tdist.training_allocator()
    assert tdist.os.environ["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True"
    assert said == "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"


@pytest.mark.parametrize("name", tdist.ALLOCATOR_VARIABLES)
def test_a_users_allocator_setting_is_kept(clean_env, name):
    clean_env.setenv(name, "max_split_size_mb:512")
    said = tdist.training_allocator()
    assert tdist.os.environ[name] == "max_split_size_mb:512"
    assert not any(tdist.os.environ.get(other) for other in tdist.ALLOCATOR_VARIABLES if other != name)
    assert "set by the user" in said


def test_after_cuda_started_the_running_allocator_is_told(clean_env):
    told = []
    clean_env.setattr(torch.cuda, "is_initialized", lambda: True)
    clean_env.setattr(torch.cuda.memory, "_set_allocator_settings", told.append, raising=False)
    said = tdist.training_allocator()
    assert "PYTORCH_CUDA_ALLOC_CONF" not in tdist.os.environ  # too late for the variable
    assert told == ["expandable_segments:True"]
    assert said == "expandable_segments:True (set after CUDA started)"
