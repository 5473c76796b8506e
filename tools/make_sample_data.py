"""Write the sample data that the embedded scale ships in resources/sample.

The embedded scale runs the whole lineage on two CPU cores, so it needs small stand-ins for
the private battle export, the public general SFT mixture and the benchmarks. Every text here
comes from the templates in this file and the word banks of tools/sample_data/text_banks.json,
drawn with a fixed seed: a rerun gives byte-identical files, and nothing is downloaded or copied
from a public dataset.

The battle export is laid out to the card's counts under the dedup policy of the clean stage
(236 battles = 106 / 72 / 34 / 24 by vote, 140 preferred answers, 29 holdout prompts, 135
recovered pairs), so the data stages can be checked against the card at this scale too.

Files written under --out:
    battles.jsonl            236 battles in the native export format
    battles_arena.jsonl      24 battles in the public Chatbot Arena export format
    general_mix.jsonl        ~3,000 short chat rows standing in for the Stage-1 SFT mixture
    eval/mmlu.jsonl          240 four-choice questions over ten subjects
    eval/gsm8k.jsonl         160 grade-school word problems ("#### N" final line)
    eval/ifeval.jsonl        240 instruction-following prompts in the IFEval format
    eval/gen_prompts.jsonl   120 open-ended generation prompts

Run as:
python tools/make_sample_data.py --out resources/sample
python tools/make_sample_data.py --out /tmp/sample --seed 7   # another draw, same counts
"""

import argparse
import json
import random
import re
from collections import Counter
from datetime import datetime, timedelta, timezone
from fractions import Fraction
from pathlib import Path

# The word banks: subjects, answers, names, sources, facts (plain data, kept apart from the code).
TEXT = json.loads((Path(__file__).with_name("sample_data") / "text_banks.json").read_text(encoding="utf-8"))
OWN_MODEL = "ember-stage1"
OPPONENTS = TEXT["OPPONENTS"]


# -----------------------------------------------------------------------------
# Small utilities


def rng_for(seed, part):
    """One generator per output file, so changing one file's templates never reshuffles another."""
    return random.Random(f"{seed}:{part}")


def norm(text):
    """Lowercase and collapse whitespace: the key under which eval items must not meet training rows."""
    return " ".join(text.lower().split())


def words(text):
    """Whitespace word count, the length measure the card's '~94 words longer' uses."""
    return len(text.split())


def fill(text, params):
    """Substitute {{key}} placeholders; double braces leave code's own braces alone."""
    for key, value in params.items():
        text = text.replace("{{" + key + "}}", str(value))
    return text


def fill_any(obj, params):
    """fill() through nested lists and tuples, so a whole subject can be specialised at once."""
    if isinstance(obj, str):
        return fill(obj, params)
    if isinstance(obj, (list, tuple)):
        return type(obj)(fill_any(item, params) for item in obj)
    return obj


def money(x):
    """Dollar amounts as people write them: $12 or $12.50, with thousands separators."""
    x = round(x + 1e-9, 2)
    return f"${x:,.0f}" if x == int(x) else f"${x:,.2f}"


def num(x):
    """A number without a trailing .0, with thousands separators for readability."""
    if isinstance(x, Fraction):
        x = float(x)
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    return f"{x:,}" if isinstance(x, int) else f"{x:,.2f}".rstrip("0").rstrip(".")


