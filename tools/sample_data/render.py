"""Rendering answers from sections

A handwritten subject is a list of sections: ("p", title, text), ("ul"|"ol", title, items),
("code", title, lang, code, note), ("table", title, header, rows), ("block", title, text) or
("check", title, [(done, item), ...]). One subject renders into several answers that differ
in intro, section choice and markdown density, as two models' answers to one prompt do.
"""

import re

from sample_data.common import words

STYLES = ["heavy", "medium", "light", "plain"]
STYLE_WEIGHTS = [3, 3, 3, 1]


def lead_bold(item):
    """Bold a short 'Term: rest' lead; rich answers do this so readers can skim."""
    match = re.match(r"^([^:`*]{2,40}): (.+)$", item)
    if match and len(match.group(1).split()) <= 5:
        return f"**{match.group(1)}**: {match.group(2)}"
    return item


def render_list(kind, items, style):
    """Bullets or numbers in markdown styles, running prose in the plain style."""
    if style == "plain":
        return " ".join(items)
    rich = style in ("heavy", "medium")
    out = []
    for n, item in enumerate(items, 1):
        text = lead_bold(item) if rich else item
        out.append(f"{n}. {text}" if kind == "ol" else f"- {text}")
    return "\n".join(out)


def render_table(header, rows, style):
    """A markdown table where markdown is welcome, otherwise one line per row."""
    if style in ("heavy", "medium"):
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    lines = []
    for row in rows:
        rest = row[1] if len(row) == 2 else ", ".join(f"{h.lower()} {v}" for h, v in zip(header[1:], row[1:]))
        lines.append(f"{row[0]}: {rest}." if style == "plain" else f"- {row[0]}: {rest}")
    return (" " if style == "plain" else "\n").join(lines)


def render_section(sec, style, level=2, limit=None):
    """One section as markdown text in the given style; `limit` trims lists for short answers."""
    kind, title = sec[0], sec[1]
    out = []
    if title and style == "heavy":
        out.append("#" * level + " " + title)
    elif title and style == "medium":
        out.append(f"**{title}**")
    elif title and style == "light" and kind in ("code", "table", "check", "ul", "ol"):
        out.append(title if title[-1] in ":?" or ":" in title else f"{title}:")
    elif title and style == "plain" and kind in ("ul", "ol"):
        sec = (kind, None, [f"{title}{'.' if ':' in title else ':'} {sec[2][0]}"] + list(sec[2][1:]))
    if kind == "p":
        out.append(sec[2])
    elif kind in ("ul", "ol"):
        items = sec[2][:limit] if limit else sec[2]
        out.append(render_list(kind, items, style))
    elif kind == "code":
        _, _, lang, code, note = sec
        out.append(f"```{lang}\n{code.strip()}\n```")
        if note:
            out.append(note)
    elif kind == "table":
        rows = sec[3][:limit] if limit else sec[3]
        out.append(render_table(sec[2], rows, style))
    elif kind == "block":
        text = sec[2]
        out.append("\n".join("> " + line if line else ">" for line in text.split("\n")) if style == "heavy" else text)
    elif kind == "check":
        items = sec[2][:limit] if limit else sec[2]
        out.append("\n".join(f"- [{'x' if done else ' '}] {item}" for done, item in items))
    return "\n\n".join(out)


def render(intro, sections, outro, style, rng, limit=None):
    """A whole answer: intro paragraph, the sections, and an optional closing line."""
    level = rng.choice([2, 3]) if style == "heavy" else 2
    parts = [intro] if intro else []
    parts += [render_section(sec, style, level, limit) for sec in sections]
    if outro:
        parts.append(outro)
    return "\n\n".join(parts)


def pick_style(rng, avoid=None):
    """Markdown density drawn independently of answer quality, as the card found it to be."""
    while True:
        style = rng.choices(STYLES, STYLE_WEIGHTS)[0]
        if style != avoid:
            return style


def section_variants(inst, rng):
    """Four answers to one prompt: detailed (D), alternative (A), brief (B) and flawed (F).

    D and A are both good but differ in content; B is correct but short; F leads with a
    content error (the kind the card traced lost battles to) and is short.
    """
    secs = inst["sections"]
    style_d = pick_style(rng)
    intro_d = inst["intro"][0] + ("\n\n" + inst["intro"][1] if rng.random() < 0.5 else "")
    outro_d = "\n\n".join(o for o in inst["outro"] if o) if rng.random() < 0.6 else inst["outro"][0]
    d = render(intro_d, secs, outro_d, style_d, rng)
    keep = list(secs)
    if len(keep) > 2:
        keep.pop(rng.randrange(1, len(keep)))
    if len(keep) > 3 and rng.random() < 0.5:
        keep[1:] = rng.sample(keep[1:], len(keep) - 1)
    a = render(inst["intro"][1], keep, inst["outro"][1] if rng.random() < 0.6 else "", pick_style(rng, style_d), rng)
    b = render(inst["intro"][rng.randrange(2)], secs[:1], "", pick_style(rng), rng, limit=3)
    tail = rng.choice(["", "Hope that helps!", "Let me know if you need more detail.", "Good luck!"])
    closing = secs[-1] if secs[-1][0] in ("ul", "ol", "p") else secs[0]
    f_parts = [inst["wrong"]]
    if closing[0] != "p" or words(closing[2]) < 60:
        f_parts.append(render_section(closing, rng.choice(["light", "medium"]), limit=2))
    if tail:
        f_parts.append(tail)
    f = "\n\n".join(f_parts)
    return {"D": d, "A": a, "B": b, "F": f}
