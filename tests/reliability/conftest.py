"""The fault and bad-input cases of tests/reliability: each test is one case (each parameter one more); a test that
tries many inputs (the fuzz tests) reports how many through the `cases` fixture. tests/conftest.py counts them and
prints the tally after the run (there, because under the suite's workers only the top conftest reaches the
controller that prints).
"""

from __future__ import annotations

import pytest


@pytest.fixture
def cases(request):
    """Call with the number of inputs a test tried, when that is more than one."""

    def record(count: int) -> None:
        request.node.user_properties.append(("cases", count))

    return record