def write_jsonl(path, rows):
    """UTF-8 JSONL with '\\n' endings and insertion-ordered keys: byte-stable across reruns."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


# -----------------------------------------------------------------------------
# Rendering answers from sections
#
# A handwritten subject is a list of sections: ("p", title, text), ("ul"|"ol", title, items),
# ("code", title, lang, code, note), ("table", title, header, rows), ("block", title, text) or
# ("check", title, [(done, item), ...]). One subject renders into several answers that differ
# in intro, section choice and markdown density, as two models' answers to one prompt do.

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


# -----------------------------------------------------------------------------
# Handwritten battle subjects
#
# Each subject: topic, prompts (phrasings with {{placeholders}}), params (one dict is drawn per
# prompt), intro (two openings), sections, outro (two closings) and wrong (the flawed answer's
# claim). A subject gives one prompt per phrasing, so similar questions get similar answers,
# as they do in a real arena.

SUBJECTS = TEXT["SUBJECTS"]




# -----------------------------------------------------------------------------
# Worked math answers
#
# A math template returns the prompt, the solution steps, the answer and a check, plus the
# steps and answer of a plausible mistake. math_variants() renders the four answer kinds.

NAMES = ["Maya", "Leo", "Priya", "Daniel", "Sofia", "Omar", "Hannah", "Kenji", "Grace", "Mateo", "Aisha", "Tom",
         "Elena", "Samuel", "Nadia", "Lucas", "Zoe", "Ibrahim", "Chloe", "Ravi"]


def hours_text(h):
    """2.5 -> '2 hours 30 minutes', the way a person states a duration."""
    whole, minutes = int(h), round((h - int(h)) * 60)
    parts = [f"{whole} hour{'s' if whole != 1 else ''}"] if whole else []
    if minutes:
        parts.append(f"{minutes} minutes")
    return " ".join(parts)


def clock(start_minutes, add_hours):
    """Clock time after a duration, e.g. 9:00 plus 2.5 h -> '11:30 a.m.'."""
    total = int(start_minutes + round(add_hours * 60)) % (24 * 60)
    h, m = divmod(total, 60)
    suffix = "a.m." if h < 12 else "p.m."
    return f"{(h - 1) % 12 + 1}:{m:02d} {suffix}"


def m_discount(rng):
    """Discount then tax: the classic mistake nets the two percentages."""
    item = rng.choice(["jacket", "pair of running shoes", "blender", "desk chair", "backpack", "coffee machine"])
    price = rng.choice([40, 60, 75, 80, 120, 150, 180, 240, 320])
    disc = rng.choice([10, 15, 20, 25, 30, 40])
    tax = rng.choice([5, 6, 7, 8, 10])
    d_amt, sale = price * disc / 100, price * (100 - disc) / 100
    t_amt, final = sale * tax / 100, sale * (100 + tax) / 100
    wrong = price * (100 - disc + tax) / 100
    return {
        "prompt": f"A {item} costs {money(price)}. It's on sale for {disc}% off, and then {tax}% sales tax is added. What's the final price?",
        "steps": [
            ("Apply the discount", f"{disc}% of {money(price)} is {money(d_amt)}, so the sale price is {money(price)} − {money(d_amt)} = {money(sale)}."),
            ("Add the sales tax", f"Tax is charged on the sale price: {tax}% of {money(sale)} is {money(t_amt)}, so the total is {money(sale)} + {money(t_amt)} = {money(final)}."),
        ],
        "answer": f"The final price is **{money(final)}**.",
        "check": f"In one line: {money(price)} × {1 - disc / 100:.2f} × {1 + tax / 100:.2f} = {money(final)}. Taxing first and discounting second gives the same result.",
        "wrong": [f"The discount is {disc}% and the tax is {tax}%, so overall the price drops by {disc - tax}%.",
                  f"{disc - tax}% of {money(price)} is {money(price * (disc - tax) / 100)}, which leaves {money(wrong)}."],
        "wrong_answer": f"The final price is {money(wrong)}.",
        "why": "the tax is charged on the discounted price, so the two percentages can't simply be netted against each other.",
    }


def m_trains(rng):
    """Two trains approaching: speeds add; the mistake subtracts them."""
    a, b = rng.choice([(60, 90), (70, 80), (50, 100), (80, 120), (45, 75), (90, 110)])
    t = rng.choice([1.5, 2, 2.5, 3])
    dist = int((a + b) * t)
    start = rng.choice([(8 * 60, "8:00 a.m."), (9 * 60, "9:00 a.m."), (13 * 60 + 15, "1:15 p.m.")])
    wrong_t = dist / (b - a)
    return {
        "prompt": f"Two trains leave stations {dist} km apart at {start[1]}, heading toward each other. One travels at {a} km/h and the other at {b} km/h. When and where do they meet?",
        "steps": [
            ("Combine the speeds", f"Moving toward each other, they close the gap at {a} + {b} = {a + b} km/h."),
            ("Find the time", f"{dist} km ÷ {a + b} km/h = {num(t)} hours" + (f", which is {hours_text(t)}." if t != int(t) else ".")),
            ("Clock time and position", f"Starting at {start[1]}, they meet at {clock(start[0], t)}; by then the slower train has covered {a} × {num(t)} = {num(a * t)} km."),
        ],
        "answer": f"They meet at **{clock(start[0], t)}**, **{num(a * t)} km** from the slower train's station.",
        "check": f"The faster train covers {b} × {num(t)} = {num(b * t)} km, and {num(a * t)} + {num(b * t)} = {dist} km.",
        "wrong": [f"The trains' relative speed is {b} − {a} = {b - a} km/h.",
                  f"So they meet after {dist} ÷ {b - a} = {num(round(wrong_t, 2))} hours."],
        "wrong_answer": f"They meet after about {num(round(wrong_t, 1))} hours.",
        "why": 'trains moving toward each other close the gap at the sum of their speeds, not the difference.',
    }


def m_painters(rng):
    """Work rates add; the mistake averages the times."""
    a, b = rng.choice([(3, 6), (4, 12), (6, 12), (10, 15), (2, 6), (12, 24), (6, 30), (20, 30)])
    r = a * b / (a + b)
    p, q = rng.sample(NAMES, 2)
    job = rng.choice(["paint a fence", "weed the community garden", "sort the library's donations", "wash all the windows of the house"])
    return {
        "prompt": f"{p} can {job} in {a} hours. {q} can do the same job in {b} hours. How long will it take if they work together?",
        "steps": [
            ("Rates per hour", f"{p} does 1/{a} of the job per hour and {q} does 1/{b} of it per hour."),
            ("Add the rates", f"Together: 1/{a} + 1/{b} = {Fraction(1, a) + Fraction(1, b)} of the job per hour."),
            ("Invert", f"The time is 1 ÷ {Fraction(1, a) + Fraction(1, b)} = {num(r)} hours" + (f", or {hours_text(r)}." if r != int(r) else ".")),
        ],
        "answer": f"Working together, they finish in **{hours_text(r)}**.",
        "check": f"In {num(r)} hours, {p} does {Fraction(a * b, a + b) / a} of the job and {q} does {Fraction(a * b, a + b) / b}, which together make the whole job.",
        "wrong": [f"On average, one person takes ({a} + {b}) ÷ 2 = {num((a + b) / 2)} hours.",
                  f"Two people working together halve that: {num((a + b) / 4)} hours."],
        "wrong_answer": f"It takes {num((a + b) / 4)} hours.",
        "why": "times don't add or average; rates (jobs per hour) do.",
    }


def m_final_grade(rng):
    """Weighted average: the mistake weights the final like every other test."""
    while True:
        s = [rng.randint(62, 95) for _ in range(3)]
        goal = rng.choice([75, 80, 85, 90])
        need = (goal - 0.2 * sum(s)) / 0.4
        wrong = 4 * goal - sum(s)
        if need == int(need) and 55 <= need <= 100 and wrong != need:
            break
    need = int(need)
    return {
        "prompt": f"My three test scores are {s[0]}, {s[1]} and {s[2]}. Each test is worth 20% of the grade and the final exam is worth 40%. What do I need on the final to get a {goal} overall?",
        "steps": [
            ("Points from the tests", f"0.2 × ({s[0]} + {s[1]} + {s[2]}) = 0.2 × {sum(s)} = {num(0.2 * sum(s))}."),
            ("Set up the equation", f"{num(0.2 * sum(s))} + 0.4 × F = {goal}, where F is the final-exam score."),
            ("Solve", f"0.4 × F = {goal} − {num(0.2 * sum(s))} = {num(goal - 0.2 * sum(s))}, so F = {num(goal - 0.2 * sum(s))} ÷ 0.4 = {need}."),
        ],
        "answer": f"You need **{need}** on the final.",
        "check": f"0.2 × {sum(s)} + 0.4 × {need} = {num(0.2 * sum(s))} + {num(0.4 * need)} = {goal}.",
        "wrong": [f"For an average of {goal} over four scores you need a total of 4 × {goal} = {4 * goal}.",
                  f"You have {sum(s)} so far, so the final must be {4 * goal} − {sum(s)} = {wrong}."],
        "wrong_answer": f"You need {wrong} on the final.",
        "why": 'the final counts twice as much as each test, so the scores have to be weighted.',
    }


def m_growth(rng):
    """Percent change: the mistake divides by the new value."""
    base = rng.choice([8000, 12000, 15000, 20000, 25000, 40000])
    p = rng.choice([4, 5, 6, 8, 10, 12])
    new = base * (100 + p) // 100
    nxt = round(new * (100 + p) / 100)
    wrong_p = round((new - base) / new * 100, 1)
    town = rng.choice(["A town", "A small city", "A suburb", "A coastal town"])
    return {
        "prompt": f"{town}'s population grew from {num(base)} to {num(new)} in one year. What was the percentage increase, and what will the population be next year if it grows at the same rate?",
        "steps": [
            ("Increase", f"{num(new)} − {num(base)} = {num(new - base)} people."),
            ("Percentage", f"Divide by the starting value: {num(new - base)} ÷ {num(base)} = {p / 100:.2f}, which is {p}%."),
            ("Next year", f"{num(new)} × {1 + p / 100:.2f} = {num(nxt)}."),
        ],
        "answer": f"The population grew by **{p}%**, and at that rate it will be about **{num(nxt)}** next year.",
        "check": f"{num(base)} × {1 + p / 100:.2f} = {num(new)}, which matches the figure given.",
        "wrong": [f"The increase is {num(new - base)} people.",
                  f"As a percentage of the population: {num(new - base)} ÷ {num(new)} ≈ {wrong_p}%."],
        "wrong_answer": f"The growth rate was about {wrong_p}%.",
        "why": 'a percentage change is always measured against the starting value.',
    }


def m_ratio(rng):
    """Sharing in a ratio: the mistake splits evenly first."""
    ratio = rng.choice([(2, 3, 5), (1, 2, 3), (3, 4, 5), (1, 3, 4), (2, 5, 3)])
    parts = sum(ratio)
    total = parts * rng.choice([30, 45, 60, 75, 120, 150])
    people = rng.sample(NAMES, 3)
    unit = total // parts
    shares = [unit * r for r in ratio]
    wrong = [round(total / 3 * r / ratio[0], 2) for r in ratio]
    return {
        "prompt": f"{people[0]}, {people[1]} and {people[2]} split {money(total)} in the ratio {ratio[0]}:{ratio[1]}:{ratio[2]}. How much does each person get?",
        "steps": [
            ("Count the parts", f"{ratio[0]} + {ratio[1]} + {ratio[2]} = {parts} parts."),
            ("Value of one part", f"{money(total)} ÷ {parts} = {money(unit)}."),
            ("Each share", ", ".join(f"{n}: {r} × {money(unit)} = {money(v)}" for n, r, v in zip(people, ratio, shares)) + "."),
        ],
        "answer": f"{people[0]} gets **{money(shares[0])}**, {people[1]} gets **{money(shares[1])}** and {people[2]} gets **{money(shares[2])}**.",
        "check": f"{money(shares[0])} + {money(shares[1])} + {money(shares[2])} = {money(total)}.",
        "wrong": [f"Split evenly first: {money(total)} ÷ 3 = {money(total / 3)} each.",
                  f"Then scale by the ratio relative to {people[0]}: " + ", ".join(f"{n} {money(v)}" for n, v in zip(people, wrong)) + "."],
        "wrong_answer": f"So the shares are {', '.join(money(v) for v in wrong)}.",
        "why": 'a ratio splits the whole into equal parts; scaling an even split overshoots the total.',
    }


def m_path(rng):
    """Area of a border path: the mistake adds the width only once."""
    length, width = rng.choice([(12, 8), (10, 6), (15, 9), (20, 12), (14, 10)])
    w = rng.choice([1, 1.5, 2])
    cost = rng.choice([18, 25, 32, 40])
    outer = (length + 2 * w) * (width + 2 * w)
    path = outer - length * width
    wrong = (length + w) * (width + w) - length * width
    return {
        "prompt": f"A rectangular garden is {length} m by {width} m. A gravel path {num(w)} m wide is laid all around the outside. What is the area of the path, and what does the gravel cost at {money(cost)} per square metre?",
        "steps": [
            ("Outer rectangle", f"The path adds {num(w)} m on both sides, so the outer size is {num(length + 2 * w)} m by {num(width + 2 * w)} m, an area of {num(outer)} m²."),
            ("Subtract the garden", f"{num(outer)} − {length} × {width} = {num(outer)} − {length * width} = {num(path)} m²."),
            ("Cost", f"{num(path)} m² × {money(cost)} = {money(path * cost)}."),
        ],
        "answer": f"The path covers **{num(path)} m²** and the gravel costs **{money(path * cost)}**.",
        "check": f"Split the path into strips: two of {num(length + 2 * w)} × {num(w)} and two of {width} × {num(w)}, which gives {num(2 * (length + 2 * w) * w + 2 * width * w)} m².",
        "wrong": [f"With the path the garden becomes {num(length + w)} m by {num(width + w)} m, an area of {num((length + w) * (width + w))} m².",
                  f"The path is {num((length + w) * (width + w))} − {length * width} = {num(wrong)} m², costing {money(wrong * cost)}."],
        "wrong_answer": f"The path is {num(wrong)} m² and costs {money(wrong * cost)}.",
        "why": 'the path widens the garden on both sides, so each dimension grows by twice the width.',
    }


def m_mixture(rng):
    """Mixing solutions: the mistake uses the wrong difference in the denominator."""
    while True:
        vol = rng.choice([4, 5, 6, 8, 10, 12, 20])
        a, b = rng.choice([(10, 40), (20, 50), (15, 45), (25, 60), (5, 30)])
        c = rng.randrange(a + 5, b, 5)
        x = Fraction(vol * (c - a), b - c)
        wrong = Fraction(vol * (c - a), b - a)
        if x.denominator == 1 and x != wrong:
            break
    return {
        "prompt": f"How many litres of a {b}% salt solution must be added to {vol} litres of a {a}% solution to get a {c}% solution?",
        "steps": [
            ("Salt already there", f"{vol} L × {a}% = {num(vol * a / 100)} L of salt."),
            ("Equation", f"With x litres added: {num(vol * a / 100)} + {b / 100:g}x = {c / 100:g}({vol} + x)."),
            ("Solve", f"{num(vol * a / 100)} + {b / 100:g}x = {num(vol * c / 100)} + {c / 100:g}x, so {(b - c) / 100:g}x = {num(vol * (c - a) / 100)} and x = {num(int(x))}."),
        ],
        "answer": f"Add **{num(int(x))} litres** of the {b}% solution.",
        "check": f"Salt: {num(vol * a / 100)} + {num(int(x) * b / 100)} = {num((vol * a + int(x) * b) / 100)} L in {vol + int(x)} L, which is {c}%.",
        "wrong": [f"The gap to close is {c} − {a} = {c - a} points out of the {b} − {a} = {b - a} point range.",
                  f"So add {vol} × {c - a}/{b - a} = {num(round(float(wrong), 2))} litres."],
        "wrong_answer": f"Add about {num(round(float(wrong), 2))} litres.",
        "why": 'the amount of salt has to balance, which puts the gap between the added solution and the target in the denominator.',
    }


def m_ages(rng):
    """Age equation: the mistake flips a sign when expanding."""
    options = []
    for k in range(3, 7):
        for m in range(2, k):
            for n in range(2, 21):
                if n * (m - 1) % (k - m) == 0:
                    c = n * (m - 1) // (k - m)
                    if 5 <= c <= 15 and 25 <= k * c <= 50:
                        options.append((k, m, n, c))
    k, m, n, c = rng.choice(options)
    parent, child = rng.choice([("Maria", "her son"), ("James", "his daughter"), ("Anjali", "her daughter"), ("Carlos", "his son")])
    wrong = round(n * (m + 1) / (k - m), 1)
    return {
        "prompt": f"{parent} is {k} times as old as {child}. In {n} years, {parent} will be {m} times as old as {child}. How old are they now?",
        "steps": [
            ("Set up", f"Let the child's age be c. Then the parent is {k}c, and in {n} years: {k}c + {n} = {m}(c + {n})."),
            ("Expand", f"{k}c + {n} = {m}c + {m * n}."),
            ("Solve", (f"{k - m}c = {m * n - n}, so c = {c}." if k - m > 1 else f"c = {m * n} − {n} = {c}.")),
        ],
        "answer": f"The {child.split()[1]} is **{c}** and {parent} is **{k * c}**.",
        "check": f"In {n} years: {k * c + n} and {c + n}, and {k * c + n} = {m} × {c + n}.",
        "wrong": [f"{k}c + {n} = {m}(c + {n}) gives {k - m if k - m > 1 else ''}c = {m * n} + {n} = {m * n + n}.",
                  f"So c = {num(wrong)}."],
        "wrong_answer": f"The child is about {num(wrong)} and {parent} about {num(round(k * wrong, 1))}.",
        "why": 'expanding the bracket gives a subtraction on the right-hand side, not an addition.',
    }


def m_unit_price(rng):
    """Unit prices: the mistake compares pack totals."""
    while True:
        n1, p1 = rng.choice([(6, 4.5), (8, 5.6), (12, 7.2), (4, 3.2), (10, 6.5)])
        n2 = n1 * rng.choice([2, 3])
        p2 = round(p1 * n2 / n1 * rng.choice([0.8, 0.85, 0.9]), 2)
        u1, u2 = p1 / n1, p2 / n2
        if round(u1, 2) != round(u2, 2):
            break
    thing = rng.choice(["yogurt cups", "AA batteries", "granola bars", "cans of sparkling water", "rolls of paper towels"])
    return {
        "prompt": f"A pack of {n1} {thing} costs {money(p1)} and a pack of {n2} costs {money(p2)}. Which is the better deal, and how much do you save per item?",
        "steps": [
            ("Small pack", f"{money(p1)} ÷ {n1} = {money(u1)} per item."),
            ("Large pack", f"{money(p2)} ÷ {n2} = {money(u2)} per item."),
            ("Difference", f"{money(u1)} − {money(u2)} = {money(u1 - u2)} saved per item with the large pack."),
        ],
        "answer": f"The **pack of {n2}** is the better deal, saving about **{money(u1 - u2)} per item**.",
        "check": f"Buying {n2} items as small packs would cost {n2 // n1} × {money(p1)} = {money(p1 * n2 / n1)}, more than {money(p2)}.",
        "wrong": [f"The pack of {n1} costs {money(p1)} and the pack of {n2} costs {money(p2)}.",
                  f"{money(p1)} is less than {money(p2)}, so the smaller pack is cheaper."],
        "wrong_answer": f"The pack of {n1} is the better deal.",
        "why": 'packs of different sizes can only be compared per item.',
    }


def m_consecutive(rng):
    """Consecutive even or odd integers: the mistake steps by one."""
    kind = rng.choice(["even", "odd"])
    mid = rng.randrange(20, 140)
    if (mid % 2 == 0) != (kind == "even"):
        mid += 1
    total = 3 * mid
    return {
        "prompt": f"The sum of three consecutive {kind} integers is {total}. What are the integers?",
        "steps": [
            ("Set up", f"Call them n − 2, n and n + 2; consecutive {kind} numbers are 2 apart."),
            ("Solve", f"(n − 2) + n + (n + 2) = 3n = {total}, so n = {mid}."),
        ],
        "answer": f"The integers are **{mid - 2}, {mid} and {mid + 2}**.",
        "check": f"{mid - 2} + {mid} + {mid + 2} = {total}, and all three are {kind}.",
        "wrong": [f"Let them be n, n + 1 and n + 2, so 3n + 3 = {total}.",
                  f"Then n = {mid - 1}."],
        "wrong_answer": f"The integers are {mid - 1}, {mid} and {mid + 1}.",
        "why": 'consecutive even or odd integers are two apart, not one.',
    }


def m_marbles(rng):
    """Drawing without replacement: the mistake treats the draws as independent."""
    r, b = rng.choice([(5, 7), (4, 6), (6, 9), (3, 5), (8, 4), (7, 5)])
    n = r + b
    p = Fraction(r * (r - 1), n * (n - 1))
    wrong = Fraction(r * r, n * n)
    colour = rng.choice(["blue", "green", "yellow"])
    return {
        "prompt": f"A bag has {r} red and {b} {colour} marbles. You draw two marbles without putting the first back. What is the probability that both are red?",
        "steps": [
            ("First draw", f"P(red) = {r}/{n}."),
            ("Second draw", f"One red marble is gone, so P(red again) = {r - 1}/{n - 1}."),
            ("Multiply", f"{r}/{n} × {r - 1}/{n - 1} = {r * (r - 1)}/{n * (n - 1)} = {p}."),
        ],
        "answer": f"The probability is **{p}**, about {float(p) * 100:.1f}%.",
        "check": f"Counting pairs: C({r},2) ÷ C({n},2) = {r * (r - 1) // 2} ÷ {n * (n - 1) // 2} = {p}.",
        "wrong": [f"Each draw is red with probability {r}/{n}.",
                  f"So both are red with probability ({r}/{n})² = {wrong}."],
        "wrong_answer": f"The probability is {wrong}, about {float(wrong) * 100:.1f}%.",
        "why": "the first marble isn't put back, so the second draw has one red marble and one marble fewer.",
    }


MATH_TEMPLATES = [m_discount, m_trains, m_painters, m_final_grade, m_growth, m_ratio, m_path, m_mixture,
                  m_ages, m_unit_price, m_consecutive, m_marbles]


def math_variants(problem, rng):
    """Detailed, alternative, brief and wrong worked solutions to one problem."""
    steps = problem["steps"]
    heavy = rng.random() < 0.6
    d = [rng.choice(["Let's work through it step by step.", "Here's the full working.", "Break it into steps."])]
    for i, (title, body) in enumerate(steps, 1):
        d.append(f"### Step {i}: {title}\n\n{body}" if heavy else f"**{i}. {title}.** {body}")
    d.append(f"**Answer:** {problem['answer'].replace('**', '')}" if heavy else problem["answer"])
    d.append(f"**Check:** {problem['check']}")
    if rng.random() < 0.8:
        d.append(f"**A common mistake:** {problem['wrong'][0][0].lower() + problem['wrong'][0][1:]} That leads to \"{problem['wrong_answer'].rstrip('.')}\", "
                 f"which is wrong: {problem['why']}")
    a = [rng.choice(["Here's one way to set it up:", "Set it up like this:", "You can solve it in a few lines:"])]
    a.append("\n".join(f"{i}. {body}" for i, (_, body) in enumerate(steps, 1)))
    first = problem["answer"].split()[0]
    lower = first in ("The", "They", "You", "Add", "Working")
    a.append("So " + (first.lower() if lower else first) + problem["answer"][len(first):])
    b = " ".join(body for _, body in steps) + " " + problem["answer"].replace("**", "")
    f = " ".join(problem["wrong"]) + "\n\n" + problem["wrong_answer"] + rng.choice(["", "", " Let me know if you have other questions!", " Hope this helps."])
    return {"D": "\n\n".join(d), "A": "\n\n".join(a), "B": b, "F": f}


# -----------------------------------------------------------------------------
# Parametric battle subjects: personal finance, writing help and city itineraries


def f_budget(rng):
    """50/30/20 split of a given take-home pay."""
    income = rng.choice([2800, 3400, 4200, 5000, 6500])
    n, w, s = income * 0.5, income * 0.3, income * 0.2
    return {
        "topic": "finance", "key": "fin_budget",
        "prompt": rng.choice([
            f"I take home {money(income)} a month. How should I split it using the 50/30/20 rule?",
            f"Can you help me make a simple budget? My take-home pay is {money(income)} per month.",
        ]),
        "intro": [f"The 50/30/20 rule splits take-home pay into needs, wants and savings. On {money(income)} a month it looks like this.",
                  "A simple starting point is 50/30/20: half for needs, 30% for wants and 20% for savings and extra debt payments."],
        "sections": [
            ("table", "Your split", ["Category", "Share", "Per month"],
             [["Needs", "50%", money(n)], ["Wants", "30%", money(w)], ["Savings and debt", "20%", money(s)]]),
            ("ul", "What goes where", [
                "Needs: rent or mortgage, utilities, groceries, insurance, transport to work and minimum loan payments.",
                "Wants: eating out, streaming, hobbies, holidays and anything you could cut in a pinch.",
                "Savings and debt: emergency fund, retirement contributions and payments above the minimums.",
            ]),
            ("p", "If the numbers don't fit",
             f"In high-cost cities, needs often run above 50%. If rent alone is more than about {money(income * 0.35)}, a 60/20/20 split is a reasonable compromise; what matters is that the savings part happens automatically."),
            ("ol", "Getting started", [
                "Pull last month's spending from your bank statements.",
                "Sort each item into needs, wants or savings.",
                f"Set up an automatic transfer of {money(s)} on payday.",
                "Review after a month and adjust the categories that surprised you.",
            ]),
        ],
        "outro": ["Even if you can't reach 20% right away, start with what you can and raise it with each pay rise.",
                  "Budgeting apps can sort transactions for you, but a spreadsheet works just as well."],
        "wrong": f"The 50/30/20 rule means 50% to savings, 30% to wants and 20% to needs, so put {money(income * 0.5)} into savings every month and live on the rest.",
    }


def f_compound(rng):
    """Compound growth of a lump sum, with the simple-interest mistake."""
    p = rng.choice([2500, 5000, 10000, 20000])
    r = rng.choice([4, 5, 6, 7])
    n = rng.choice([10, 15, 20, 30])
    amount = p * (1 + r / 100) ** n
    monthly = p * (1 + r / 1200) ** (12 * n)
    rows = [[str(y), money(round(p * (1 + r / 100) ** y))] for y in range(0, n + 1, 5)]
    return {
        "topic": "finance", "key": "fin_compound",
        "prompt": rng.choice([
            f"If I invest {money(p)} at {r}% a year, compounded annually, how much will I have after {n} years?",
            f"How much will {money(p)} grow to in {n} years at {r}% interest? Please explain how compound interest works.",
        ]),
        "intro": [f"After {n} years you'd have about **{money(round(amount))}**, because each year's interest also earns interest.",
                  f"With compound interest the balance grows by {r}% of itself each year, so {money(p)} becomes about {money(round(amount))} in {n} years."],
        "sections": [
            ("p", "The formula", f"A = P × (1 + r)^n = {money(p)} × {1 + r / 100:.2f}^{n} ≈ {money(round(amount))}."),
            ("table", "Balance over time", ["Year", "Balance"], rows),
            ("p", "Monthly compounding", f"If interest is added monthly instead, A = P × (1 + r/12)^(12n) ≈ {money(round(monthly))}, about {money(round(monthly - amount))} more."),
            ("p", "Rule of 72", f"Divide 72 by the rate to estimate how long money takes to double: 72 ÷ {r} ≈ {72 / r:.0f} years."),
            ("ul", "Keep in mind", [
                f"Investment returns aren't guaranteed; {r}% is an assumption, not a promise.",
                "Inflation erodes purchasing power; at 2-3% a year, prices roughly double in 25-35 years.",
                "Taxes on interest or gains reduce the result unless the money is in a tax-advantaged account.",
            ]),
        ],
        "outro": ["Adding even a small monthly contribution changes the picture a lot; try it in a compound interest calculator.",
                  "Time is the biggest lever, which is why starting early matters more than starting big."],
        "wrong": f"Compound interest on {money(p)} at {r}% for {n} years is {money(p)} × {r / 100} × {n} = {money(p * r / 100 * n)}, so you'd have {money(p * (1 + r / 100 * n))} in total.",
    }


def f_emergency(rng):
    """Emergency-fund targets and how long they take to build."""
    e = rng.choice([1800, 2400, 3100, 3600])
    s = rng.choice([200, 300, 400, 500])
    m3, m6 = -(-3 * e // s), -(-6 * e // s)
    return {
        "topic": "finance", "key": "fin_emergency",
        "prompt": rng.choice([
            f"My essential expenses are about {money(e)} a month. How big should my emergency fund be, and where should I keep it?",
            f"I can save {money(s)} a month. How long will it take to build an emergency fund if my bills are {money(e)} a month?",
        ]),
        "intro": ["The usual guideline is three to six months of essential expenses, kept somewhere safe and easy to reach.",
                  f"On {money(e)} a month of essentials, aim for somewhere between {money(3 * e)} and {money(6 * e)}."],
        "sections": [
            ("table", "Targets", ["Cushion", "Amount"], [["3 months", money(3 * e)], ["6 months", money(6 * e)]]),
            ("p", "How long it takes", f"Saving {money(s)} a month, you'd reach the three-month level in about {m3} months and six months in about {m6}."),
            ("ul", "Where to keep it", [
                "A high-yield savings account: instant access and no market risk.",
                "Separate from your everyday account, so it doesn't get spent by accident.",
                "Not in stocks: a market drop often arrives at the same time as a job loss.",
            ]),
            ("ul", "Three months or six?", [
                "Closer to three: a stable job, two incomes, few dependants.",
                "Closer to six or more: freelance or commission income, a single income, or a mortgage and children.",
            ]),
            ("p", "Start small", "A first goal of $1,000 covers most car repairs and surprise bills, and reaching it quickly builds the habit."),
        ],
        "outro": ["Once it's built, only touch it for real emergencies, and refill it first afterwards.",
                  "Automating the monthly transfer is what makes it happen."],
        "wrong": "Keep your emergency fund invested in stocks so it grows faster; you can always sell when something comes up, and markets only go up over time.",
    }


DEBTS = TEXT["DEBTS"]


def f_debt(rng):
    """Avalanche versus snowball ordering for three debts."""
    debts = rng.sample(DEBTS, 3)
    listing = ", ".join(f"{name.lower()} with {money(bal)} at {apr}%" for name, bal, apr in debts)
    aval = sorted(debts, key=lambda d: -d[2])
    snow = sorted(debts, key=lambda d: d[1])
    same = aval[0] == snow[0]
    verdict = (f"In your case the {aval[0][0].lower()} is both the smallest balance and the highest rate, so both methods start there."
               if same else
               f"Avalanche starts with the {aval[0][0].lower()} at {aval[0][2]}%, snowball with the {snow[0][0].lower()} at {money(snow[0][1])}. The interest difference is modest, so choose the one you'll stick with.")
    return {
        "topic": "finance", "key": "fin_debt",
        "prompt": f"I have three debts: a {listing}. Should I use the avalanche or the snowball method to pay them off?",
        "intro": ["Both methods work. Avalanche (highest interest first) saves the most money; snowball (smallest balance first) gives quicker wins.",
                  "The best method is the one you'll keep following, but the numbers favour the avalanche."],
        "sections": [
            ("table", "Your debts", ["Debt", "Balance", "APR"], [[n, money(b), f"{a}%"] for n, b, a in debts]),
            ("ol", "Avalanche order (highest rate first)", [f"{n}: {a}%" for n, b, a in aval]),
            ("ol", "Snowball order (smallest balance first)", [f"{n}: {money(b)}" for n, b, a in snow]),
            ("p", "Which to choose", verdict),
            ("ul", "Either way", [
                "Pay the minimum on every debt, every month.",
                "Put every spare dollar on the target debt; when it's gone, roll its payment into the next one.",
                "Stop adding new charges to the cards you're paying down.",
            ]),
        ],
        "outro": ["Calling the card issuers to ask for a lower rate takes ten minutes and sometimes works.",
                  "A 0% balance-transfer card can help with the card debt if you can clear it within the promotional period."],
        "wrong": "Pay off the largest balance first; that's the avalanche method, and it always saves the most interest.",
    }


def f_goal(rng):
    """Monthly saving needed for a goal, with the mistake that ignores current savings."""
    goal, target = rng.choice([("house deposit", 24000), ("wedding", 15000), ("car", 9000), ("trip to Japan", 6000), ("new laptop", 1800)])
    months = rng.choice([12, 18, 24, 36]) if target > 5000 else rng.choice([6, 9, 12])
    have = rng.choice([0.1, 0.2, 0.25]) * target
    need = (target - have) / months
    rows = [[str(m), money(have + need * m)] for m in (months // 3, 2 * months // 3, months)]
    return {
        "topic": "finance", "key": "fin_goal",
        "prompt": f"I want to save {money(target)} for a {goal} in {months} months. I already have {money(have)}. How much do I need to put away each month?",
        "intro": [f"You need about **{money(need)} a month**.", f"Subtract what you have, then divide by the months left: about {money(need)} a month."],
        "sections": [
            ("p", "The math", f"You still need {money(target)} − {money(have)} = {money(target - have)}. Spread over {months} months, that's {money(need)} a month."),
            ("table", "Milestones", ["Month", "Saved by then"], rows),
            ("ul", "Making it happen", [
                "Automate the transfer on payday so it happens before you can spend it.",
                "Keep the money in a separate high-yield savings account; the interest is a small bonus.",
                f"If {money(need)} is too much, extend the deadline or trim one spending category.",
            ]),
            ("p", "Weekly version", f"That's about {money(need * 12 / 52)} a week, if you're paid weekly."),
        ],
        "outro": ["Check in every few months; windfalls like tax refunds can shorten the timeline.",
                  "Name the account after the goal; it helps."],
        "wrong": f"Divide {money(target)} by {months}: you need {money(target / months)} a month.",
    }


EMAIL_SCENARIOS = TEXT["EMAIL_SCENARIOS"]


def w_email(rng):
    """Rewrite a blunt message politely; the flawed answer keeps the bluntness."""
    sc = rng.choice(EMAIL_SCENARIOS)
    thing = rng.choice(["the quarterly report", "the client proposal", "the budget review"])
    meeting = rng.choice(["planning meeting", "weekly sync", "all-hands meeting"])
    v = {"r": rng.choice(["Dana", "Mr. Patel", "Karen", "Luis", "Ms. Okafor", "Jonas"]),
         "s": rng.choice(NAMES), "thing": thing, "Thing": thing.split(" ", 1)[1].capitalize(),
         "day": rng.choice(["Friday", "Monday", "Thursday"]), "later": rng.choice(["next Wednesday", "the 14th", "Tuesday"]),
         "inv": rng.randrange(1040, 2999), "days": rng.choice([30, 45, 60]), "amount": money(rng.choice([850, 1200, 2400, 3150])),
         "meeting": meeting, "Meeting": meeting.capitalize(),
         "commitment": rng.choice(["a client deadline", "the product launch", "an on-site visit"]),
         "address": rng.choice(["Flat 3, 27 Elm Road", "Apartment 12B, 410 Harbor Street", "14 Mill Lane"])}
    draft, formal, short = (sc[k].format(**v) for k in ("draft", "formal", "short"))
    return {
        "topic": "writing", "key": "w_email",
        "prompt": rng.choice([f"Can you rewrite this email so it sounds more professional?\n\n\"{draft}\"",
                              f"Make this message more polite but still clear:\n\n{draft}",
                              f"How can I say this nicely? \"{draft}\""]),
        "intro": ["Here's a version that keeps your point but is much more likely to get a good response.",
                  "The goal is to stay clear and firm while removing the edge."],
        "sections": [("block", "Rewritten", formal), ("ul", "What changed", sc["notes"]), ("block", "A shorter version", short)],
        "outro": ["Read it aloud once before sending; if a sentence sounds sharp out loud, it will on the screen too.", ""],
        "wrong": "Here's a more professional version:\n\n" + sc["bad"].format(**v),
    }


COVER_ROLES = TEXT["COVER_ROLES"]


def w_cover(rng):
    """Cover-letter opening built around one concrete achievement."""
    role, place, achv = rng.choice(COVER_ROLES)
    years = rng.choice([2, 3, 4, 5, 6, 8])
    art = "an" if role[0] in "aeiou" else "a"
    one = (f"When I saw that [Company] is hiring {art} {role}, I knew I wanted to apply. Over the past {years} years at {place}, "
           f"I {achv}, and I'd like to bring the same focus on measurable results to your team.")
    two = (f"In {years} years as {art} {role} at {place}, the work I'm proudest of is easy to describe: I {achv}. "
           f"I'm applying for the {role} role at [Company] because your work on [specific project or product] is exactly where I want to use those skills next.")
    return {
        "topic": "writing", "key": "w_cover",
        "prompt": rng.choice([f"Can you write the opening paragraph of a cover letter for {art} {role} position? I have {years} years of experience and I {achv}.",
                              f"Help me start my cover letter. I'm applying to be {art} {role}; I've worked {years} years at {place} and I {achv}."]),
        "intro": ["Lead with a concrete result rather than a list of adjectives; it's what makes a hiring manager keep reading.",
                  "Here's an opening that gets to your strongest evidence in the first two sentences."],
        "sections": [
            ("block", "Opening paragraph", one),
            ("ul", "Why this works", ["It names the role, so the reader knows immediately why you're writing.",
                                      "It gives one specific, checkable achievement instead of \"hard-working team player\".",
                                      "It connects your experience to what they need."]),
            ("block", "Another option", two),
            ("ul", "Fill in before sending", ["The company name and the exact job title from the posting.",
                                              "One detail that shows you know the company: a product, a project or a value.",
                                              "A number from your own work, if you have a stronger one."]),
        ],
        "outro": ["Keep the whole letter under a page; three or four short paragraphs is plenty.", ""],
        "wrong": ("Open with: \"To whom it may concern, I am writing to apply for the position advertised. I am a hard-working team player with "
                  "excellent communication skills.\" Hiring managers expect this standard wording, so there's no need to mention specific achievements."),
    }


def w_toast(rng):
    """A short toast with a placeholder for a personal memory."""
    name, partner = rng.sample(["Emma", "Jake", "Priya", "Marcus", "Lena", "Sam", "Olivia", "Noah", "Aisha", "Ben"], 2)
    rel = rng.choice(["sister", "best friend", "brother", "college roommate", "cousin"])
    occ = rng.choice(["wedding", "50th birthday", "retirement party", "engagement party"])
    years = rng.choice([12, 15, 20, 25, 30])
    middles = {
        "wedding": f"Watching {name} with {partner}, it's clear they've found someone who does the same for them. {partner}, welcome to the family; you're stuck with us now.",
        "50th birthday": f"Fifty looks good on you, {name}. You've spent these years looking after everyone else, so tonight it's our turn.",
        "retirement party": f"Your colleagues will miss the calm you bring to every crisis, and whoever takes over your desk has very big shoes to fill.",
        "engagement party": f"{partner}, you're marrying someone who remembers every birthday and never leaves a friend to move house alone. Choose wisely what you forget.",
    }
    closes = {"wedding": f"to {name} and {partner}, and to many happy years together",
              "50th birthday": f"to {name}, and to the next fifty",
              "retirement party": f"to {name}, and to a retirement full of long lunches",
              "engagement party": f"to {name} and {partner}"}
    toast = (f"Good evening, everyone. For those who don't know me, I'm {name}'s {rel}, and I've known {name} for {years} years. "
             f"In that time I've seen [a memorable moment, like the road trip where we got lost for six hours]. Through all of it, {name} has been the person who shows up, listens and makes everyone laugh.\n\n"
             f"{middles[occ]}\n\nPlease raise your glasses: {closes[occ]}.")
    return {
        "topic": "writing", "key": "w_toast",
        "prompt": rng.choice([f"I need to give a short toast at my {rel}'s {occ}. Their name is {name}. Can you help me write one?",
                              f"Write a two-minute toast for {name}'s {occ}. I'm their {rel}."]),
        "intro": ["Here's a warm, short toast you can personalise; it runs about a minute and a half spoken.",
                  "Short and sincere beats long and clever. Here's a draft built around one memory."],
        "sections": [
            ("block", "Toast", toast),
            ("ul", "Delivery tips", ["Keep it under three minutes.", "Practise out loud a few times, but bring notes on a card.",
                                     "Look at the person you're toasting for the last line, then at the room as you raise your glass.",
                                     "Skip inside jokes that only two people in the room will get."]),
            ("ul", "Make it yours", ["Swap in a real memory for the one in brackets.", "Add one sentence about something you admire in them."]),
        ],
        "outro": ["Speak slowly; nerves make everyone talk faster than they think.", ""],
        "wrong": f"Start with a long list of embarrassing stories about {name}; the more embarrassing they are, the better the toast, and ten minutes is a good length.",
    }


CITIES = TEXT["CITIES"]


def t_itinerary(rng, city=None, days=None):
    """A day-by-day plan cut from a city's bank of sights."""
    city = city or rng.choice(list(CITIES))
    days = days or rng.choice([2, 3, 4])
    c = CITIES[city]
    who = rng.choice(["with my partner", "with two teenagers", "on my own", "with friends"])
    return {
        "topic": "travel", "key": f"t_{city.lower()}",
        "prompt": rng.choice([f"Plan a {days}-day itinerary for {city}.",
                              f"I'm visiting {city} for {days} days {who}. What should we see?",
                              f"What's a good {days}-day plan for a first trip to {city}?"]),
        "intro": [f"Here's a {days}-day plan that groups sights by area, so you're not crisscrossing {city}.",
                  f"{days} days is enough for {city}'s highlights if you start early each day."],
        "sections": [("ul", f"Day {i}: {title}", items) for i, (title, items) in enumerate(c["days"][:days], 1)]
        + [("ul", "What to eat", c["food"]), ("p", "Getting around", c["transport"])],
        "outro": ["Book the timed-entry sights a week or two ahead, especially in high season.",
                  "Leave one evening unplanned; wandering is half the fun."],
        "wrong": c["wrong"],
    }


