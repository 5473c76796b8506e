"""Render the data audit as Markdown and as one self-contained HTML page (inline CSS, no scripts).

Both views show the same sections in the same order: stage counts against the card, the
own/opponent split, holdout leakage, conservation checks, citation cleaning, and every
quarantined or superseded row with its stage and reason.
"""

from __future__ import annotations

import html
from typing import Any

REASON_CHARS = 200


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _sections(audit: dict[str, Any]) -> list[tuple[str, str, list[str], list[list[str]]]]:
    """(title, lead sentence, header, rows) for each table of the report."""
    counts = [[c["label"], _fmt(c["ours"]), _fmt(c["card"]), c["match"], c.get("note", "")] for c in audit["counts"]]
    leak = audit["leakage"]
    checks = [[c["check"], "ok" if c["ok"] else "FAILED", c["detail"]] for c in audit["checks"]]
    stats = audit["citations"]
    cleaning = [[style, _fmt(n)] for style, n in stats.get("markers", {}).items()]
    cleaning += [
        ["answers cleaned (non-null)", _fmt(stats.get("answers"))],
        ["answers changed", _fmt(stats.get("answers_changed"))],
        ["sources sections dropped", _fmt(stats.get("sections_dropped"))],
        ["answers that were only citations (now empty)", _fmt(stats.get("citation_only_answers"))],
    ]
    quarantine = [
        [
            q.get("stage", ""),
            f"{q.get('file', '')}:{q.get('line', '')}",
            _fmt(q.get("battle_id")),
            _fmt(q.get("field")),
            str(q.get("reason", ""))[:REASON_CHARS],
        ]
        for q in audit["quarantine"]
    ]
    unused = audit["not_used_by_design"]
    tie_rows = audit["ours"].get("tie_rows", 0)
    unused_text = (
        f"Not preferences, so not in the winner data by design: {unused['tie']} tie and {unused['both_bad']} "
        "both_bad battles"
        + (f" (the tie answers are in {tie_rows:,} tie rows of the ties-included variant)." if tie_rows else ".")
    )
    by_stage = ", ".join(f"{stage} {n}" for stage, n in audit["quarantine_by_stage"].items()) or "none"
    aside = audit.get("set_aside") or {"rows": 0, "first": []}
    aside_rows = [
        [f"{q.get('file', '')}:{q.get('line', '')}", _fmt(q.get("battle_id")), str(q.get("reason", ""))[:REASON_CHARS]]
        for q in aside["first"]
    ]
    aside_text = (
        f"{aside['rows']:,} battles without our model on a side, kept apart by rule (not bad rows, "
        f"not in the quarantine share)" + (f"; the first {len(aside_rows)}:" if aside_rows else ".")
    )
    return [
        (
            "Counts per stage",
            "Ours beside the card's; an empty card cell means the card gives no number.",
            ["stage", "ours", "card", "match", "why they differ"],
            counts,
        ),
        ("Own / opponent split after deduplication", audit["split"]["note"], [], []),
        (f"Holdout leakage: {leak['status']}", leak["finding"], [], []),
        ("Conservation checks", "Nothing is dropped silently.", ["check", "result", "detail"], checks),
        (
            "Citation cleaning",
            "Removals per marker style over both answers of every battle.",
            ["style", "count"],
            cleaning,
        ),
        (
            "Quarantined and superseded rows",
            f"{len(quarantine)} rows by stage: {by_stage}. {unused_text}",
            ["stage", "file:line", "battle_id", "field", "reason"],
            quarantine,
        ),
        (
            "Set aside: not about our model",
            aside_text,
            ["file:line", "battle_id", "reason"] if aside_rows else [],
            aside_rows,
        ),
    ]


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(audit: dict[str, Any]) -> str:
    out = ["# Data audit", ""]
    for title, lead, header, rows in _sections(audit):
        out += [f"## {title}", "", lead, ""]
        if header:
            out.append("| " + " | ".join(header) + " |")
            out.append("|" + "|".join("---" for _ in header) + "|")
            out += ["| " + " | ".join(_md_cell(cell) for cell in row) + " |" for row in rows]
            out.append("")
    return "\n".join(out)


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 70rem; color: #222; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
table { border-collapse: collapse; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
.bad { color: #b00020; font-weight: bold; } .good { color: #1b7a1b; }
"""
_BAD = {"NO", "FAILED", "LEAK"}
_GOOD = {"yes", "ok", "clean"}


def _html_cell(text: str, tag: str = "td") -> str:
    css = ' class="bad"' if text in _BAD else ' class="good"' if text in _GOOD else ""
    return f"<{tag}{css}>{html.escape(text)}</{tag}>"


def render_html(audit: dict[str, Any]) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>Data audit</title>',
        f"<style>{_CSS}</style></head><body>",
        "<h1>Data audit</h1>",
    ]
    for title, lead, header, rows in _sections(audit):
        heading = html.escape(title).replace("LEAK", '<span class="bad">LEAK</span>')
        parts += [f"<h2>{heading}</h2>", f"<p>{html.escape(lead)}</p>"]
        if header:
            parts.append("<table><thead><tr>" + "".join(_html_cell(h, "th") for h in header) + "</tr></thead><tbody>")
            parts += ["<tr>" + "".join(_html_cell(cell) for cell in row) + "</tr>" for row in rows]
            parts.append("</tbody></table>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
