"""Shared fixtures: a scratch copy of the workflow so runs never write into the checkout; and the two test workers'
split of the suite (pyproject: `-n 2`)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from fault_rows import plant
from workflow_helpers import copy_workflow

# Files that share one expensive thing run on one worker, in their order: the embedded lineage the end-to-end tests
# build on each other, and the local Slurm clusters (one set of daemons at a time). Each group starts first, one a
# worker, so the rest of the suite fills the gaps beside them: most of a lineage build is one core waiting on
# process start-up, which is why two workers on the CI's two cores finish sooner than one. (xdist's own
# `--dist loadgroup` does not group under pytest 9.2: tests/test_workers.py holds what this relies on.)
GROUPS = {
    "test_staleness.py": "embedded_lineage",
    "test_workflow_data.py": "embedded_lineage",
    "test_workflow_lineage.py": "embedded_lineage",
    "test_slurm.py": "slurm",
    "test_slurm_nodes.py": "slurm",
}


def scope_of(nodeid: str) -> str:
    """A test's unit of work: its group, else its file (xdist's --dist loadfile)."""
    file = nodeid.split("::", 1)[0]
    return GROUPS.get(Path(file).name, file)


def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class SharedThingScheduling(LoadScopeScheduling):
        """xdist's load-by-scope scheduler (loadfile is the same class, split by file), split by `scope_of`."""

        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return SharedThingScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    first = {group: n for n, group in enumerate(dict.fromkeys(GROUPS.values()))}
    items.sort(key=lambda item: first.get(GROUPS.get(item.path.name), len(first)))  # stable: file order kept


@pytest.fixture(scope="session")
def embedded_workflow(tmp_path_factory) -> Path:
    """One scratch copy shared by the end-to-end tests of a session (they build on each other).

    Its sample export holds one more line for each row-level fault (tests/fault_rows.py): every
    end-to-end build runs from an export that a real one could be, and the audit must name them all.
    """
    root = copy_workflow(tmp_path_factory.mktemp("workflow"))
    plant(root / "resources/sample/battles.jsonl")
    # 14 planted of 250 rows is over the shipped 5% limit (which then stops the run, as it should)
    config = root / "config.yaml"
    shipped = "max_quarantine_fraction: 0.05"
    assert config.read_text().count(shipped) == 1
    config.write_text(config.read_text().replace(shipped, "max_quarantine_fraction: 0.1"))
    return root


@pytest.fixture(scope="session")
def tokenizer_dir(tmp_path_factory):
    """A word-level tokenizer with a chat template and its two special tokens (the general mix's tests)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, "<|im_start|>": 1, "<|im_end|>": 2, "user": 3, "assistant": 4}
    core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core, unk_token="[UNK]", additional_special_tokens=["<|im_start|>", "<|im_end|>"]
    )
    tok.chat_template = "{% for m in messages %}<|im_start|>{{ m['role'] }} {{ m['content'] }}<|im_end|>{% endfor %}"
    path = tmp_path_factory.mktemp("tok")
    tok.save_pretrained(path)
    return str(path)


# --- the reliability tally: tests/reliability's fault and bad-input cases, printed after the run ---------------------
RELIABILITY_AREAS = {
    "test_preemption.py": "preemption",
    "test_integrity.py": "integrity",
    "test_atomicity.py": "atomicity",
    "test_config_validation.py": "config validation",
    "test_untrusted_input.py": "untrusted input",
    "test_bad_rows.py": "bad rows",
    "test_processes.py": "processes",
}
_tally: dict[str, Counter] = {}


def pytest_runtest_logreport(report):
    path = Path(report.nodeid.split("::")[0])  # relative to the rootdir, like tests/reliability/test_x.py
    counted = report.when == "call" or (report.when == "setup" and report.failed)
    if path.parent.name != "reliability" or not counted:
        return
    area = RELIABILITY_AREAS.get(path.name, path.stem)
    count = sum(value for key, value in report.user_properties if key == "cases") or 1
    tally = _tally.setdefault(area, Counter())
    tally["tried"] += count
    tally["passed" if report.passed else "failed"] += count


def pytest_terminal_summary(terminalreporter):
    if not _tally:
        return
    tried = sum(t["tried"] for t in _tally.values())
    passed = sum(t["passed"] for t in _tally.values())
    terminalreporter.section("reliability")
    for area, tally in sorted(_tally.items()):
        terminalreporter.write_line(f"{area:18s} {tally['passed']:5d} of {tally['tried']:5d} cases passed")
    terminalreporter.write_line(f"{'total':18s} {passed:5d} of {tried:5d} fault and bad-input cases passed")