MEALS = TEXT["MEALS"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def c_meal_plan(rng):
    """A week of meals: the long-answer end of the battle data."""
    diet = rng.choice(["vegetarian", "high-protein", "budget-friendly", "Mediterranean-style"])
    who = rng.choice(["one person", "two adults", "a family of four"])
    dinners = MEALS["vegetarian" if diet == "vegetarian" else "omnivore"]
    b, l = rng.sample(MEALS["breakfast"], 7), rng.sample(MEALS["lunch"], 7)
    days = [("ul", day, [f"Breakfast: {b[i]}.", f"Lunch: {l[i]}.", f"Dinner: {dinners[i]}."]) for i, day in enumerate(WEEKDAYS)]
    wrong = ("Vegetarian diets can't provide enough protein, so add a protein shake to every meal and skip the beans, which are mostly carbohydrate."
             if diet == "vegetarian" else "Skip breakfast and eat one big meal at night; it's the easiest way to stay healthy on any meal plan.")
    chili = "turkey" if diet != "vegetarian" else "vegetable"
    recipe = ("ol", f"Monday's {chili} chili (serves 6-8)", [
        f"Soften 2 chopped onions, 2 peppers and 3 garlic cloves in 2 tbsp oil for 8 minutes" + (", then brown 500 g of ground turkey." if chili == "turkey" else "."),
        "Stir in 2 tbsp chili powder, 1 tbsp cumin and 1 tsp smoked paprika and cook for a minute.",
        "Add 2 cans of chopped tomatoes, 2 cans of drained kidney or black beans" + (", a can of sweetcorn" if chili == "vegetable" else "") + " and 250 ml of water.",
        "Simmer uncovered for 30-40 minutes, stirring now and then, until thick.",
        "Season with salt and a squeeze of lime; serve with rice, yogurt and chopped coriander.",
    ])
    return {
        "topic": "cooking", "key": "c_meal_plan",
        "prompt": f"Can you make me a 7-day {diet} meal plan for {who}? Simple recipes, please.",
        "intro": [f"Here's a simple {diet} week for {who}, built so that leftovers from one dinner become the next day's lunch.",
                  "The plan repeats a few ingredients on purpose, which keeps the shopping list short and cuts waste."],
        "sections": days + [recipe,
            ("ul", "Shopping list basics", ["Oats, wholegrain bread, rice, pasta and noodles.", "Canned tomatoes, beans, chickpeas and lentils.",
                                            "Eggs, Greek yogurt, milk, feta or halloumi.", "Spinach, peppers, broccoli, carrots, potatoes and onions.",
                                            "Bananas, berries (frozen is fine), apples and a lemon."]),
            ("ul", "Prep on Sunday", ["Cook a big pot of rice or quinoa for the first half of the week.", "Wash and chop vegetables for two or three dinners.",
                                      "Make the overnight oats for Monday and Tuesday."]),
        ],
        "outro": [f"Scale the dinners for {who} and freeze a portion of the chili; it makes a good emergency meal later.",
                  "Swap any day around to fit your schedule; the plan works in any order."],
        "wrong": wrong,
    }


PARAM_SUBJECTS = [f_budget, f_compound, f_emergency, f_debt, f_goal, w_email, w_cover, w_toast, c_meal_plan]


# -----------------------------------------------------------------------------
# Citation artefacts
#
# Search-augmented answers carry markers and source lists in many styles. The clean stage must
# strip them and must not touch look-alikes (code indexes, task boxes, prose about "sources"),
# so the sample carries both. Numeric markers never follow a letter directly ("word[1]"), so
# that they stay distinguishable from indexing.

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
            marker = rng.choice([f"[{a}]", f"[{a}][{min(a + 1, k)}]" if a < k else f"[{a}]",
                                 f"[{a}, {k}]" if a < k else f"[{a}]", f"[1-{k}]" if k >= 3 else f"[{a}]"])
            if where == "before":
                where = "space_before"
            lines[i] = place(lines[i], marker, where)
        elif style == "footnote":
            lines[i] = place(lines[i], f"[^{j + 1}]", "after" if where != "before" else "before")
        elif style == "fullwidth":
            marker = rng.choice([f"【{rng.randint(1, 14)}†source】", f"【{rng.randint(3, 19)}:{rng.randint(0, 4)}†{rng.choice(['notes.pdf', 'guide.pdf', 'handout.pdf'])}】"])
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


# -----------------------------------------------------------------------------
# The prompt pool: 190 distinct prompts, each with its four answer variants

WARMUPS = TEXT["WARMUPS"]
ACKS = ["Thanks!", "Great, that helps.", "Got it, thanks.", "Perfect. Next question:", "OK, makes sense.", "Thanks. Another one:"]


def instantiate(subject, idx, rng):
    """One concrete prompt of a handwritten subject, with its placeholders filled."""
    params = rng.choice(subject["params"]) if "params" in subject else {}
    inst = {k: fill_any(subject[k], params) for k in ("intro", "sections", "outro", "wrong")}
    inst.update(topic=subject["topic"], key=subject["key"], prompt=fill(subject["prompts"][idx], params))
    return inst


def math_instance(rng, template):
    """A math word problem as a pool entry."""
    problem = template(rng)
    return {"topic": "math", "key": template.__name__, "prompt": problem["prompt"], "math": problem}


def variants_of(inst, rng):
    """The four answer variants (D, A, B, F) of a pool entry."""
    return math_variants(inst["math"], rng) if "math" in inst else section_variants(inst, rng)


def build_pool(rng, n_prompts):
    """Distinct prompts: both phrasings of every handwritten subject, three plans per city, the
    parametric finance, writing and meal-plan subjects, and math problems to fill the rest."""
    pool = [instantiate(s, i, rng) for s in SUBJECTS for i in range(len(s["prompts"]))]
    for city in CITIES:
        for days in (2, 3, 4):
            pool.append(t_itinerary(rng, city, days))
    seen = {p["prompt"] for p in pool}
    assert len(seen) == len(pool), "two handwritten prompts coincide"
    for maker in PARAM_SUBJECTS:
        made = 0
        while made < (3 if maker in (w_cover, w_toast, c_meal_plan) else 4):
            inst = maker(rng)
            if inst["prompt"] not in seen:
                seen.add(inst["prompt"])
                pool.append(inst)
                made += 1
    k = 0
    while len(pool) < n_prompts:
        inst = math_instance(rng, MATH_TEMPLATES[k % len(MATH_TEMPLATES)])
        if inst["prompt"] not in seen:
            seen.add(inst["prompt"])
            pool.append(inst)
            k += 1
    return pool


def conversation(inst, rng, multi):
    """The messages of a battle: the user turn, or an earlier exchange and then the user turn."""
    if not multi:
        return [{"role": "user", "content": inst["prompt"]}]
    q, a = rng.choice(WARMUPS[inst["topic"]])
    return [{"role": "user", "content": q}, {"role": "assistant", "content": a},
            {"role": "user", "content": f"{rng.choice(ACKS)} {inst['prompt']}"}]


# -----------------------------------------------------------------------------
# Battle layout
#
# The dedup policy of the clean stage: per prompt_id, the decisive battles are grouped by their
# preferred answer (cleaned, whitespace-normalised); the group with most wins is kept, ties go to
# the latest created_at, then the larger battle_id; the kept battle is the group's latest. A null
# losing answer is recovered from another battle of the same group. The layout below gives the
# card's counts under that policy:
#   108 single battles                                      -> 108 prompts
#    20 prompts whose preferred answer wins twice           ->  40 battles
#     2 prompts whose preferred answer wins three times     ->   6 battles
#     4 prompts where answer X wins twice and Y once        ->  12 battles (X kept)
#     6 prompts where X and Y win once each                 ->  12 battles (the later one kept)
#   = 178 decisive battles on 140 prompts; 106 own_better and 72 other_better.
# Missing losers: 5 kept battles with no loser anywhere in their group (135 pairs remain), 2
# kept battles whose loser comes back from a duplicate, and 2 superseded battles without one.

N_DECISIVE_PROMPTS, N_HOLDOUT, N_TIE_PROMPTS, N_TIE_REPEATS = 140, 29, 50, 8
VOTE_COUNTS = {"own_better": 106, "other_better": 72, "tie": 34, "both_bad": 24}


def battle(vote, win="X", kept=False, null=False, lose_with=None):
    """One planned decisive battle; win names the preferred answer, null drops the loser."""
    return {"vote": vote, "win": win, "kept": kept, "null": null, "lose_with": lose_with}


def decisive_plans():
    """The 140 decisive prompts; each plan lists its battles in chronological order."""
    O, T = "own_better", "other_better"
    plans = []

    def add(kind, battles, holdout=None, note=""):
        """Append one plan; holdout True/False forces the prompt id in or out of the holdout."""
        plans.append({"kind": kind, "battles": battles, "holdout": holdout, "note": note})

    # unrecoverable missing losers (never in the holdout)
    add("single", [battle(O, kept=True, null=True)], False, "no loser")
    add("single", [battle(O, kept=True, null=True)], False, "no loser")
    add("single", [battle(T, kept=True, null=True)], False, "no loser")
    add("dup", [battle(O, null=True), battle(O, kept=True, null=True)], False, "no loser in group")
    add("one_one", [battle(O, "X"), battle(T, "Y", kept=True, null=True)], False, "loser only in other group")
    # recoverable missing losers
    add("dup", [battle(O), battle(O, kept=True, null=True)], None, "loser recovered")
    add("two_one", [battle(O, "Y"), battle(O, "X"), battle(O, "X", kept=True, null=True)], True, "loser recovered")
    # superseded battles without a loser
    add("dup", [battle(T, null=True), battle(T, kept=True)])
    add("two_one", [battle(T, "X"), battle(T, "X", kept=True), battle(T, "Y", null=True)])
    # the remaining competing answers
    add("two_one", [battle(O, "X"), battle(T, "Y", lose_with="X"), battle(O, "X", kept=True)])
    add("two_one", [battle(T, "X"), battle(T, "X", kept=True), battle(O, "Y")])
    for first, second in [(T, O), (O, O), (T, T), (O, T), (T, O)]:
        add("one_one", [battle(first, "X"), battle(second, "Y", kept=True)])
    # repeated identical preferred answers
    for vote in [O] * 10 + [T] * 7:
        add("dup", [battle(vote), battle(vote, kept=True)])
    add("dup3", [battle(O), battle(O), battle(O, kept=True)])
    add("dup3", [battle(T), battle(T), battle(T, kept=True)])
    # single battles fill the vote counts
    votes = Counter(b["vote"] for p in plans for b in p["battles"])
    for vote in (O, T):
        for _ in range(VOTE_COUNTS[vote] - votes[vote]):
            add("single", [battle(vote, kept=True)])
    assert len(plans) == N_DECISIVE_PROMPTS, len(plans)
    return plans


def assign_prompt_ids(plans, rng, n_tie_prompts):
    """Prompt ids with exactly N_HOLDOUT decisive ids divisible by 5, and tie ids of their own."""
    forced_out = [p for p in plans if p["holdout"] is False]
    forced_in = [p for p in plans if p["holdout"] is True]
    free = [p for p in plans if p["holdout"] is None]
    chosen = forced_in + rng.sample(free, N_HOLDOUT - len(forced_in))
    ids = list(range(1, 301))
    fives = [i for i in ids if i % 5 == 0]
    others = [i for i in ids if i % 5]
    rng.shuffle(fives)
    rng.shuffle(others)
    chosen_ids = {id(p) for p in chosen}
    for p in plans:
        p["holdout"] = id(p) in chosen_ids
        p["prompt_id"] = fives.pop() if p["holdout"] else others.pop()
    assert not any(p["holdout"] for p in forced_out)
    rest = fives + others
    rng.shuffle(rest)
    return sorted(rest[:n_tie_prompts])


def random_times(rng, n, used):
    """n distinct timestamps over six weeks, weighted toward waking hours, sorted."""
    start = datetime(2026, 2, 23, tzinfo=timezone.utc)
    hour_weights = [1, 1, 1, 1, 1, 1, 2, 3, 5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 7, 8, 8, 7, 5, 3]
    out = []
    while len(out) < n:
        t = start + timedelta(days=rng.randrange(42), hours=rng.choices(range(24), hour_weights)[0],
                              minutes=rng.randrange(60), seconds=rng.randrange(60))
        if t not in used:
            used.add(t)
            out.append(t)
    return sorted(out)


def pick(rng, weights, exclude=()):
    """A variant key drawn with weights, skipping the ones already used in this battle."""
    keys = [k for k in weights if k not in exclude]
    return rng.choices(keys, [weights[k] for k in keys])[0]


WIN_WEIGHTS = {"D": 0.66, "A": 0.27, "B": 0.07}
LOSE_WEIGHTS = {"B": 0.47, "F": 0.37, "A": 0.11, "D": 0.05}


def maybe_cite(text, inst, rng, p=0.34):
    """Citation artefacts on about a third of all answers, as in the card's export (never on
    writing help, where a search-augmented model has nothing to cite)."""
    return cite(text, inst, rng) if rng.random() < p and inst["topic"] != "writing" else text


def decisive_battles(plan, inst, variants, rng, opponents):
    """Fill a plan's battles with models and answer texts."""
    x_key = pick(rng, WIN_WEIGHTS)
    y_key = "A" if x_key == "D" else "D"
    win_key = {"X": x_key, "Y": y_key}
    # a repeated preferred answer is either the identical string or the same text with other markers
    markers = plan["kind"] in ("dup", "dup3") and inst["topic"] != "writing" and rng.random() < 0.35
    decorated = {}
    out = []
    opp_for = {}
    for b in plan["battles"]:
        winner_side = "own" if b["vote"] == "own_better" else "other"
        key = win_key[b["win"]]
        base = variants[key]
        if b["win"] not in decorated:
            decorated[b["win"]] = (cite(base, inst, rng, safe=True) if rng.random() < 0.5 else base) if markers else maybe_cite(base, inst, rng)
            text = decorated[b["win"]]
        elif markers:
            text = cite(base, inst, rng, safe=True) if rng.random() < 0.7 or decorated[b["win"]] == base else base
        else:
            text = decorated[b["win"]]
        if b["lose_with"]:
            loser = decorated[b["lose_with"]]
        else:
            used = {key} | ({win_key["Y"]} if plan["kind"] in ("two_one", "one_one") else set())
            loser = maybe_cite(variants[pick(rng, LOSE_WEIGHTS, used)], inst, rng)
        if b["null"]:
            loser = None
        if winner_side == "other":
            model = opp_for.setdefault(b["win"], rng.choice(opponents))
        else:
            model = rng.choice(opponents)
        own = text if winner_side == "own" else loser
        other = loser if winner_side == "own" else text
        out.append({"vote": b["vote"], "own": own, "other": other, "model": model})
    return out


def tie_battles(votes, inst, variants, rng, opponents):
    """Tie and both_bad battles: both answers present, similar quality within a battle."""
    out = []
    for vote in votes:
        keys = ["D", "A", "B"] if vote == "tie" else ["F", "B"]
        a, b = rng.sample(keys, 2)
        out.append({"vote": vote, "own": maybe_cite(variants[a], inst, rng),
                    "other": maybe_cite(variants[b], inst, rng), "model": rng.choice(opponents)})
    return out


FORCED = TEXT["FORCED"]


def make_battles(seed):
    """The native battle export and a summary of its layout."""
    rng = rng_for(seed, "battles")
    pool = build_pool(rng, N_DECISIVE_PROMPTS + N_TIE_PROMPTS)
    rng.shuffle(pool)
    plans = decisive_plans()
    tie_ids = assign_prompt_ids(plans, rng, N_TIE_PROMPTS)

    # forced look-alikes go to plain single battles, first phrasing of each subject
    singles = {"own_better": [p for p in plans if p["kind"] == "single" and p["note"] == "" and p["battles"][0]["vote"] == "own_better"],
               "other_better": [p for p in plans if p["kind"] == "single" and p["note"] == "" and p["battles"][0]["vote"] == "other_better"]}
    assigned = {}
    for key, vote, style, form in FORCED:
        inst = next(p for p in pool if p["key"] == key and p["prompt"] == instantiate(next(s for s in SUBJECTS if s["key"] == key), 0, random.Random(0))["prompt"])
        plan = singles[vote].pop(0)
        pool.remove(inst)
        assigned[id(plan)] = (inst, style, form)
    rest = iter(pool)

    used_times = set()
    rows = []
    multi = set(rng.sample(range(N_DECISIVE_PROMPTS + N_TIE_PROMPTS), round(0.15 * (N_DECISIVE_PROMPTS + N_TIE_PROMPTS))))
    for n, plan in enumerate(plans):
        inst, style, form = assigned[id(plan)] if id(plan) in assigned else (next(rest), None, None)
        variants = variants_of(inst, rng)
        messages = conversation(inst, rng, n in multi)
        filled = decisive_battles(plan, inst, variants, rng, OPPONENTS)
        if style:
            filled[0]["own" if filled[0]["vote"] == "own_better" else "other"] = cite(variants["D"], inst, rng, style=style, form=form)
        for b, t in zip(filled, random_times(rng, len(filled), used_times)):
            rows.append((t, plan["prompt_id"], messages, b))

    tie_votes = ["tie"] * VOTE_COUNTS["tie"] + ["both_bad"] * VOTE_COUNTS["both_bad"]
    rng.shuffle(tie_votes)
    repeats = set(rng.sample(range(N_TIE_PROMPTS), N_TIE_REPEATS))
    for n, pid in enumerate(tie_ids):
        inst = next(rest)
        variants = variants_of(inst, rng)
        messages = conversation(inst, rng, N_DECISIVE_PROMPTS + n in multi)
        votes = [tie_votes.pop() for _ in range(2 if n in repeats else 1)]
        for b, t in zip(tie_battles(votes, inst, variants, rng, OPPONENTS), random_times(rng, len(votes), used_times)):
            rows.append((t, pid, messages, b))
    assert not tie_votes

    rows.sort(key=lambda r: r[0])
    out, number = [], 1000
    for t, pid, messages, b in rows:
        number += rng.choice([1, 1, 2, 3, 5])
        out.append({
            "battle_id": f"bt-{number:06d}",
            "prompt_id": pid,
            "messages": messages,
            "own": {"model": OWN_MODEL, "answer": b["own"]},
            "other": {"model": b["model"], "answer": b["other"]},
            "vote": b["vote"],
            "created_at": t.strftime("%Y-%m-%dT%H:%M:%SZ"),
        })
    return out


# -----------------------------------------------------------------------------
# The same battles in the public Chatbot Arena export format

ARENA_WINNERS = ["model_a"] * 8 + ["model_b"] * 8 + ["tie"] * 5 + ["tie (bothbad)"] * 3


def make_arena(seed):
    """24 arena rows; our model sits on side a in half of them and on side b in the other half."""
    rng = rng_for(seed, "arena")
    pool = build_pool(rng, 150)
    picks = rng.sample(pool, len(ARENA_WINNERS))
    winners = list(ARENA_WINNERS)
    rng.shuffle(winners)
    ours_on_a = [True] * 12 + [False] * 12
    rng.shuffle(ours_on_a)
    start = datetime(2026, 3, 2, tzinfo=timezone.utc).timestamp()
    rows = []
    for i, (inst, winner) in enumerate(zip(picks, winners)):
        v = variants_of(inst, rng)
        if winner in ("model_a", "model_b"):
            good = pick(rng, WIN_WEIGHTS)
            pair = [v[good], v[pick(rng, LOSE_WEIGHTS, {good})]]
            a, b = pair if winner == "model_a" else pair[::-1]
        else:
            a, b = (v[k] for k in rng.sample(["D", "A", "B"] if winner == "tie" else ["F", "B"], 2))
        a, b = maybe_cite(a, inst, rng, 0.25), maybe_cite(b, inst, rng, 0.25)
        messages = conversation(inst, rng, i < 2)  # two follow-ups that share their first exchange
        opponent = rng.choice(OPPONENTS)
        model_a, model_b = (OWN_MODEL, opponent) if ours_on_a[i] else (opponent, OWN_MODEL)
        rows.append({
            "question_id": f"{rng.getrandbits(128):032x}",
            "model_a": model_a,
            "model_b": model_b,
            "winner": winner,
            "conversation_a": messages + [{"role": "assistant", "content": a}],
            "conversation_b": messages + [{"role": "assistant", "content": b}],
            "turn": sum(m["role"] == "user" for m in messages),
            "language": "English",
            "tstamp": round(start + rng.uniform(0, 35 * 86400), 4),
        })
    rows.sort(key=lambda r: r["tstamp"])
    return rows


# -----------------------------------------------------------------------------
# General mix: word banks
#
# Short rows in five styles standing in for the Stage-1 SFT mixture: plain instructions, math
# with a final "The answer is N." line, verifiable-constraint prompts with answers that satisfy
# them, casual chat, and FLAN-style task templates.

CONCEPTS = TEXT["CONCEPTS"]

TIPS = TEXT["TIPS"]

FORMAL = TEXT["FORMAL"]

GRAMMAR = TEXT["GRAMMAR"]

SYNONYMS = TEXT["SYNONYMS"]

ANIMALS = TEXT["ANIMALS"]
ANIMAL_NOTES = TEXT["ANIMAL_NOTES"]

WORDS = TEXT["WORDS"]

TOPIC_FACTS = TEXT["TOPIC_FACTS"]
END_PHRASES = ["Is there anything else I can help with?", "Let me know if you have additional questions.", "That is all for today.",
               "Thanks for reading.", "I hope this helps.", "Any other questions?"]

IDEAS = TEXT["IDEAS"]

ELI5 = TEXT["ELI5"]

DIFFERENCES = TEXT["DIFFERENCES"]

MESSAGES = TEXT["MESSAGES"]

REVIEW_PRODUCTS = ["headphones", "coffee maker", "hiking boots", "desk lamp", "yoga mat", "phone case", "backpack", "blender",
                   "novel", "office chair", "water bottle", "electric kettle"]
REVIEW_POS = ["works exactly as described", "feels sturdy and well made", "arrived a day earlier than promised", "is worth every penny",
              "has held up perfectly after months of daily use", "is comfortable from the very first day", "looks even better than the photos"]
REVIEW_NEG = ["stopped working after two weeks", "feels cheap and flimsy", "came with useless instructions",
              "is much smaller than the photos suggest", "broke the first time I dropped it", "smells strongly of plastic", "was missing a part"]
NLI_PEOPLE = ["man", "woman", "child", "teenager", "chef", "cyclist", "student", "group of friends", "farmer", "musician"]
NLI_ACTIONS = TEXT["NLI_ACTIONS"]
NLI_NEUTRAL = ["for the first time", "to win a bet", "while waiting for a friend", "on their birthday", "after a long day at work"]
TEAMS = ["Riverside Rovers", "Northgate United", "the Harbor Hawks", "Eastfield City", "the Valley Foxes", "Lakeside Athletic"]
COMPANIES = ["Brightwell Foods", "Northstar Logistics", "Kestrel Software", "Meridian Bank", "Solace Pharmaceuticals", "Tidewater Energy"]
COUNTRIES = ["Norway", "Chile", "Kenya", "Vietnam", "Canada", "Portugal", "New Zealand", "Morocco", "Peru", "Finland"]


# -----------------------------------------------------------------------------
# General mix: row makers. Each returns the messages of one row.


def chat(*turns):
    """Alternating user/assistant messages from plain strings."""
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(turns)]


