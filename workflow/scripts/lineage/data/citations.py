"""Strip citation artefacts from answers, leaving the prose, the code and the lists intact.

Battle answers from search-augmented models carry markers that mean nothing without the
retrieval UI that produced them (`[1]`, `【3†source】`, `<sup>2</sup>`, footnotes) and
trailing "Sources" sections. Trained on verbatim, the model would learn to invent them. The
card's winner-SFT data had them stripped; this module does that, conservatively:

* removed: numeric markers `[1]`, `[2][3]`, `[1, 2]`, `[1-3]`, `[1–3]`; footnote references
  `[^1]` and footnote definition lines `[^1]: ...`; `【3†source】`, `【12:0†notes.pdf】`;
  `<sup>2</sup>`, `<sup>[2]</sup>`; links whose text is only a number (`[1](https://...)`);
  numeric reference definitions `[1]: https://...`; bare-URL lines at the end; a trailing
  section whose label line is Sources / References / Citations / Further reading (as a
  heading, bold or plain label) and which holds only list items, URLs and blank lines.
* removed too: "(Source: ...)" notes, "[source]" / "[citation needed]" tags, numbered source
  references in brackets or parentheses ("[Source 2]", "(Refs 1-3)", "[citation #7]"), and superscript
  numerals after a word or punctuation ("the study¹"), but not powers or units ("x²", "cm²").
* rewritten: markdown links `[text](https://...)` and defined reference links `[text][1]` → `text`.
* never touched: fenced code blocks, inline code (`arr[1]`), task-list boxes `[x]`/`[ ]`,
  index-like brackets in prose (`matrix[0][2]`, `x[1].y`), prose that merely uses the words
  ("good sources of protein"), and a sources section that is the whole answer.

Spacing is repaired only where something was removed ("text [1]." → "text."), so intended
double spaces elsewhere survive. An answer that would end up empty is returned unchanged.
"""

from __future__ import annotations

import re
from collections import Counter

from lineage.data.battles import apply_answer_policy
from lineage.data.quarantine import entry
from lineage.data.screen import screen_preference
from lineage.io import LineError

STYLES = (
    "numeric",
    "numeric_link",
    "footnote_ref",
    "footnote_def",
    "fullwidth",
    "sup",
    "markdown_link",
    "reference_link",
    "reference_def",
    "bare_url_line",
    "sources_section",
    "source_note",
    "source_tag",
    "superscript",
)

_MARK = "\x00"
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")

_NUM_GROUP = r"\[\s*\d{1,3}(?:\s*[,;–—-]\s*\d{1,3})*\s*\]"
_NUMERIC_RUN = re.compile(rf"{_NUM_GROUP}(?:\s?{_NUM_GROUP})*")
_URL = r"(?:https?://|www\.)(?:[^\s()<>]|\([^\s()<>]*\))+"
_LINK_TEXT = r"(?:[^\[\]\n]|\[[^\[\]\n]*\])+"
_LINK = re.compile(rf"(?<!!)\[({_LINK_TEXT})\]\(\s*<?({_URL})>?(?:\s+\"[^\"\n]*\")?\s*\)")
_NUMERIC_TEXT = re.compile(r"^\s*(?:\^?\s*\d{1,3}(?:\s*[,;–—-]\s*\d{1,3})*|\[\s*\^?\d{1,3}\s*\])\s*$")
_REF_LINK = re.compile(r"\[([^\[\]\n]+)\]\[(\d{1,3})\]")
_FULLWIDTH = re.compile(r"【(?:\d{1,4}(?::\d{1,4})?(?:†[^】\n]{0,200})?|[^】\n]{0,200}†[^】\n]{0,200})】")
_SUP = re.compile(r"<sup>\s*(?:\[\s*)?\^?\d{1,3}(?:\s*[,;–—-]\s*\d{1,3})*(?:\s*\])?\s*</sup>", re.I)
_EMPTY_SUP = re.compile(r"<sup>\s*</sup>", re.I)
_FOOTNOTE_REF = re.compile(r"\[\^[^\]\s]{1,40}\](?!:)")
# "(Source: ...)", "(Sources: a, b)", "(via ...)" in parentheses, up to 200 characters
_SOURCE_NOTE = re.compile(r"\(\s*(?:sources?|via|cited\s+from|retrieved\s+from)\s*:[^()\n]{1,200}\)", re.I)
# One grammar of source references in brackets or parentheses: a source word, then optionally a
# number, a range or a list of them: "[source]", "[citation needed]", "[Source 2]", "[Sources 1, 3]",
# "[ref. 4]", "(Source 2)", "(Refs 1-3)", "[source: 5]", "[citation #7]". Without a number only the
# bracketed form counts ("(see sources)" and "(source code)" are prose); a bare "(1, 2)" is not one.
_REF_WORD = r"(?:sources?|refs?\.?|references?|citations?|cite)"
_REF_NUMBERS = r"#?\d{1,3}(?:\s*(?:[,;–—-]|and|&)\s*#?\d{1,3})*"
_SOURCE_TAG = re.compile(
    rf"\[\s*(?:{_REF_WORD}|citation\s+needed)(?:\s*:?\s*{_REF_NUMBERS})?\s*\]"
    rf"|\(\s*{_REF_WORD}\s*:?\s*{_REF_NUMBERS}\s*\)",
    re.I,
)
# superscript numerals after a word of 3+ letters or punctuation ("the study¹", "growth.²³"), not powers ("mc²")
_SUPERSCRIPT = re.compile(r"(?:(?<=[A-Za-z]{3})|(?<=[.,;:!?)\]\"'’”]))[⁰¹²³⁴⁵⁶⁷⁸⁹]+(?:[,⁻][⁰¹²³⁴⁵⁶⁷⁸⁹]+)*")
_UNITS = frozenset({"cm", "mm", "km", "ft", "in", "mi", "yd", "nm", "um", "μm", "dm", "sec", "ms", "kg", "mol"})

