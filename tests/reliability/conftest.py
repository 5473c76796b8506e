"""Count the fault and bad-input cases of tests/reliability and print the tally after the run.

Every test here is one case (each parameter one more); a test that tries many inputs (the
fuzz tests) reports how many through the `cases` fixture.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

HERE = Path(__file__).parent
AREAS = {
    "test_preemption.py": "preemption",
    "test_integrity.py": "integrity",
    "test_atomicity.py": "atomicity",
    "test_config_validation.py": "config validation",
    "test_untrusted_input.py": "untrusted input",
    "test_bad_rows.py": "bad rows",
    "test_processes.py": "processes",
}
_tally: dict[str, Counter] = {}


@pytest.fixture
def cases(request):
    """Call with the number of inputs a test tried, when that is more than one."""

    def record(count: int) -> None:
        request.node.user_properties.append(("cases", count))

    return record


def pytest_runtest_logreport(report):
    path = Path(report.nodeid.split("::")[0])  # relative to the rootdir, like tests/reliability/test_x.py
    counted = report.when == "call" or (report.when == "setup" and report.failed)
    if path.parent.name != HERE.name or not counted:
        return
    area = AREAS.get(path.name, path.stem)
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