def gm_definition(rng):
    """A term defined in a sentence, with an example so the row teaches usage too."""
    term, definition, example = rng.choice(CONCEPTS)
    q = rng.choice([f"What is {term}?", f"Define {term} in one or two sentences.", f"Explain {term} briefly.",
                    f"What does the term \"{term.split(' ', 1)[-1] if term.startswith(('a ', 'an ', 'the ')) else term}\" mean?",
                    f"Give a short definition of {term} with an example."])
    name = term[0].upper() + term[1:]
    a = f"{name} is {definition}. For example: {example}"
    return chat(q, a)


def gm_tips(rng):
    """A numbered list of tips; the count asked for is the count given."""
    goal, tips = rng.choice(TIPS)
    n = rng.choice([3, 4, 5])
    q = rng.choice([f"Give me {n} tips for {goal}.", f"What are {n} practical tips for {goal}?", f"List {n} ways to get better at {goal}."])
    picked = rng.sample(tips, n)
    a = rng.choice([f"Here are {n} tips for {goal}:\n\n", "", f"Sure. {n} tips:\n\n"]) + "\n".join(f"{i}. {t}" for i, t in enumerate(picked, 1))
    a += "\n\n" + rng.choice(["Start with one or two of these; small changes are easier to keep.", "Pick the one that seems easiest and try it for a week.",
                               "None of these needs special equipment, just a bit of consistency.", ""])
    a = a.rstrip()
    return chat(q, a)