_FOOTNOTE_DEF = re.compile(r"^ {0,3}\[\^[^\]]{1,40}\]:")
_REFERENCE_DEF = re.compile(rf"^ {{0,3}}\[\d{{1,3}}\]:\s*<?{_URL}")
_LABEL_WORDS = r"(?:sources?|references?|citations?|further\s+reading|bibliography|works\s+cited)"
_EMPH = r"(?:[*_]{1,3})?"
_LABEL = re.compile(rf"^ {{0,3}}(?:#{{1,6}}\s+)?{_EMPH}\s*{_LABEL_WORDS}\s*{_EMPH}\s*:?\s*{_EMPH}\s*$", re.I)
_LABEL_INLINE = re.compile(rf"^ {{0,3}}{_EMPH}\s*{_LABEL_WORDS}\s*{_EMPH}\s*:\s*{_EMPH}\s*(?P<rest>\S.*)$", re.I)
_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)]|\[\d{1,3}\]|\[\^[^\]]{1,40}\]:|【[^】]{0,200}】)\s+\S")
_URL_LINE = re.compile(rf"^\s*(?:(?:[-*+•]|\d{{1,3}}[.)]|\[\d{{1,3}}\]:?)\s+)?<?{_URL}>?\s*$")
_LINK_LINE = re.compile(rf"^\s*(?:(?:[-*+•]|\d{{1,3}}[.)])\s+)?\[[^\]\n]+\]\(\s*<?{_URL}>?\s*\)\s*$")
_CONTINUATION = re.compile(r"^(?: {2,}|\t)\S")
_RULE = re.compile(r"^ {0,3}(?:-{3,}|\*{3,}|_{3,})\s*$")


def code_mask(lines: list[str]) -> list[bool]:
    """True for lines inside (or fencing) a fenced code block; an unclosed fence runs to the end."""
    mask, fence = [], None
    for line in lines:
        if fence is None:
            match = _FENCE_OPEN.match(line)
            if match:
                fence = match.group(1)
                mask.append(True)
                continue
            mask.append(False)
        else:
            mask.append(True)
            stripped = line.strip()
            if stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                fence = None
    return mask


def _is_section_body(line: str) -> bool:
    return (
        not line.strip()
        or bool(_ITEM.match(line) or _URL_LINE.match(line) or _LINK_LINE.match(line))
        or bool(_CONTINUATION.match(line))
        or bool(_FOOTNOTE_DEF.match(line) or _REFERENCE_DEF.match(line))
    )


def _is_label(line: str) -> bool:
    if _LABEL.match(line):
        return True
    match = _LABEL_INLINE.match(line)
    if not match:
        return False
    rest = _LINK.sub("", match.group("rest"))
    rest = re.sub(_URL, "", rest)
    rest = _NUMERIC_RUN.sub("", rest)
    rest = _FULLWIDTH.sub("", rest)
    return not re.sub(r"[\s,;|*_]|\band\b", "", rest)


def _drop_trailing_blank(lines: list[str], mask: list[bool]) -> None:
    while lines and not mask[-1] and (not lines[-1].strip() or _RULE.match(lines[-1])):
        lines.pop()
        mask.pop()


