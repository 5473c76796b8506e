"""Validation of the battle export: every bad row is quarantined with its line and field, or fails --strict."""

from __future__ import annotations

import json

import pytest
import read_battles
from battle_factory import battle, write_export

from lineage.data.export import check_quarantine_fraction, read_export
from lineage.errors import run_cli
from lineage.io import DataError


def _missing_field():
    row = battle("b2", 2)
    del row["vote"]
    return row


BAD_ROWS = {
    "missing_field": (_missing_field(), "vote", "missing field"),
    "unknown_vote": (battle("b2", 2, vote="own_win"), "vote", "unknown vote"),
    "empty_preferred": (battle("b2", 2, vote="other_better", other="  \n "), "other.answer", "preferred answer"),
    "empty_tie_side": (battle("b2", 2, vote="tie", own=""), "own.answer", "needs both answers"),
    "empty_both_bad_side": (battle("b2", 2, vote="both_bad", other=None), "other.answer", "needs both answers"),
    "duplicate_battle_id": (battle("b1", 2), "battle_id", "duplicate of the battle kept from line 1"),
    "invalid_json": ('{"battle_id": "b2", "prompt_id": 2,', "json", "invalid JSON"),
    "non_utf8": (b'{"battle_id": "b2", "note": "caf\xe9"}', "encoding", "not valid UTF-8"),
    "wrong_type": (battle("b2", "2"), "prompt_id", "must be an integer"),
    "not_ending_with_user": (
        battle("b2", 2, messages=[{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]),
        "messages",
        "must end with the user turn",
    ),
    "prompt_reused": (battle("b2", 1, prompt="A different question"), "messages", "prompt_id 1 was kept from line 1"),
    "bad_timestamp": (battle("b2", 2, created_at="yesterday"), "created_at", "ISO-8601"),
}


@pytest.mark.parametrize("case", sorted(BAD_ROWS))
def test_bad_row_is_quarantined_with_line_and_field(tmp_path, case):
    bad, field, reason = BAD_ROWS[case]
    path = write_export(tmp_path / "export.jsonl", [battle("b1", 1), bad, battle("b3", 3)])
    result = read_export(path)
    assert [row["battle_id"] for row in result.kept] == ["b1", "b3"]
    assert len(result.quarantine) == 1
    entry = result.quarantine[0]
    assert (entry["stage"], entry["line"], entry["field"]) == ("read_battles", 2, field)
    assert reason in entry["reason"]
    assert entry["file"] == str(path) and entry["raw"]
    assert result.n_read == len(result.kept) + len(result.quarantine) == 3


@pytest.mark.parametrize("case", ["missing_field", "unknown_vote", "invalid_json", "non_utf8", "duplicate_battle_id"])
def test_strict_names_file_line_and_field(tmp_path, case):
    bad, field, _ = BAD_ROWS[case]
    path = write_export(tmp_path / "export.jsonl", [battle("b1", 1), bad])
    with pytest.raises(DataError) as err:
        read_export(path, strict=True)
    assert f"{path}:2:" in str(err.value) and f"'{field}'" in str(err.value)


def test_strict_cli_exits_nonzero(tmp_path, capsys):
    path = write_export(tmp_path / "export.jsonl", [battle("b1", 1), BAD_ROWS["unknown_vote"][0]])
    code = run_cli(
        lambda: read_battles.main(
            [
                "--export",
                str(path),
                "--out",
                str(tmp_path / "o.jsonl"),
                "--quarantine",
                str(tmp_path / "q.jsonl"),
                "--strict",
            ]
        ),
        prog="read_battles.py",
    )
    assert code != 0
    assert f"{path}:2: field 'vote'" in capsys.readouterr().err
    assert not (tmp_path / "o.jsonl").exists()


def test_null_loser_is_kept_not_quarantined(tmp_path):
    path = write_export(
        tmp_path / "export.jsonl",
        [battle("b1", 1, vote="own_better", other=None), battle("b2", 2, vote="other_better", own="   ")],
    )
    result = read_export(path)
    assert not result.quarantine
    assert result.kept[0]["other"]["answer"] is None and result.kept[1]["own"]["answer"] is None


def test_same_prompt_same_messages_is_fine(tmp_path):
    path = write_export(tmp_path / "e.jsonl", [battle("b1", 1), battle("b2", 1, prompt="Question  1?\n")])
    assert len(read_export(path).kept) == 2


def test_too_many_bad_rows_fail_loudly(tmp_path):
    rows = [battle(f"b{i}", i) for i in range(1, 20)] + [BAD_ROWS["unknown_vote"][0]]
    result = read_export(write_export(tmp_path / "e.jsonl", rows))
    check_quarantine_fraction(result, 0.05, "e.jsonl")  # 1 of 20 is at the limit
    with pytest.raises(DataError, match="another format"):
        check_quarantine_fraction(result, 0.04, "e.jsonl")


def test_cli_writes_kept_and_quarantine(tmp_path, capsys):
    rows = [battle(f"b{i}", i) for i in range(1, 21)] + [BAD_ROWS["invalid_json"][0]]
    path = write_export(tmp_path / "e.jsonl", rows)
    out, quarantine = tmp_path / "out.jsonl", tmp_path / "q.jsonl"
    argv = ["--export", str(path), "--out", str(out), "--quarantine", str(quarantine)]
    assert read_battles.main(argv) == 0
    kept = out.read_text().splitlines()
    bad = [json.loads(line) for line in quarantine.read_text().splitlines()]
    assert len(kept) + len(bad) == 21 and bad[0]["line"] == 21
    assert "21 rows read" in capsys.readouterr().out


def test_native_our_model_must_be_own_side(tmp_path):
    other = battle("b2", 2)
    other["own"]["model"] = "someone-else"
    result = read_export(write_export(tmp_path / "e.jsonl", [battle("b1", 1), other]), our_model="ours")
    assert [(q["line"], q["field"]) for q in result.quarantine] == [(2, "own.model")]


@pytest.mark.parametrize("spelling", [b"\\u0000", b"\\u001b[0m", b"\\u007f", b"\\u0085", b"\x1b"])
def test_a_control_character_is_refused_however_the_file_spells_it(tmp_path, spelling):
    line = json.dumps(battle("cc", own="Fine.")).encode().replace(b"Fine.", b"Fi" + spelling + b"ne.")
    result = read_export(write_export(tmp_path / "export.jsonl", [line, battle("ok", prompt_id=2)]))
    (refused,) = result.quarantine
    assert refused["battle_id"] == "cc" and refused["field"] == "own.answer" and refused["line"] == 1
    assert "control character U+00" in refused["reason"] and [r["battle_id"] for r in result.kept] == ["ok"]


def test_tabs_newlines_and_carriage_returns_are_text(tmp_path):
    result = read_export(write_export(tmp_path / "export.jsonl", [battle("ok", own="a\tb\r\nc")]))
    assert not result.quarantine and result.kept[0]["own"]["answer"] == "a\tb\r\nc"


def test_an_over_long_answer_quarantines_its_battle_with_the_limit_named(tmp_path):
    rows = [battle("long", other="x" * 501), battle("ok", prompt_id=2, own="y" * 500)]
    result = read_export(write_export(tmp_path / "export.jsonl", rows), max_answer_chars=500)
    (refused,) = result.quarantine
    assert refused["battle_id"] == "long" and refused["field"] == "other.answer"
    assert "501 characters, over export.max_answer_chars (500)" in refused["reason"]
    assert [r["battle_id"] for r in result.kept] == ["ok"]