def gm_formal(rng):
    """A register change: casual sentence in, formal sentence out."""
    informal, formal = rng.choice(FORMAL)
    q = rng.choice([f"Rewrite this sentence to sound more formal: \"{informal}\"", f"Make this more professional: {informal}",
                    f"How would I say \"{informal}\" in a formal email?"])
    note = rng.choice([" This replaces the casual wording with complete, neutral phrasing.", " Formal writing avoids slang and contractions and states the point directly.", ""])
    return chat(q, rng.choice([formal, f"\"{formal}\"", f"A more formal version: \"{formal}\""]) + note)


def gm_grammar(rng):
    """One grammar slip and its correction."""
    wrong, right = rng.choice(GRAMMAR)
    q = rng.choice([f"Correct the grammar in this sentence: {wrong}", f"Fix any mistakes: \"{wrong}\"", f"Is this sentence correct? {wrong}"])
    a = f"The corrected sentence is: \"{right}\"" if not q.startswith("Is") else f"Not quite. It should be: \"{right}\""
    return chat(q, a)


def gm_synonym(rng):
    """Synonyms or an antonym: very short rows that still need the right word."""
    word, syns, ant = rng.choice(SYNONYMS)
    kind = rng.choice(["syn", "syn", "ant"])
    if kind == "ant":
        return chat(rng.choice([f"What is the opposite of \"{word}\"?", f"Give an antonym for {word}."]), f"The opposite of \"{word}\" is \"{ant}\".")
    n = rng.choice([2, 3])
    return chat(f"Give me {n} synonyms for \"{word}\".", ", ".join(syns[:n]).capitalize() + ".")


def gm_animal(rng):
    """An animal and its class, with the defining traits of that class."""
    animal, cls = rng.choice(ANIMALS)
    q = rng.choice([f"Is a {animal} a mammal, bird, reptile, amphibian or fish?", f"What kind of animal is a {animal}?", f"Classify the {animal} into its animal group."])
    art = "an" if cls[0] in "aeiou" else "a"
    return chat(q, f"A {animal} is {art} {cls}. {ANIMAL_NOTES[cls]}")


CONVERSIONS = TEXT["CONVERSIONS"]


def gm_convert(rng):
    """A unit conversion with the factor shown, so the number can be checked."""
    if rng.random() < 0.25:
        c = rng.choice([-10, 0, 5, 12, 18, 21, 25, 30, 37, 100])
        f = c * 9 / 5 + 32
        return chat(f"Convert {c}°C to Fahrenheit.", f"{c}°C × 9/5 + 32 = {num(round(f, 1))}°F.")
    a, b, k = rng.choice(CONVERSIONS)
    x = rng.choice([1, 2, 3, 5, 8, 10, 12, 15, 20, 25, 42, 50, 100])
    return chat(rng.choice([f"Convert {x} {a} to {b}.", f"How many {b} is {x} {a}?"]),
                f"{x} {a} is about {num(round(x * k, 2))} {b} (1 {a[:-1] if a.endswith('s') else a} ≈ {num(round(k, 3))} {b}).")


def gm_sort(rng):
    """Alphabetical or numeric ordering: exact answers a small model can learn."""
    if rng.random() < 0.5:
        ws = rng.sample(WORDS, rng.randint(4, 7))
        return chat(f"Sort these words alphabetically: {', '.join(ws)}", ", ".join(sorted(ws)))
    ns = rng.sample(range(1, 200), rng.randint(5, 8))
    return chat(f"Put these numbers in order from smallest to largest: {', '.join(map(str, ns))}", ", ".join(map(str, sorted(ns))))


def gm_instruction(rng):
    """The 'instructions' source: definitions, tips, rewrites and small transformations."""
    maker = rng.choices([gm_definition, gm_tips, gm_formal, gm_grammar, gm_synonym, gm_animal, gm_convert, gm_sort],
                        [6, 6, 2, 2, 1, 1, 1, 1])[0]
    return maker(rng)


def gm_math(rng):
    """The 'math' source: small word problems whose last line is 'The answer is N.'"""
    name = rng.choice(NAMES)
    kind = rng.randrange(15)
    if kind == 0:
        n, p = rng.randint(2, 9), rng.choice([2, 3, 4, 5, 6, 7, 8, 9, 12])
        bill = 20 if n * p < 20 else 50 if n * p < 50 else 100
        q = f"{name} buys {n} notebooks at ${p} each and pays with a ${bill} bill. How much change does {name} get?"
        work, ans = f"The notebooks cost {n} × ${p} = ${n * p}. The change is ${bill} − ${n * p} = ${bill - n * p}.", bill - n * p
    elif kind == 1:
        a, b, c = rng.randint(20, 90), rng.randint(3, 19), rng.randint(5, 30)
        q = f"{name} had {a} stickers, gave away {b} and then bought {c} more. How many stickers does {name} have now?"
        work, ans = f"{a} − {b} = {a - b}, and {a - b} + {c} = {a - b + c}.", a - b + c
    elif kind == 2:
        a, b = rng.randint(6, 24), rng.randint(3, 15)
        q = f"A box holds {a} pencils. How many pencils are in {b} boxes?"
        work, ans = f"{b} × {a} = {a * b}.", a * b
    elif kind == 3:
        b, each = rng.randint(3, 9), rng.randint(3, 12)
        q = f"{name} shares {b * each} cookies equally among {b} friends. How many cookies does each friend get?"
        work, ans = f"{b * each} ÷ {b} = {each}.", each
    elif kind == 4:
        l, w = rng.randint(4, 20), rng.randint(3, 15)
        if rng.random() < 0.5:
            q, work, ans = f"A rectangle is {l} cm long and {w} cm wide. What is its area in square centimetres?", f"Area = {l} × {w} = {l * w} cm².", l * w
        else:
            q, work, ans = f"A rectangular garden is {l} m long and {w} m wide. How many metres of fence go around it?", f"Perimeter = 2 × ({l} + {w}) = {2 * (l + w)} m.", 2 * (l + w)
    elif kind == 5:
        p, n = rng.choice([10, 20, 25, 50, 75]), rng.choice([40, 60, 80, 120, 200, 240, 360])
        q = f"What is {p}% of {n}?"
        work, ans = f"{p}% of {n} = {p}/100 × {n} = {p * n // 100}.", p * n // 100
    elif kind == 6:
        while True:
            xs = [rng.randint(60, 100) for _ in range(rng.randint(3, 5))]
            if sum(xs) % len(xs) == 0:
                break
        q = f"{name}'s quiz scores are {', '.join(map(str, xs))}. What is the average score?"
        work, ans = f"The total is {sum(xs)}, and {sum(xs)} ÷ {len(xs)} = {sum(xs) // len(xs)}.", sum(xs) // len(xs)
    elif kind == 7:
        h1, m1 = rng.randint(1, 9), rng.choice([0, 10, 15, 20, 30, 40, 45])
        dur = rng.randint(35, 170)
        q = f"A train leaves at {h1}:{m1:02d} and arrives {dur} minutes later. How many full hours and minutes is the trip? Give the total in minutes."
        work, ans = f"The trip is {dur // 60} hour(s) and {dur % 60} minutes, which is {dur} minutes in total.", dur
    elif kind == 8:
        v, t = rng.choice([12, 15, 18, 20, 24]), rng.randint(2, 5)
        q = f"A cyclist rides at {v} km/h for {t} hours. How far does she travel?"
        work, ans = f"Distance = speed × time = {v} × {t} = {v * t} km.", v * t
    elif kind == 9:
        a, weeks = rng.choice([5, 8, 10, 12, 15, 20, 25]), rng.randint(4, 20)
        q = f"{name} saves ${a} every week. How many weeks will it take to save ${a * weeks}?"
        work, ans = f"${a * weeks} ÷ ${a} per week = {weeks} weeks.", weeks
    elif kind == 10:
        num_, den = rng.choice([(1, 2), (1, 3), (2, 3), (3, 4), (1, 4), (2, 5), (3, 5), (5, 6)])
        n = den * rng.randint(3, 20)
        q = f"What is {num_}/{den} of {n}?"
        work, ans = f"{n} ÷ {den} = {n // den}, and {n // den} × {num_} = {n // den * num_}.", n // den * num_
    elif kind == 11:
        s, d, y = rng.randint(4, 12), rng.randint(2, 6), rng.randint(2, 10)
        q = f"{name} is {d} years older than her brother, who is {s}. How old will {name} be in {y} years?"
        work, ans = f"{name} is {s} + {d} = {s + d} now, so in {y} years she will be {s + d} + {y} = {s + d + y}.", s + d + y
    elif kind == 12:
        t0, rise = rng.randint(-8, 5), rng.randint(4, 15)
        q = f"The temperature was {t0}°C in the morning and rose by {rise} degrees by the afternoon. What was the afternoon temperature?"
        work, ans = f"{t0} + {rise} = {t0 + rise}°C.", t0 + rise
    elif kind == 13:
        r, d = rng.randint(10, 40), rng.randint(2, 7)
        pages = r * d + rng.randint(20, 150)
        q = f"A book has {pages} pages. {name} reads {r} pages a day. How many pages are left after {d} days?"
        work, ans = f"{name} reads {r} × {d} = {r * d} pages, leaving {pages} − {r * d} = {pages - r * d}.", pages - r * d
    else:
        n, each, m = rng.randint(2, 6), rng.randint(2, 9), rng.randint(3, 12)
        q = f"{n} notebooks cost ${n * each}. How much do {m} notebooks cost?"
        work, ans = f"One notebook costs ${n * each} ÷ {n} = ${each}, so {m} cost {m} × ${each} = ${m * each}.", m * each
    return chat(q, f"{work}\nThe answer is {ans}.")


