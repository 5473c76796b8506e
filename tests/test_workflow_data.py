"""`snakemake --cores 2 data` builds every data stage and an audit with the card's counts."""

import json

import pytest
from fault_rows import FAULTS
from workflow_helpers import CARD, MOVED_BY_BT_001489, planned_jobs, snakemake

pytestmark = pytest.mark.slow


def test_data_target_reproduces_the_card_counts(embedded_workflow):
    snakemake("--cores", "2", "data", cwd=embedded_workflow)
    audit = json.loads((embedded_workflow / "results/embedded/data/audit.json").read_text())
    ours = {row["key"]: row["ours"] for row in audit["counts"]}
    moved = MOVED_BY_BT_001489  # and the audit says so where a count moves
    assert {key: ours[key] for key in CARD} == {key: CARD[key] - moved.get(key, 0) for key in CARD}
    notes = {row["key"]: row["note"] for row in audit["counts"]}
    assert all("bt-001489" in notes[key] for key in moved) and not any(notes[key] for key in CARD if key not in moved)
    assert audit["leakage"]["status"] == "LEAK" and audit["leakage"]["in_winner_rows"] == 29
    rows = (embedded_workflow / "results/embedded/data/sets/winners_x40.jsonl").read_text().splitlines()
    assert len(rows) == 5560
    html = (embedded_workflow / "results/embedded/data/audit.html").read_text()
    assert "<table" in html and "5,560" in html and "bt-001489" in html
    assert planned_jobs("data", cwd=embedded_workflow) == {}  # a second run has nothing to do


def test_the_audit_names_every_planted_fault_and_accounts_for_every_row(embedded_workflow):
    """The session's export holds one line of each row-level fault (conftest.py): none stopped a stage above,
    each is in the audit with its stage and field, and the conservation checks still hold."""
    snakemake("--cores", "2", "data", cwd=embedded_workflow)
    audit = json.loads((embedded_workflow / "results/embedded/data/audit.json").read_text())
    lines = plant_lines(embedded_workflow / "resources/sample/battles.jsonl")
    for name, fault in FAULTS.items():
        same_row = (
            (lambda q: q["line"] == lines[name] and q["battle_id"] == fault.battle_id)
            if fault.stage == "read_battles"
            else (lambda q: q["battle_id"] == fault.battle_id)
        )
        matches = [
            q for q in audit["quarantine"] if q["stage"] == fault.stage and q["field"] == fault.field and same_row(q)
        ]
        assert len(matches) == 1, (name, [q for q in audit["quarantine"] if q["stage"] == fault.stage])
    assert audit["ours"]["raw_rows"] == 236 + len(FAULTS)
    assert all(check["ok"] for check in audit["checks"]), audit["checks"]
    report = (embedded_workflow / "results/embedded/data/audit.md").read_text()
    read_faults = [line for name, line in lines.items() if FAULTS[name].stage == "read_battles"]
    assert all(f"battles.jsonl:{line}" in report for line in read_faults)


def plant_lines(export) -> dict[str, int]:
    """The line of each planted fault: they are the export's last lines, in FAULTS order."""
    total = export.read_bytes().count(b"\n")
    return {name: total - len(FAULTS) + 1 + offset for offset, name in enumerate(FAULTS)}