def _drop_sources_section(lines: list[str], mask: list[bool], counts: Counter) -> bool:
    """Remove a trailing sources section (label + list/URL body); never the whole answer."""
    index = len(lines) - 1
    while index >= 0 and not mask[index] and _is_section_body(lines[index]):
        index -= 1
    if index < 0 or mask[index] or not _is_label(lines[index]):
        return False
    if not any(line.strip() and not _is_label(line) for line in lines[:index]):
        return False
    del lines[index:], mask[index:]
    _drop_trailing_blank(lines, mask)
    counts["sources_section"] += 1
    return True


def _drop_trailing_urls(lines: list[str], mask: list[bool], counts: Counter) -> bool:
    """Remove URL-only lines (bare, bulleted or numbered) from the end, one at a time."""
    changed = False
    while True:
        last = len(lines) - 1
        while last >= 0 and not mask[last] and not lines[last].strip():
            last -= 1
        if last < 0 or mask[last] or not _URL_LINE.match(lines[last]):
            return changed
        if not any(line.strip() and not _is_label(line) for line in lines[:last]):
            return changed
        del lines[last:], mask[last:]
        _drop_trailing_blank(lines, mask)
        counts["bare_url_line"] += 1
        changed = True


def _defined_labels(lines: list[str], mask: list[bool]) -> set[str]:
    """Numeric labels that have a reference definition (`[1]: https://...`), so `[text][1]` is a link."""
    return {
        re.match(r"^ {0,3}\[(\d{1,3})\]", line).group(1)
        for line, is_code in zip(lines, mask, strict=True)
        if not is_code and _REFERENCE_DEF.match(line)
    }


def _drop_definition_lines(lines: list[str], mask: list[bool], counts: Counter) -> None:
    """Remove footnote and numeric reference definitions wherever they are (outside code)."""
    keep_lines, keep_mask = [], []
    for line, is_code in zip(lines, mask, strict=True):
        if not is_code and _FOOTNOTE_DEF.match(line):
            counts["footnote_def"] += 1
            continue
        if not is_code and _REFERENCE_DEF.match(line):
            counts["reference_def"] += 1
            continue
        keep_lines.append(line)
        keep_mask.append(is_code)
    lines[:], mask[:] = keep_lines, keep_mask


def _numeric_marker(match: re.Match) -> bool:
    """A bracketed-number run is a citation unless it looks like indexing (`m[0][2]`, `x[1].y`, `a[1]=`)."""
    text = match.group(0)
    if re.search(r"\[\s*0", text):
        return False
    before = match.string[match.start() - 1] if match.start() else " "
    after = match.string[match.end() :]
    if (before.isalnum() or before in "_)]") and re.match(r"(?:[\w(\[]|\.\w|\s*=)", after):
        return False
    return True


def _clean_prose(text: str, counts: Counter, defined: set[str]) -> str:
    """Replace every marker in a stretch of prose (no code) with the placeholder mark."""

    def count(style: str, replacement: str):
        def repl(match: re.Match) -> str:
            counts[style] += 1
            return replacement if replacement != "\\1" else match.group(1)

        return repl

    text = _FULLWIDTH.sub(count("fullwidth", _MARK), text)

    def link(match: re.Match) -> str:
        if _NUMERIC_TEXT.match(match.group(1)):
            counts["numeric_link"] += 1
            return _MARK
        counts["markdown_link"] += 1
        return match.group(1)

    text = _LINK.sub(link, text)

    def ref_link(match: re.Match) -> str:
        label = match.group(1).strip()
        if match.group(2) in defined and not _NUMERIC_TEXT.match(label) and label not in {"", "x", "X"}:
            counts["reference_link"] += 1
            return match.group(1)
        return match.group(0)

    text = _REF_LINK.sub(ref_link, text)
    text = _SUP.sub(count("sup", _MARK), text)
    text = _SOURCE_NOTE.sub(count("source_note", _MARK), text)
    text = _SOURCE_TAG.sub(count("source_tag", _MARK), text)

    def superscript(match: re.Match) -> str:
        word = re.search(r"(\w+)$", match.string[: match.start()])
        if word and word.group(1).lower() in _UNITS:  # cm², km³: units, not citations
            return match.group(0)
        counts["superscript"] += 1
        return _MARK

    text = _SUPERSCRIPT.sub(superscript, text)
    text = _EMPTY_SUP.sub(_MARK, text)
    text = _FOOTNOTE_REF.sub(count("footnote_ref", _MARK), text)

    def numeric(match: re.Match) -> str:
        if not _numeric_marker(match):
            return match.group(0)
        counts["numeric"] += 1
        return _MARK

    return _NUMERIC_RUN.sub(numeric, text)


