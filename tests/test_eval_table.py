"""The card's table: verbatim card values, our cells in the card's format, card beside ours at full scale."""

import json
from pathlib import Path

import make_eval_table
import pytest

from lineage.evaluation.table import CARD_COLUMNS, ROWS, parse_card
from lineage.io import DataError

ROOT = Path(__file__).resolve().parents[1]
CARD_TSV = ROOT / "resources" / "card_eval_table.tsv"
CARD_TEXT = ROOT.parent / "shared" / "seed" / "model-card.txt"
RUNS = ["stage1", "sftw2", "sftwF", "soup24", "soupF2"]


def write_results(directory: Path, runs=("stage1", "soupF2"), extra=()) -> list[str]:
    paths = []
    scores = {"mmlu": 0.757, "gsm8k": 0.82, "ifeval": 0.715, "degen": 0.0884, "margin": 0.3448}
    cells = [
        ("mmlu", "A"),
        ("mmlu", "B"),
        ("gsm8k", "A"),
        ("gsm8k", "B"),
        ("ifeval", "A"),
        ("ifeval", "B"),
        ("ifeval", "C"),
        ("degen", "A"),
        ("margin", None),
        *extra,
    ]
    for run in runs:
        for benchmark, part in cells:
            path = directory / f"{run}_{benchmark}_{part}.json"
            score = scores[benchmark] - (0.01 if part == "B" else 0.0)
            path.write_text(json.dumps({"benchmark": benchmark, "part": part, "run": run, "score": score, "n": 10}))
            paths.append(str(path))
    return paths


def run_table(tmp_path, results, columns, scale="embedded"):
    out = {k: tmp_path / f"table.{k}" for k in ("tsv", "md", "png")}
    make_eval_table.main(
        [
            "--result",
            *results,
            "--columns",
            ",".join(columns),
            "--scale",
            scale,
            "--out-tsv",
            str(out["tsv"]),
            "--out-md",
            str(out["md"]),
            "--out-png",
            str(out["png"]),
        ]
    )
    return {k: p.read_bytes() if k == "png" else p.read_text() for k, p in out.items()}


def test_card_values_transcribed():
    card = parse_card(CARD_TSV)
    assert card[("MMLU A / B (1000 each)", "stage1")] == [75.7, 74.8]
    assert card[("GSM8K A / B (300 each)", "soup24")] == [86.7, 89.3]
    assert card[("Instruction-following A / B", "soupF2")] == [76.0, 74.8]
    assert card[("Instruction-following C (753)", "soupF2")] == [73.4]
    assert card[("Instruction-following C (753)", "sftwF")] == [None]
    assert card[("Gen degen (lower better)", "sftw2")] == [0.106]
    assert card[("Battle holdout margin acc", "sftwF")] == [0.621]
    assert {label for label, _ in card} == {r.card_label for r in ROWS if r.card_label}
    assert set(CARD_COLUMNS.values()) == set(RUNS)


def test_card_tsv_lines_appear_verbatim_in_the_card():
    if not CARD_TEXT.is_file():
        pytest.skip(f"{CARD_TEXT} not available")
    card_lines = set(CARD_TEXT.read_text(encoding="utf-8").splitlines())
    for line in CARD_TSV.read_text(encoding="utf-8").splitlines():
        assert line in card_lines, line


def test_embedded_table_cells(tmp_path):
    out = run_table(tmp_path, write_results(tmp_path), RUNS)
    md = out["md"]
    assert "| MMLU A / B (n 10 / 10) | 75.7 / 74.7 | — / — | — / — | — / — | 75.7 / 74.7 |" in md
    assert "| Instruction-following C (n 10) | 71.5 |" in md
    assert "| Gen degen (lower better) (n 10) | 0.088 |" in md
    assert "| Battle holdout margin acc (n 10) | 0.345 |" in md
    assert "card" not in md.split("\n\n")[0]
    tsv = out["tsv"].splitlines()
    assert tsv[0].split("\t")[: len(RUNS) + 1] == ["metric", *RUNS]
    assert f"n:{RUNS[0]}" in tsv[0] and f"ci95:{RUNS[0]}" in tsv[0]
    assert tsv[1].split("\t")[:2] == ["MMLU A / B", "75.7 / 74.7"]
    assert out["png"][:8] == b"\x89PNG\r\n\x1a\n"


def test_full_scale_shows_card_and_difference(tmp_path):
    out = run_table(tmp_path, write_results(tmp_path), RUNS + ["soupT"], scale="full")
    md = out["md"]
    assert "75.7 / 74.7 (card 75.7 / 74.8; Δ +0.0 / -0.1)" in md
    assert "— / — (card 75.9 / 74.9)" in md  # sftw2 not evaluated: card value only
    assert "71.5 (card 73.4; Δ -1.9)" in md
    assert "0.088 (card 0.088; Δ +0.000)" in md
    header = out["tsv"].splitlines()[0].split("\t")
    assert "card:soupF2" in header and "diff:stage1" in header and "soupT" in header