def constraint_answer(rng, kind, topic, facts):
    """A (prompt clause, answer) pair for one verifiable constraint type."""
    if kind == "lowercase":
        text = " ".join(rng.sample(facts, 3)).lower()
        return (rng.choice(["Your entire response must be in lowercase letters.", "Use only lowercase letters, with no capitals at all."]), text)
    if kind == "bullets":
        n = rng.choice([2, 3, 4, 5])
        return (f"Answer with exactly {n} bullet points, using markdown bullets such as:\n* This is a point.",
                "\n".join(f"* {f}" for f in rng.sample(facts, n)))
    if kind == "keyword":
        picked = rng.sample(facts, 3)
        kw = rng.choice([w.strip(".").lower() for w in picked[0].split() if len(w.strip(".")) >= 6 and w.strip(".").isalpha()] or ["important"])
        text = " ".join(picked) if kw in " ".join(picked).lower() else " ".join(picked) + f" That is why it is {kw}."
        return (f"Include the keyword \"{kw}\" in your response.", text)
    if kind == "end":
        phrase = rng.choice(END_PHRASES)
        return (f"Finish your response with the exact phrase \"{phrase}\"; no other words should follow it.",
                " ".join(rng.sample(facts, 3)) + " " + phrase)
    if kind == "no_comma":
        return ("Do not use any commas in your response.", " ".join(rng.sample(facts, 3)))
    if kind == "json":
        body = json.dumps({"topic": topic, "facts": rng.sample(facts, 3)}, indent=2)
        return ("Wrap your entire output in JSON format.", f"```json\n{body}\n```" if rng.random() < 0.5 else body)
    n = rng.choice([2, 3])
    chunks = rng.sample(facts, 2 * n)
    paras = [" ".join(chunks[2 * i:2 * i + 2]) for i in range(n)]
    return (f"There should be exactly {n} paragraphs, separated from each other by the markdown divider ***.", "\n\n***\n\n".join(paras))


def gm_constraint(rng):
    """The 'constraints' source: instructions with checkable constraints and answers that satisfy them."""
    topic, facts = rng.choice(TOPIC_FACTS)
    kind = rng.choice(["lowercase", "bullets", "keyword", "end", "no_comma", "json", "paragraphs"])
    task = rng.choice([f"Write a short piece about {topic}.", f"Tell me about {topic}.", f"Explain {topic} to a curious teenager.",
                       f"Write a few sentences on {topic}."])
    clause, answer = constraint_answer(rng, kind, topic, facts)
    if kind in ("no_comma", "keyword") and rng.random() < 0.4:  # a second, compatible constraint
        phrase = rng.choice(END_PHRASES)
        clause += f" End your response with the exact phrase \"{phrase}\" and nothing after it."
        answer += " " + phrase
    return chat(f"{task} {clause}", answer)

INGREDIENTS = TEXT["INGREDIENTS"]
DISHES = ["a quick stir-fry", "a one-pan skillet", "a simple traybake", "a warm grain bowl", "loaded quesadillas", "a frittata", "a hearty soup"]
FEELINGS = ["nervous", "anxious", "overwhelmed", "sad", "restless", "unmotivated"]
EVENTS = ["a job interview", "moving to a new city", "my first day at a new school", "giving a speech", "starting university",
          "a big exam", "going back to work after parental leave", "my driving test"]
STUDY_SUBJECTS = ["biology", "chemistry", "algebra", "world history", "economics", "French", "statistics", "physics", "English literature", "geography"]
PETS = TEXT["PETS"]
TRAITS = ["fluffy", "black", "orange", "tiny", "lazy", "very energetic"]


def gm_casual_more(rng):
    """More casual requests: what to cook, reassurance, study plans and pet names."""
    kind = rng.randrange(4)
    if kind == 0:
        a, b, c = rng.sample(list(INGREDIENTS), 3)
        dish = rng.choice(DISHES)
        q = rng.choice([f"what should I cook tonight? I have {a}, {b} and {c}", f"I've got {a}, {b} and {c} in the fridge. Dinner ideas?"])
        return chat(q, f"You could make {dish}. Start with the {a}: {INGREDIENTS[a]}. Then add the {b}; {INGREDIENTS[b]}. "
                       f"Finish with the {c} ({INGREDIENTS[c]}), season with salt, pepper and a squeeze of lemon, and dinner is ready in about 30 minutes.")
    if kind == 1:
        feeling, event = rng.choice(FEELINGS), rng.choice(EVENTS)
        q = rng.choice([f"is it normal to feel {feeling} about {event}?", f"I'm feeling really {feeling} about {event}. Any advice?"])
        echo = event.replace("my ", "your ")
        return chat(q, f"Yes, that's very normal. {echo[0].upper() + echo[1:]} is a big step, and feeling {feeling} usually means it matters to you. "
                       "A few things help: prepare what you can in advance, get a good night's sleep beforehand, and talk it through with someone you trust. "
                       "If the feeling stays with you for weeks or starts to affect your daily life, it's worth speaking to a doctor or counsellor.")
    if kind == 2:
        subject, days = rng.choice(STUDY_SUBJECTS), rng.randint(3, 7)
        plan = ["review your notes and list the topics you feel weakest on", "work through the weakest topic with practice questions",
                "do a timed past paper and mark it", "revisit the mistakes from the past paper", "make one-page summary sheets",
                "do a second past paper", "light review of your summary sheets and an early night"]
        steps = plan[:days - 1] + [plan[-1]]
        return chat(f"can you help me make a study schedule? my {subject} exam is in {days} days",
                    f"Here's a simple {days}-day plan for {subject}:\n\n" + "\n".join(f"Day {i}: {x[0].upper() + x[1:]}." for i, x in enumerate(steps, 1))
                    + "\n\nStudy in 45-minute blocks with short breaks, and test yourself rather than just rereading.")
    pet, trait = rng.choice(list(PETS)), rng.choice(TRAITS)
    names = rng.sample(PETS[pet], 4)
    return chat(rng.choice([f"I just got a {trait} {pet}. Name ideas?", f"help me name my new {pet}, it's {trait}"]),
                f"Congratulations on your new {pet}! A few names that might suit a {trait} one: " + ", ".join(names[:3]) + f" or {names[3]}. "
                "Say them out loud a few times and see which one your pet seems to respond to.")



def gm_sharegpt(rng):
    """The 'sharegpt_style' source: casual requests, sometimes with a follow-up turn."""
    kind = rng.randrange(6)
    if kind >= 4:
        return gm_casual_more(rng)
    if kind == 0:
        thing, ideas = rng.choice(IDEAS)
        n = rng.choice([3, 4, 5])
        q = rng.choice([f"hey, can you give me some ideas for {thing}?", f"I need ideas for {thing}. Any suggestions?",
                        f"brainstorm {n} ideas for {thing} pls"])
        picked = rng.sample(ideas, n)
        a = rng.choice(["Sure! Here are a few ideas:", "Happy to help. Some options:", "Here are some ideas to get you started:"]) + "\n\n" + \
            "\n".join(f"{i}. {x}" for i, x in enumerate(picked, 1)) + "\n\n" + rng.choice(["Want me to expand on any of these?", "Let me know which one you like and I can add details.", ""])
        a = a.strip()
        short = f"Sure, the top two: {picked[0].rstrip('.')} or {picked[1][0].lower() + picked[1][1:]}"
    elif kind == 1:
        topic, text = rng.choice(ELI5)
        q = rng.choice([f"can you explain {topic} like I'm five?", f"Explain {topic} in really simple terms.", f"ELI5: {topic}"])
        a, short = text, text.split(". ")[0] + "."
    elif kind == 2:
        x, y, text = rng.choice(DIFFERENCES)
        q = rng.choice([f"what's the difference between {x} and {y}?", f"{x} vs {y}, what's the difference?", f"How is {x} different from {y}?"])
        a, short = text, text.split(". ")[0] + "."
    else:
        who, what, text = rng.choice(MESSAGES)
        q = rng.choice([f"help me write a text to {who} saying {what}", f"Can you write a short message to {who}? I want to tell them {what}."])
        a, short = text, text.split(". ")[0] + "."
    if rng.random() < 0.12:
        follow = rng.choice(["can you make it shorter?", "thanks! shorter version?", "Great. Can you boil that down to one line?"])
        return chat(q, a, follow, short)
    return chat(q, a)


def gm_flan(rng):
    """The 'flan_style' source: classic NLP task templates with short answers."""
    kind = rng.randrange(7)
    if kind == 0:
        product = rng.choice(REVIEW_PRODUCTS)
        positive = rng.random() < 0.5
        bank = REVIEW_POS if positive else REVIEW_NEG
        a, b = rng.sample(bank, 2)
        review = f"{rng.choice(['I bought this last month.', 'Ordered these for my partner.', 'Second one I have owned.', 'Bought it on sale.'])} The {product} {a}, and it {b}."
        q = rng.choice([f"Review: {review}\nIs this review positive or negative?", f"{review}\nDid this reviewer like the product?",
                        f"What is the sentiment of the following review?\n{review}\nOPTIONS:\n- negative\n- positive"])
        ans = ("Yes." if positive else "No.") if "Did" in q else ("Positive." if positive else "Negative.")
        if rng.random() < 0.6:
            ans += f" The reviewer says the {product} {a} and {b}."
        return chat(q, ans)
    if kind == 1:
        person, (action, general, contra) = rng.choice(NLI_PEOPLE), rng.choice(NLI_ACTIONS)
        premise = f"A {person} is {action}."
        label = rng.choice(["yes", "no", "it is not possible to tell"])
        hyp = {"yes": f"The {person} {general}.", "no": f"The {person} {contra}.",
               "it is not possible to tell": f"The {person} is {action.split(' ')[0]} {' '.join(action.split(' ')[1:])} {rng.choice(NLI_NEUTRAL)}."}[label]
        q = f"Premise: \"{premise}\"\nHypothesis: \"{hyp}\"\nDoes the premise entail the hypothesis?\nOPTIONS:\n- yes\n- it is not possible to tell\n- no"
        why = {"yes": f"Someone who is {action} {general}, so the hypothesis follows.",
               "no": f"Someone who is {action} cannot at the same time be someone who {contra}.",
               "it is not possible to tell": "The premise says nothing about why or when this is happening."}[label]
        return chat(q, f"{why} The answer is: {label}." if rng.random() < 0.6 else label)
    if kind == 2:
        cat = rng.choice(["Sports", "Business", "World", "Science/Tech"])
        a, b = rng.sample(TEAMS, 2)
        c1, c2 = rng.sample(COUNTRIES, 2)
        head = {"Sports": f"{a} beat {b} {rng.randint(2, 5)}-{rng.randint(0, 1)} to reach the cup final",
                "Business": f"{rng.choice(COMPANIES)} shares rise {rng.randint(3, 15)}% after strong quarterly results",
                "World": f"{c1} and {c2} sign new trade and climate agreement",
                "Science/Tech": f"Researchers in {c1} unveil a battery that charges in {rng.randint(5, 15)} minutes"}[cat]
        return chat(f"Headline: {head}\nWhich topic is this headline about? World, Sports, Business or Science/Tech?", cat)
    if kind == 3:
        term, definition, example = rng.choice(CONCEPTS)
        passage = f"{term[0].upper() + term[1:]} is {definition}. {example}"
        return chat(f"Read the passage and answer the question.\n\nPassage: {passage}\n\nQuestion: What is {term}?", f"{definition[0].upper() + definition[1:]}.")
    if kind == 4:
        topic, facts = rng.choice(TOPIC_FACTS)
        chosen = facts[:rng.randint(3, 5)]
        return chat(f"Summarize this passage in one sentence:\n\n{' '.join(chosen)}", f"The passage describes {topic}: {chosen[0][0].lower() + chosen[0][1:]}")
    if kind == 5:
        (i1, f1), (i2, f2) = rng.sample(FORMAL, 2)
        same = rng.random() < 0.5
        s2 = f1 if same else f2
        return chat(f"Sentence 1: {i1}\nSentence 2: {s2}\nDo these two sentences mean the same thing? Answer yes or no.", "yes" if same else "no")
    topic, facts = rng.choice(TOPIC_FACTS)
    fact = rng.choice(facts)
    content = [w.strip(".").lower() for w in fact.split() if len(w.strip(".")) > 4 and w.strip(".").isalpha()]
    picked = content[:3] if len(content) >= 3 else (content + ["today"])[:3]
    return chat(f"Write a sentence that uses all of these words: {', '.join(picked)}.", fact)


GM_SOURCES = [("instructions", gm_instruction, 900), ("math", gm_math, 650), ("constraints", gm_constraint, 550),
              ("sharegpt_style", gm_sharegpt, 450), ("flan_style", gm_flan, 450)]


def make_general_mix(seed):
    """About 3,000 distinct rows, interleaved across the five sources by a seeded shuffle."""
    rng = rng_for(seed, "general_mix")
    rows, seen = [], set()
    for source, maker, target in GM_SOURCES:
        made, tries = 0, 0
        while made < target and tries < 50 * target:
            tries += 1
            messages = maker(rng)
            key = norm(messages[0]["content"])
            if key in seen:
                continue
            seen.add(key)
            rows.append((source, messages))
            made += 1
    rng.shuffle(rows)
    return [{"id": f"gm-{i:05d}", "source": source, "messages": messages} for i, (source, messages) in enumerate(rows, 1)]


# -----------------------------------------------------------------------------
# Eval: MMLU-style multiple choice. Fact questions are (question, correct, three distractors);
# computed questions draw their numbers and build distractors from typical slips.

MMLU_FACTS = TEXT["MMLU_FACTS"]

CAPITALS = TEXT["CAPITALS"]


def distinct_choices(correct, candidates):
    """Three distractors that differ from the answer and from each other."""
    out = []
    for c in candidates:
        if c != correct and c not in out:
            out.append(c)
        if len(out) == 3:
            return out
    raise ValueError(f"not enough distractors for {correct!r}: {candidates!r}")


