"""`snakemake --cores 2 data` builds every data stage and an audit with the card's counts."""

import json

import pytest

from workflow_helpers import planned_jobs, snakemake

pytestmark = pytest.mark.slow

CARD = {
    "battles": 236,
    "own_better": 106,
    "other_better": 72,
    "tie": 34,
    "both_bad": 24,
    "preferred": 140,
    "holdout_pairs": 29,
    "recovered_pairs": 135,
    "winner_rows": 5600,
}


def test_data_target_reproduces_the_card_counts(embedded_workflow):
    snakemake("--cores", "2", "data", cwd=embedded_workflow)
    audit = json.loads((embedded_workflow / "results/embedded/data/audit.json").read_text())
    ours = {row["key"]: row["ours"] for row in audit["counts"]}
    assert {key: ours[key] for key in CARD} == CARD
    assert audit["leakage"]["status"] == "LEAK" and audit["leakage"]["in_winner_rows"] == 29
    rows = (embedded_workflow / "results/embedded/data/sets/winners_x40.jsonl").read_text().splitlines()
    assert len(rows) == 5600
    html = (embedded_workflow / "results/embedded/data/audit.html").read_text()
    assert "<table" in html and "5,600" in html
    assert planned_jobs("data", cwd=embedded_workflow) == {}  # a second run has nothing to do