def test_result_errors(tmp_path):
    results = write_results(tmp_path)
    with pytest.raises(DataError, match="run 'soupF2'"):
        run_table(tmp_path, results, ["stage1"])
    dup = tmp_path / "dup.json"
    dup.write_text(Path(results[0]).read_text())
    with pytest.raises(DataError, match="a second result"):
        run_table(tmp_path, [*results, str(dup)], RUNS)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"benchmark": "mmlu", "part": "C", "run": "stage1", "score": 0.5}))
    with pytest.raises(DataError, match="no row"):
        run_table(tmp_path, [*results, str(bad)], RUNS)


def write_records(directory: Path, run: str, benchmark: str, part: str | None, correct: list[bool]) -> str:
    """A result JSON and its per-item records (item ids shared across runs), as eval_model.py writes them."""
    path = directory / f"{run}_{benchmark}_{part}.json"
    records = [{"id": f"{benchmark}-{k}", "correct": ok} for k, ok in enumerate(correct)]
    path.write_text(
        json.dumps(
            {"benchmark": benchmark, "part": part, "run": run, "score": sum(correct) / len(correct), "n": len(correct)}
        )
    )
    path.with_name(path.name.removesuffix(".json") + ".records.jsonl").write_text(
        "\n".join(json.dumps(r) for r in records) + "\n"
    )
    return str(path)


def test_cells_carry_intervals_and_columns_are_tested_against_their_references(tmp_path):
    stage1_a = [True] * 8 + [False] * 8
    stage1_b = [True] * 4 + [False] * 12
    results = [
        write_records(tmp_path, "stage1", "mmlu", "A", stage1_a),
        write_records(tmp_path, "stage1", "mmlu", "B", stage1_b),
        write_records(tmp_path, "sftw2", "mmlu", "A", [True] * 9 + [False] * 7),  # one item more of 16
        write_records(tmp_path, "sftw2", "mmlu", "B", [True] * 16),
    ]  # twelve more
    out = {k: tmp_path / f"t.{k}" for k in ("tsv", "md", "png", "paired")}
    make_eval_table.main(
        [
            "--result",
            *results,
            "--columns",
            "stage1,sftw2",
            "--reference",
            "sftw2=stage1",
            "--out-tsv",
            str(out["tsv"]),
            "--out-md",
            str(out["md"]),
            "--out-png",
            str(out["png"]),
            "--out-paired",
            str(out["paired"]),
        ]
    )
    md = out["md"].read_text()
    assert "| MMLU A / B (n 16 / 16) | 50.0 [28.0, 72.0] / 25.0 [10.2, 49.5] |" in md  # Wilson intervals
    lines = {line.split(" | ")[2]: line for line in md.splitlines() if line.startswith("| sftw2 | stage1 |")}
    assert "+6.2" in lines["MMLU A"] and "mcnemar p 1 (exact)" in lines["MMLU A"] and "within noise" in lines["MMLU A"]
    assert "+75.0" in lines["MMLU B"] and "**differs**" in lines["MMLU B"]
    paired = [line.split("\t") for line in out["paired"].read_text().splitlines()]
    assert paired[0][:4] == ["column", "reference", "metric", "part"]
    assert {(row[3], row[-1]) for row in paired[1:]} == {("A", "true"), ("B", "false")}


def test_a_cell_whose_items_all_agree_plots_with_an_empty_interval(tmp_path):
    path = tmp_path / "soupF2_degen_A.json"
    path.write_text(json.dumps({"benchmark": "degen", "part": "A", "run": "soupF2", "score": 0.1, "n": 7}))
    (tmp_path / "soupF2_degen_A.records.jsonl").write_text(
        "\n".join(json.dumps({"id": f"d{k}", "seq_rep_4": 0.1}) for k in range(7)) + "\n"
    )
    out = run_table(tmp_path, [str(path)], ["soupF2"])  # bootstrap bounds a hair off 0.1 must not break the plot
    assert "| Gen degen (lower better) (n 7) | 0.100 [0.100, 0.100]† |" in out["md"]  # marked: no width
    assert out["png"][:8] == b"\x89PNG\r\n\x1a\n"


def test_an_interval_of_no_width_is_marked_and_explained():
    """A bootstrap over items that all have one value has no width; the cell says so rather than print it bare."""
    from lineage.evaluation import stats
    from lineage.evaluation.table import SAME_VALUES, with_interval

    means = next(row for row in ROWS if not row.percent)
    flat, spread = stats.estimate([0.911] * 16), stats.estimate([0.9, 0.92] * 8)
    assert with_interval(means, flat.value, flat).endswith(f"[{flat.low:.3f}, {flat.high:.3f}]{SAME_VALUES}")
    assert SAME_VALUES not in with_interval(means, spread.value, spread)