def article(n):
    """'a' or 'an' before a spoken number: an 8 kg cart, an 11 kg cart, a 12 kg cart."""
    return "an" if str(n).startswith("8") or n in (11, 18) or 80 <= n < 90 or 800 <= n < 900 else "a"


def q_hs_math(rng):
    """Algebra, slopes, quadratics, function values and dice probabilities."""
    kind = rng.randrange(5)
    if kind == 0:
        a, x, b = rng.randint(2, 9), rng.randint(-6, 12), rng.randint(1, 20)
        c = a * x + b
        return f"Solve for x: {a}x + {b} = {c}.", str(x), [str(x + 1), str((c + b) // a) if (c + b) % a == 0 else str(c - b), str(-x) if x else str(x + 2), str(x - 1)]
    if kind == 1:
        x1, y1 = rng.randint(-5, 5), rng.randint(-5, 5)
        dx, dy = rng.choice([1, 2, 3, 4]), rng.choice([-6, -4, -3, -2, 2, 3, 4, 6, 8])
        m = Fraction(dy, dx)
        inv = Fraction(dx, dy)
        return (f"What is the slope of the line through ({x1}, {y1}) and ({x1 + dx}, {y1 + dy})?", str(m),
                [str(inv), str(-m), str(-inv), str(m + 1)])
    if kind == 2:
        r1, r2 = rng.sample([-6, -5, -4, -3, -2, -1, 1, 2, 3, 4, 5, 6, 7], 2)
        b, c = -(r1 + r2), r1 * r2
        eq = f"x² {'+' if b >= 0 else '−'} {abs(b)}x {'+' if c >= 0 else '−'} {abs(c)} = 0"
        fmt = lambda p, q: f"x = {min(p, q)} or x = {max(p, q)}"
        return f"What are the solutions of {eq}?", fmt(r1, r2), [fmt(-r1, -r2), fmt(r1, -r2), fmt(-r1, r2), fmt(r1 + 1, r2)]
    if kind == 3:
        a, b, k = rng.randint(2, 5), rng.randint(1, 12), rng.randint(2, 6)
        v = a * k * k - b
        return f"If f(x) = {a}x² − {b}, what is f({k})?", str(v), [str((a * k) ** 2 - b), str(a * 2 * k - b), str(a * k * k + b), str(v + a)]
    s = rng.randint(3, 11)
    ways = sum(1 for i in range(1, 7) for j in range(1, 7) if i + j == s)
    p = Fraction(ways, 36)
    return (f"Two fair six-sided dice are rolled. What is the probability that the sum is {s}?", str(p),
            [str(Fraction(ways, 12)), str(Fraction(1, 11)), str(Fraction(ways + 1, 36)), str(Fraction(1, 6)) if p != Fraction(1, 6) else str(Fraction(1, 12))])


def q_elem_math(rng):
    """Fractions, percentages, order of operations, rounding and multiples."""
    kind = rng.randrange(5)
    if kind == 0:
        a, b, c, d = rng.randint(1, 5), rng.choice([2, 3, 4, 5, 6, 8]), rng.randint(1, 5), rng.choice([3, 4, 5, 6, 10])
        r = Fraction(a, b) + Fraction(c, d)
        return f"What is {a}/{b} + {c}/{d}?", str(r), [f"{a + c}/{b + d}", str(r + Fraction(1, b * d)), str(Fraction(a * c, b * d)), str(r - Fraction(1, b * d))]
    if kind == 1:
        p, n = rng.choice([5, 12, 15, 30, 35, 45, 60]), rng.choice([40, 80, 120, 160, 240, 300, 420])
        v = Fraction(p * n, 100)
        return f"What is {p}% of {n}?", num(float(v)), [num(float(v * 10)), num(float(v / 10)), num(n - float(v)), num(float(v) + p)]
    if kind == 2:
        a, b, c, d = rng.randint(2, 9), rng.randint(2, 9), rng.randint(2, 9), rng.randint(1, 9)
        v = a + b * c - d
        return f"What is {a} + {b} × {c} − {d}?", str(v), [str((a + b) * c - d), str(a + b * (c - d)), str(v + 2), str(a + b + c - d)]
    if kind == 3:
        n = rng.randint(1050, 9949)
        r = round(n, -2)
        return f"Round {n:,} to the nearest hundred.", f"{r:,}", [f"{round(n, -3):,}" if round(n, -3) != r else f"{r + 100:,}", f"{r - 100:,}", f"{round(n, -1):,}", f"{r + 100:,}"]
    a, b = rng.sample([4, 6, 8, 9, 10, 12, 14, 15, 18], 2)
    from math import gcd
    lcm = a * b // gcd(a, b)
    return f"What is the least common multiple of {a} and {b}?", str(lcm), [str(a * b) if a * b != lcm else str(lcm * 2), str(gcd(a, b)), str(lcm + a), str(a + b)]


def q_physics(rng):
    """One-formula mechanics and circuits; distractors invert or misuse the formula."""
    kind = rng.randrange(6)
    if kind == 0:
        m, a = rng.randint(2, 20), rng.randint(2, 9)
        return f"{article(m).capitalize()} {m} kg cart accelerates at {a} m/s². What net force acts on it?", f"{m * a} N", [f"{num(round(m / a, 2))} N", f"{m + a} N", f"{num(round(a / m, 2))} N", f"{2 * m * a} N"]
    if kind == 1:
        t, v = rng.randint(2, 6), rng.choice([45, 50, 60, 75, 80, 90])
        return f"A car travels {t * v} km in {t} hours. What is its average speed?", f"{v} km/h", [f"{t * v * t} km/h", f"{v + t} km/h", f"{num(round(t / (t * v), 3))} km/h", f"{2 * v} km/h"]
    if kind == 2:
        m, v = rng.choice([2, 4, 6, 8, 10]), rng.randint(2, 10)
        ke = m * v * v // 2
        return f"What is the kinetic energy of {article(m)} {m} kg ball moving at {v} m/s?", f"{ke} J", [f"{m * v * v} J", f"{m * v // 2} J", f"{m * v} J", f"{ke + m} J"]
    if kind == 3:
        r, i = rng.choice([2, 4, 5, 10, 12, 20, 50]), rng.choice([2, 3, 4, 5, 6])
        return f"{article(r).capitalize()} {r} Ω resistor carries a current of {i} A. What is the voltage across it?", f"{r * i} V", [f"{num(round(r / i, 2))} V", f"{num(round(i / r, 2))} V", f"{r + i} V", f"{r * i * i} V"]
    if kind == 4:
        vol, d = rng.choice([5, 10, 20, 25, 40]), rng.choice([2, 3, 4, 8])
        return f"An object has a mass of {vol * d} g and a volume of {vol} cm³. What is its density?", f"{d} g/cm³", [f"{vol * d * vol} g/cm³", f"{num(round(1 / d, 3))} g/cm³", f"{vol * d + vol} g/cm³", f"{d * 2} g/cm³"]
    t, p = rng.choice([2, 4, 5, 10, 20]), rng.choice([25, 50, 60, 100, 150])
    return f"A motor does {t * p} J of work in {t} s. What is its power output?", f"{p} W", [f"{t * p * t} W", f"{t * p + t} W", f"{num(round(t / (t * p), 3))} W", f"{2 * p} W"]


MOLAR = [("H₂O", 18.0), ("CO₂", 44.0), ("NaCl", 58.5), ("CH₄", 16.0), ("NH₃", 17.0), ("O₂", 32.0), ("C₆H₁₂O₆", 180.0),
         ("H₂SO₄", 98.0), ("CaCO₃", 100.0), ("N₂", 28.0), ("HCl", 36.5), ("NaOH", 40.0)]


def q_chem(rng):
    """Molar masses and mole counts for common compounds."""
    formula, mm = rng.choice(MOLAR)
    if rng.random() < 0.5:
        return (f"Using H = 1, C = 12, N = 14, O = 16, Na = 23, S = 32, Cl = 35.5 and Ca = 40, what is the molar mass of {formula}?",
                f"{num(mm)} g/mol", [f"{num(mm + 2)} g/mol", f"{num(mm - 2)} g/mol", f"{num(mm * 2)} g/mol", f"{num(mm + 16)} g/mol"])
    n = rng.choice([2, 3, 4, 5, 0.5])
    mass = mm * n
    return (f"How many moles are in {num(mass)} g of {formula} (molar mass {num(mm)} g/mol)?", f"{num(n)} mol",
            [f"{num(round(mass * mm, 1))} mol", f"{num(n * 2)} mol", f"{num(n + 1)} mol", f"{num(round(n / 2, 2))} mol"])


def q_binary(rng):
    """Binary and hexadecimal conversions."""
    kind = rng.randrange(3)
    n = rng.randint(9, 250)
    if kind == 0:
        return f"What is the decimal value of the binary number {n:b}?", str(n), [str(n + 1), str(n * 2), str(n - 2), str(int(f'{n:b}'[::-1], 2)) if int(f'{n:b}'[::-1], 2) != n else str(n + 4)]
    if kind == 1:
        alts = [f"{n + 1:b}", f"{n * 2:b}", f"{n - 1:b}", f"{n ^ 4:b}"]
        return f"What is {n} written in binary?", f"{n:b}", alts
    return f"What is the decimal value of the hexadecimal number 0x{n:X}?", str(n), [str(int(f'{n:X}', 10)) if f'{n:X}'.isdigit() and int(f'{n:X}') != n else str(n + 16), str(n - 16), str(n + 1), str(n * 16)]


def q_capital(rng):
    """Capitals, with the largest city as the tempting wrong answer where there is one."""
    country, capital, region, trap = rng.choice(CAPITALS)
    same = [c for _, c, r, _ in CAPITALS if r == region and c != capital]
    cands = ([trap] if trap else []) + rng.sample(same, len(same))
    return rng.choice([f"What is the capital of {country}?", f"Which city is the capital of {country}?"]), capital, cands


MMLU_COMPUTED = {"high_school_mathematics": q_hs_math, "elementary_mathematics": q_elem_math, "high_school_physics": q_physics,
                 "high_school_geography": q_capital}


def make_mmlu(seed, taken):
    """240 items, 24 per subject, correct letters balanced 60/60/60/60."""
    rng = rng_for(seed, "mmlu")
    items = []
    subjects = ["high_school_biology", "high_school_world_history", "astronomy", "nutrition", "high_school_chemistry",
                "college_computer_science", "high_school_mathematics", "elementary_mathematics", "high_school_physics", "high_school_geography"]
    for subject in subjects:
        pool = []
        for q, a, d in MMLU_FACTS.get(subject, []):
            pool.append((q, a, d))
        maker = {"high_school_chemistry": q_chem, "college_computer_science": q_binary}.get(subject, MMLU_COMPUTED.get(subject))
        while len(pool) < 24:
            q, a, d = maker(rng)
            if len({a, *d}) < 4 or norm(q) in taken or any(norm(q) == norm(p[0]) for p in pool):
                continue  # a draw whose slips coincide with the answer, or a repeated question
            pool.append((q, a, d))
        for q, a, d in pool[:24]:
            taken.add(norm(q))
            items.append((subject, q, a, distinct_choices(a, d)))
    rng.shuffle(items)
    letters = [i % 4 for i in range(len(items))]
    rng.shuffle(letters)
    out = []
    for n, ((subject, q, a, d), pos) in enumerate(zip(items, letters), 1):
        choices = list(d)
        rng.shuffle(choices)
        choices.insert(pos, a)
        out.append({"id": f"mmlu-{n:04d}", "subject": subject, "question": q, "choices": choices, "answer": pos})
    return out


# -----------------------------------------------------------------------------
# Eval: GSM8K-style word problems, several steps each, "#### N" on the last line.


def gsm_item(rng):
    """One multi-step problem as (question, solution lines, integer answer); a draw whose numbers
    would not divide evenly is redrawn, so every answer is a whole number."""
    name = rng.choice(NAMES)
    kind = rng.randrange(16)
    if kind == 0:
        batches, per, sold, price, cheap = rng.randint(3, 8), rng.choice([12, 18, 24]), 0, rng.choice([2, 3, 4]), 1
        total = batches * per
        sold = total - rng.randint(5, 15)
        left = total - sold
        rev = sold * price + left * cheap
        q = (f"A bakery makes {batches} batches of {per} muffins. It sells {sold} muffins at ${price} each and sells the rest "
             f"at the end of the day for ${cheap} each. How much money does the bakery make from the muffins?")
        return q, [f"The bakery makes {batches} × {per} = {total} muffins.", f"Full-price sales bring in {sold} × ${price} = ${num(sold * price)}.",
                   f"There are {total} − {sold} = {left} muffins left, which bring in {left} × ${cheap} = ${left * cheap}.",
                   f"In total the bakery makes ${num(sold * price)} + ${left * cheap} = ${num(rev)}."], rev
    if kind == 1:
        adults, kids, pa, pk, cost = rng.randint(40, 180), rng.randint(30, 150), rng.choice([8, 10, 12, 15]), rng.choice([4, 5, 6]), rng.choice([300, 450, 600])
        income = adults * pa + kids * pk
        q = (f"A school play sells {adults} adult tickets at ${pa} each and {kids} child tickets at ${pk} each. "
             f"The costumes and set cost ${cost}. How much profit does the play make?")
        return q, [f"Adult tickets bring in {adults} × ${pa} = ${num(adults * pa)}.", f"Child tickets bring in {kids} × ${pk} = ${num(kids * pk)}.",
                   f"Total income is ${num(adults * pa)} + ${num(kids * pk)} = ${num(income)}.", f"Profit is ${num(income)} − ${cost} = ${num(income - cost)}."], income - cost
    if kind == 2:
        km, days, per100, price = rng.choice([20, 25, 30, 40]), rng.choice([4, 5]), rng.choice([5, 6, 8]), rng.choice([2, 3])
        week = 2 * km * days
        litres = week * per100 // 100
        q = (f"{name} drives {km} km to work and {km} km back, {days} days a week. The car uses {per100} litres of fuel per 100 km, "
             f"and fuel costs ${price} per litre. How much does {name} spend on fuel for commuting each week?")
        if week * per100 % 100:
            return gsm_item(rng)
        return q, [f"Each day is {km} × 2 = {2 * km} km, so a week is {2 * km} × {days} = {week} km.",
                   f"That uses {week} ÷ 100 × {per100} = {litres} litres.", f"The cost is {litres} × ${price} = ${litres * price}."], litres * price
    if kind == 3:
        rows, plants, each, give = rng.randint(3, 8), rng.randint(4, 10), rng.randint(6, 15), rng.choice([2, 3, 4])
        total = rows * plants * each
        if total % give:
            return gsm_item(rng)
        q = (f"{name} has {rows} rows of tomato plants with {plants} plants in each row. Each plant produces {each} tomatoes. "
             f"{name} gives away 1/{give} of the tomatoes. How many tomatoes does {name} keep?")
        return q, [f"There are {rows} × {plants} = {rows * plants} plants.", f"They produce {rows * plants} × {each} = {num(total)} tomatoes.",
                   f"{name} gives away {num(total)} ÷ {give} = {num(total // give)} tomatoes.", f"{name} keeps {num(total)} − {num(total // give)} = {num(total - total // give)} tomatoes."], total - total // give
    if kind == 4:
        shirts, sp, shoes, coupon = rng.randint(2, 5), rng.choice([12, 15, 18, 20]), rng.choice([40, 60, 80]), rng.choice([10, 20])
        total = shirts * sp + shoes - coupon
        if total % 2:
            return gsm_item(rng)
        q = (f"{name} and a friend buy {shirts} shirts at ${sp} each and a pair of shoes for ${shoes}. They use a ${coupon} coupon "
             f"and split the bill equally. How much does each person pay?")
        return q, [f"The shirts cost {shirts} × ${sp} = ${shirts * sp}.", f"With the shoes the total is ${shirts * sp} + ${shoes} = ${shirts * sp + shoes}.",
                   f"After the coupon it is ${shirts * sp + shoes} − ${coupon} = ${total}.", f"Each person pays ${total} ÷ 2 = ${total // 2}."], total // 2
    if kind == 5:
        wage, hours = rng.choice([16, 18, 20, 22, 24]), rng.randint(42, 52)
        over = hours - 40
        pay = 40 * wage + over * wage * 3 // 2
        if wage * 3 % 2:
            return gsm_item(rng)
        q = (f"{name} earns ${wage} an hour and is paid 1.5 times that rate for every hour over 40 in a week. "
             f"Last week {name} worked {hours} hours. How much did {name} earn?")
        return q, [f"Regular pay is 40 × ${wage} = ${num(40 * wage)}.", f"The overtime rate is ${wage} × 1.5 = ${wage * 3 // 2} per hour.",
                   f"Overtime is {hours} − 40 = {over} hours, paying {over} × ${wage * 3 // 2} = ${over * wage * 3 // 2}.",
                   f"Total pay is ${num(40 * wage)} + ${over * wage * 3 // 2} = ${num(pay)}."], pay
    if kind == 6:
        wd, we, weeks = rng.choice([10, 15, 20, 25]), rng.choice([30, 40, 50]), rng.randint(2, 6)
        per_week = 5 * wd + 2 * we
        pages = per_week * weeks
        q = (f"{name} reads {wd} pages on each weekday and {we} pages on each day of the weekend. "
             f"How many weeks will it take {name} to read a {num(pages)}-page book?")
        return q, [f"On weekdays {name} reads 5 × {wd} = {5 * wd} pages.", f"On the weekend {name} reads 2 × {we} = {2 * we} pages.",
                   f"That is {5 * wd} + {2 * we} = {per_week} pages a week.", f"The book takes {num(pages)} ÷ {per_week} = {weeks} weeks."], weeks
    if kind == 7:
        fill, leak, minutes = rng.choice([12, 15, 20, 25]), rng.choice([2, 3, 5]), rng.randint(20, 90)
        cap = (fill - leak) * minutes
        q = (f"A water tank holds {num(cap)} litres. A pump fills it at {fill} litres per minute, but a leak loses {leak} litres per minute. "
             f"How many minutes does it take to fill the empty tank?")
        return q, [f"The tank gains {fill} − {leak} = {fill - leak} litres each minute.", f"It takes {num(cap)} ÷ {fill - leak} = {minutes} minutes to fill."], minutes
    if kind == 8:
        base, flour, people, bag = 4, rng.choice([250, 300, 350, 400]), rng.choice([12, 16, 20, 24, 28]), 1000
        need = flour * people // base
        bags = -(-need // bag)
        q = (f"A bread recipe for {base} people uses {flour} g of flour. {name} is baking for {people} people. "
             f"Flour comes in 1 kg bags. How many bags does {name} need to buy?")
        return q, [f"{people} people is {people} ÷ {base} = {people // base} times the recipe.", f"That needs {people // base} × {flour} = {num(need)} g of flour.",
                   f"Each bag holds 1,000 g, so {name} needs {num(need)} ÷ 1,000 = {need / 1000:g}" + (f", rounded up to {bags} bags." if need % 1000 else " bags.")], bags
    if kind == 9:
        students = rng.choice([24, 28, 30, 32, 36, 40])
        bus = rng.choice([2, 3, 4])
        if students % bus:
            return gsm_item(rng)
        rest = students - students // bus
        if rest % 2:
            return gsm_item(rng)
        walk = rest // 2
        q = (f"In a class of {students} students, 1/{bus} take the bus to school. Half of the remaining students walk, "
             f"and the rest are driven. How many students are driven to school?")
        return q, [f"{students} ÷ {bus} = {students // bus} students take the bus.", f"That leaves {students} − {students // bus} = {rest} students.",
                   f"Half of them, {walk}, walk, so {rest} − {walk} = {rest - walk} are driven."], rest - walk
    if kind == 10:
        fee, allow, per, used = rng.choice([25, 30, 35]), rng.choice([5, 10, 15]), rng.choice([4, 5, 10]), rng.randint(2, 8)
        monthly = fee + used * per
        q = (f"{name}'s phone plan costs ${fee} a month and includes {allow} GB of data. Each extra GB costs ${per}. "
             f"If {name} uses {allow + used} GB every month, how much does the plan cost for a year?")
        return q, [f"{name} uses {allow + used} − {allow} = {used} extra GB a month.", f"The extra data costs {used} × ${per} = ${used * per} a month.",
                   f"Each month costs ${fee} + ${used * per} = ${monthly}.", f"A year costs 12 × ${monthly} = ${num(12 * monthly)}."], 12 * monthly
    if kind == 11:
        a, weeks, item = rng.choice([15, 20, 25, 30, 40]), rng.randint(8, 26), rng.choice([120, 180, 250, 300, 350])
        if a * weeks <= item:
            return gsm_item(rng)
        q = (f"{name} saves ${a} every week for {weeks} weeks and then buys a bike that costs ${item}. "
             f"How much money does {name} have left?")
        return q, [f"{name} saves {weeks} × ${a} = ${num(a * weeks)}.", f"After the bike, {name} has ${num(a * weeks)} − ${item} = ${num(a * weeks - item)} left."], a * weeks - item
    if kind == 12:
        cows, chickens = rng.randint(5, 30), rng.randint(10, 60)
        heads, legs = cows + chickens, 4 * cows + 2 * chickens
        q = f"A farm has cows and chickens. Together they have {heads} heads and {legs} legs. How many cows are there?"
        return q, [f"If all {heads} animals were chickens, there would be {heads} × 2 = {2 * heads} legs.",
                   f"There are {legs} − {2 * heads} = {legs - 2 * heads} extra legs.",
                   f"Each cow adds 2 extra legs, so there are {legs - 2 * heads} ÷ 2 = {cows} cows."], cows
    if kind == 13:
        stock, pct, more = rng.choice([200, 240, 400, 500, 800, 1200]), rng.choice([10, 20, 25, 30]), rng.randint(15, 60)
        monday = stock * pct // 100
        left = stock - monday - more
        q = (f"A shop has {num(stock)} notebooks. On Monday it sells {pct}% of them, and on Tuesday it sells {more} more. "
             f"How many notebooks are left?")
        return q, [f"On Monday it sells {pct}% of {num(stock)} = {monday}.", f"After Monday there are {num(stock)} − {monday} = {num(stock - monday)} left.",
                   f"After Tuesday there are {num(stock - monday)} − {more} = {num(left)} left."], left
    if kind == 14:
        d, k, w = rng.choice([3, 4, 5, 6]), rng.choice([1, 2]), rng.randint(4, 10)
        dists = [d + k * i for i in range(w)]
        q = (f"{name} runs {d} km in the first week of training and adds {k} km each week after that. "
             f"How many kilometres does {name} run in total over {w} weeks?")
        return q, [f"The weekly distances are {', '.join(map(str, dists))} km.", f"Their sum is {sum(dists)} km."], sum(dists)
    people, slices, price = rng.randint(9, 30), rng.choice([2, 3]), rng.choice([11, 12, 14])
    pizzas = -(-people * slices // 8)
    q = (f"{people} people are coming to a party and each will eat {slices} slices of pizza. A pizza has 8 slices and costs ${price}. "
         f"How much will the pizzas cost?")
    return q, [f"They need {people} × {slices} = {people * slices} slices.", f"{people * slices} ÷ 8 = {people * slices / 8:g}, so they must buy {pizzas} pizzas.",
               f"The pizzas cost {pizzas} × ${price} = ${pizzas * price}."], pizzas * price


def make_gsm8k(seed, taken):
    """160 problems; commas group thousands in the working, never in the final '#### N'."""
    rng = rng_for(seed, "gsm8k")
    out = []
    while len(out) < 160:
        q, lines, ans = gsm_item(rng)
        if norm(q) in taken:
            continue
        taken.add(norm(q))
        out.append({"id": f"gsm-{len(out) + 1:04d}", "question": q, "answer": "\n".join(lines) + f"\n#### {ans}"})
    return out


# -----------------------------------------------------------------------------
# Eval: IFEval-format prompts. Each instruction id has a phrasing in plain words and the
# keyword arguments lm-eval's IFEval registry expects for it (unused arguments left out).

IF_TASKS = TEXT["IF_TASKS"]
IF_FILL = TEXT["IF_FILL"]
IF_KEYWORDS = ["community", "patience", "sunlight", "journey", "balance", "curious", "window", "harmony", "careful", "memory", "garden", "bridge"]
IF_FORBIDDEN = ["very", "really", "amazing", "basically", "literally", "awesome", "thing", "nice"]
IF_END = ["Is there anything else I can help with?", "Let me know if you have additional questions.", "Peace and love.", "See you next time."]
IF_CONFLICTS = [set(pair) for pair in TEXT["IF_CONFLICTS"]]  # pairs that contradict each other


def if_instruction(iid, rng):
    """(kwargs, sentence) for one instruction id, phrased as a person would ask."""
    if iid == "punctuation:no_comma":
        return {}, rng.choice(["Do not use any commas in your response.", "Please avoid commas entirely.", "Your answer must not contain a single comma."])
    if iid == "change_case:english_lowercase":
        return {}, rng.choice(["Write everything in English using only lowercase letters.", "Please respond in English, in all lowercase, with no capital letters anywhere."])
    if iid == "change_case:english_capital":
        return {}, rng.choice(["Write your whole answer in English using capital letters only.", "Respond entirely in English and in ALL CAPS."])
    if iid == "detectable_format:number_bullet_lists":
        n = rng.randint(2, 6)
        return {"num_bullets": n}, rng.choice([f"Use exactly {n} bullet points, written as markdown bullets like:\n* First point",
                                               f"Organise the answer as exactly {n} markdown bullet points that start with an asterisk."])
    if iid == "detectable_format:title":
        return {}, rng.choice(["Give it a title wrapped in double angular brackets, for example <<a title>>.", "Start with a title in double angular brackets, such as <<my title>>."])
    if iid == "detectable_format:json_format":
        return {}, rng.choice(["Format the entire output as JSON; you may wrap it in markdown code fences.", "Your whole response must be valid JSON."])
    if iid == "keywords:existence":
        kws = rng.sample(IF_KEYWORDS, rng.choice([1, 2]))
        return {"keywords": kws}, f"Make sure to include the word{'s' if len(kws) > 1 else ''} " + " and ".join(f"\"{k}\"" for k in kws) + "."
    if iid == "keywords:forbidden_words":
        ws = rng.sample(IF_FORBIDDEN, rng.choice([1, 2]))
        return {"forbidden_words": ws}, "Do not use the word" + ("s " if len(ws) > 1 else " ") + " or ".join(f"\"{w}\"" for w in ws) + "."
    if iid == "length_constraints:number_words":
        rel = rng.choice(["less than", "at least"])
        n = rng.choice([50, 80, 100, 150]) if rel == "less than" else rng.choice([120, 200, 300, 400])
        return {"relation": rel, "num_words": n}, (f"Keep it under {n} words." if rel == "less than" else f"The response should be at least {n} words long.")
    if iid == "length_constraints:number_paragraphs":
        n = rng.randint(2, 5)
        return {"num_paragraphs": n}, f"Write exactly {n} paragraphs and separate them with the markdown divider ***."
    if iid == "startend:end_checker":
        p = rng.choice(IF_END)
        return {"end_phrase": p}, f"End your response with the exact phrase \"{p}\", with nothing after it."
    if iid == "startend:quotation":
        return {}, rng.choice(["Put your entire response inside double quotation marks.", "Wrap the whole answer in double quotes."])
    if iid == "detectable_content:postscript":
        return {"postscript_marker": "P.S."}, rng.choice(["Finish with a postscript that starts with P.S.", "Add a postscript at the end, beginning with P.S."])
    raise ValueError(iid)


IF_IDS = TEXT["IF_IDS"]


def make_ifeval(seed, taken):
    """240 prompts with one to three compatible instructions each."""
    rng = rng_for(seed, "ifeval")
    out, key = [], 1000
    while len(out) < 240:
        task = rng.choice(IF_TASKS)
        base = re.sub(r"\{(\w)\}", lambda m: rng.choice(IF_FILL[m.group(1)]), task)
        ids = []
        for _ in range(rng.choices([1, 2, 3], [4, 4, 2])[0]):
            cand = rng.choice(IF_IDS)
            if cand not in ids and not any({cand, other} in IF_CONFLICTS for other in ids):
                ids.append(cand)
        ids.sort(key=lambda i: i == "combination:repeat_prompt")  # the repeat instruction comes last
        kwargs, sentences = [], []
        for iid in ids:
            if iid == "combination:repeat_prompt":
                continue
            kw, sentence = if_instruction(iid, rng)
            kwargs.append(kw)
            sentences.append(sentence)
        request = " ".join([base] + sentences)
        prompt = request
        if "combination:repeat_prompt" in ids:
            if "," in request and "punctuation:no_comma" in ids:
                continue
            kwargs.append({"prompt_to_repeat": request})
            prompt = (request + " Before you answer, repeat the request above word for word without changing anything, then give your answer. "
                      "Do not say anything before the repeated request, and do not repeat this sentence.")
        if norm(prompt) in taken:
            continue
        taken.add(norm(prompt))
        key += rng.randint(1, 9)
        out.append({"key": key, "prompt": prompt, "instruction_id_list": ids, "kwargs": kwargs})
    return out


# -----------------------------------------------------------------------------
# Eval: open-ended generation prompts for the repetition score

GEN_TEMPLATES = TEXT["GEN_TEMPLATES"]


def make_gen_prompts(seed, taken):
    """120 distinct open-ended prompts."""
    rng = rng_for(seed, "gen_prompts")
    combos = [t.format(x=x) for t, xs in GEN_TEMPLATES for x in xs]
    rng.shuffle(combos)
    out = []
    for text in combos:
        if norm(text) in taken:
            continue
        taken.add(norm(text))
        out.append({"id": f"gen-{len(out) + 1:04d}", "messages": [{"role": "user", "content": text}]})
        if len(out) == 120:
            break
    assert len(out) == 120, f"only {len(out)} distinct generation prompts"
    return out


# -----------------------------------------------------------------------------
# Main

parser = argparse.ArgumentParser(description="Write the embedded-scale sample data (battles, general mix, eval items)")
parser.add_argument("--out", type=Path, default=Path("resources/sample"), help="output folder")
parser.add_argument("--seed", type=int, default=0, help="seed of every draw; 0 is the shipped sample")

if __name__ == "__main__":
    args = parser.parse_args()
    out = args.out
    general_mix = make_general_mix(args.seed)
    taken = {norm(m["content"]) for row in general_mix for m in row["messages"]}  # eval items must not meet these
    files = {
        "battles.jsonl": make_battles(args.seed),
        "battles_arena.jsonl": make_arena(args.seed),
        "general_mix.jsonl": general_mix,
        "eval/mmlu.jsonl": make_mmlu(args.seed, taken),
        "eval/gsm8k.jsonl": make_gsm8k(args.seed, taken),
        "eval/ifeval.jsonl": make_ifeval(args.seed, taken),
        "eval/gen_prompts.jsonl": make_gen_prompts(args.seed, taken),
    }
    for name, rows in files.items():
        write_jsonl(out / name, rows)
        print(f"{out / name}: {len(rows)} rows, {(out / name).stat().st_size:,} bytes")