def _fix_spacing(line: str) -> str:
    """Close the gaps the placeholder marks left: no space before punctuation, no double spaces."""
    line = re.sub(rf"{_MARK}(?: *{_MARK})+", _MARK, line)
    line = re.sub(rf"\(\s*{_MARK}\s*\)", _MARK, line)

    def repl(match: re.Match) -> str:
        before, after = match.string[: match.start()], match.string[match.end() :]
        if not before.strip():
            return match.group(1)  # keep the line's indentation
        if not after or after[0] in ".,;:!?)]}…":
            return ""
        if match.group(1) or match.group(2):
            return " "
        return " " if before[-1].isalnum() and after[0].isalnum() else ""

    return re.sub(rf"( *){_MARK}( *)", repl, line)


def _clean_line(line: str, counts: Counter, defined: set[str]) -> str:
    parts, pos = [], 0
    for match in _CODE_SPAN.finditer(line):
        parts.append(_clean_prose(line[pos : match.start()], counts, defined))
        parts.append(match.group(0))
        pos = match.end()
    parts.append(_clean_prose(line[pos:], counts, defined))
    joined = "".join(parts)
    return _fix_spacing(joined) if _MARK in joined else joined


def clean_answer(text: str) -> tuple[str, Counter]:
    """Return (cleaned text, count of removals per style). Text without artefacts comes back unchanged.

    Removed markers are first replaced by U+0000 (spacing is fixed around them afterwards); the
    read stage refuses every control character, so that placeholder cannot be text."""
    if _MARK in text:
        raise ValueError(
            "the text holds U+0000, the cleaner's placeholder: refuse control characters first "
            "(lineage.io.control_character)"
        )
    counts: Counter = Counter()
    lines = text.split("\n")
    mask = code_mask(lines)
    original_lines = len(lines)
    defined = _defined_labels(lines, mask)
    while _drop_sources_section(lines, mask, counts) or _drop_trailing_urls(lines, mask, counts):
        pass
    _drop_definition_lines(lines, mask, counts)
    while _drop_sources_section(lines, mask, counts) or _drop_trailing_urls(lines, mask, counts):
        pass
    cleaned = [
        line if is_code else _clean_line(line, counts, defined) for line, is_code in zip(lines, mask, strict=True)
    ]
    if not counts:
        return text, counts
    result = "\n".join(cleaned)
    if len(cleaned) != original_lines:
        result = result.rstrip()
    if not result.strip():
        return text, Counter({"kept_would_be_empty": 1})
    return result, counts


def clean_battles(rows: list[dict], file: str = "") -> tuple[list[dict], dict, list[dict]]:
    """Clean both answers of every battle; return (new rows, stats for the audit, quarantine entries).

    An answer that is only citation artefacts has nothing left to train on: it counts as empty,
    and the vote policy of lineage.data.battles decides (a preferred or tie answer: the battle is
    quarantined; a losing one: null). The cleaned answers then pass the preference screen again
    (lineage.data.screen): two answers that differ only by their citations state no preference.
    Cleaning changes answers only, and only removes text; the other screens ran on the raw row.
    """

    totals: Counter = Counter()
    stats = {"battles": 0, "answers": 0, "answers_null": 0, "answers_changed": 0}
    out, quarantine = [], []
    for line, row in enumerate(rows, start=1):
        stats["battles"] += 1
        new = dict(row)
        for side in ("own", "other"):
            answer = row[side]["answer"]
            if answer is None:
                stats["answers_null"] += 1
                continue
            stats["answers"] += 1
            cleaned, counts = clean_answer(answer)
            totals.update(counts)
            if counts.get("kept_would_be_empty"):
                cleaned = None
            if cleaned != answer:
                stats["answers_changed"] += 1
            new[side] = {**row[side], "answer": cleaned}
        try:
            apply_answer_policy(new, new["vote"], why="is only citation markers")
            screen_preference(new)  # what trains is the cleaned text: screened again
        except LineError as err:
            reason = err.reason if "citation" in err.reason else f"after citation cleaning: {err.reason}"
            quarantine.append(entry("clean_battles", file, line, reason, battle_id=row["battle_id"], field=err.field))
            continue
        out.append(new)
    stats["markers"] = {style: totals.get(style, 0) for style in STYLES}
    stats["sections_dropped"] = totals.get("sources_section", 0)
    stats["citation_only_answers"] = totals.get("kept_would_be_empty", 0)
    stats["battles_quarantined"] = len(quarantine)
    return out, stats, quarantine
