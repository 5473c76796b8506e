"""Citation artefacts

Search-augmented answers carry markers and source lists in many styles. The clean stage must
strip them and must not touch look-alikes (code indexes, task boxes, prose about "sources"),
so the sample carries both. Numeric markers never follow a letter directly ("word[1]"), so
that they stay distinguishable from indexing.
"""

from sample_data.common import TEXT

SOURCES = TEXT["SOURCES"]
KEY_SOURCES = TEXT["KEY_SOURCES"]
CITE_STYLES = ["numeric", "footnote", "fullwidth", "sup", "links", "section"]
SAFE_STYLES = ["numeric", "fullwidth", "section"]
SECTION_FORMS = ["h2", "bold", "plain", "h3refs", "urls"]


def prose_lines(lines):
    """Indexes of prose lines that can take a marker: ending a sentence, outside code, headings and tables."""
    out, fenced = [], False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
            continue
        s = line.strip()
        if fenced or not s or s.startswith(("#", "|", ">", "- [", "**")) or not s.endswith("."):
            continue
        out.append(i)
    return out


def sources_block(form, srcs):
    """A trailing sources list in one of the five shapes seen in exports."""
    if form == "h2":
        return "## Sources\n" + "\n".join(f"- {t}: {u}" for t, u in srcs)
    if form == "bold":
        return "**Sources:**\n" + "\n".join(f"- [{t}]({u})" for t, u in srcs)
    if form == "plain":
        return "Sources:\n" + "\n".join(f"{i}. {t} ({u})" for i, (t, u) in enumerate(srcs, 1))
    if form == "h3refs":
        return "### References\n" + "\n".join(f"- {t}. {u}" for t, u in srcs)
    return "References:\n" + "\n".join(u for _, u in srcs)


def place(line, marker, where):
    """Attach a marker to a sentence-final line: before the period, after it, or after a space."""
    if where == "before":
        return line[:-1] + marker + "."
    if where == "space_before":
        return line[:-1] + " " + marker + "."
    return line + marker


def cite(text, inst, rng, style=None, safe=False, form=None):
    """Decorate an answer with citation artefacts; safe=True uses only marker placements that
    vanish cleanly (so two answers differing only in markers clean to the same text)."""
    style = style or rng.choice(SAFE_STYLES if safe else CITE_STYLES)
    bank = KEY_SOURCES.get(inst["key"], []) + SOURCES[inst["topic"]]
    srcs = bank[:1] + rng.sample(bank[1:], min(len(bank) - 1, rng.randint(1, 3)))
    k = len(srcs)
    lines = text.split("\n")
    spots = prose_lines(lines)
    chosen = sorted(rng.sample(spots, min(len(spots), rng.randint(1, 3))))
    tail = None
    for j, i in enumerate(chosen):
        where = "after" if safe else rng.choice(["before", "space_before", "after"])
        if style == "numeric":
            a = min(j + 1, k)
            marker = rng.choice(
                [
                    f"[{a}]",
                    f"[{a}][{min(a + 1, k)}]" if a < k else f"[{a}]",
                    f"[{a}, {k}]" if a < k else f"[{a}]",
                    f"[1-{k}]" if k >= 3 else f"[{a}]",
                ]
            )
            if where == "before":
                where = "space_before"
            lines[i] = place(lines[i], marker, where)
        elif style == "footnote":
            lines[i] = place(lines[i], f"[^{j + 1}]", "after" if where != "before" else "before")
        elif style == "fullwidth":
            marker = rng.choice(
                [
                    f"【{rng.randint(1, 14)}†source】",
                    f"【{rng.randint(3, 19)}:{rng.randint(0, 4)}†{rng.choice(['notes.pdf', 'guide.pdf', 'handout.pdf'])}】",
                ]
            )
            lines[i] = place(lines[i], marker, where)
        elif style == "sup":
            lines[i] = place(lines[i], f"<sup>{min(j + 1, k)}</sup>", "before" if where != "after" else "after")
        elif style == "links":
            t, u = srcs[j % k]
            lines[i] = lines[i][:-1] + rng.choice([f" ([{t}]({u})).", f". See [{t}]({u}) for details."])
    if style == "footnote":
        tail = "\n".join(f"[^{j + 1}]: {srcs[j % k][0]}, {srcs[j % k][1]}" for j in range(len(chosen)))
    elif style in ("numeric", "sup") or style == "section" or (style == "fullwidth" and rng.random() < 0.25):
        tail = sources_block("h2" if safe else (form or rng.choice(SECTION_FORMS)), srcs)
    out = "\n".join(lines)
    return out + "\n\n" + tail if tail else out
