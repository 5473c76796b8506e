"""Write the sample data that the embedded scale ships in resources/sample.

The embedded scale runs the whole lineage on two CPU cores, so it needs small stand-ins for
the private battle export, the public general SFT mixture and the benchmarks. Every text here
comes from the templates and word banks in this file, drawn with a fixed seed: a rerun gives
byte-identical files, and nothing is downloaded or copied from a public dataset.

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
python workflow/scripts/make_sample_data.py --out resources/sample
python workflow/scripts/make_sample_data.py --out /tmp/sample --seed 7   # another draw, same counts
"""

import argparse
import json
import random
import re
from collections import Counter
from datetime import datetime, timedelta, timezone
from fractions import Fraction
from pathlib import Path

OWN_MODEL = "ember-stage1"
OPPONENTS = [
    "aurora-70b-chat",
    "kestrel-8x22b",
    "granite-lark-34b",
    "sable-13b-instruct",
    "meridian-405b",
    "tern-9b-it",
]


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

SUBJECTS = [
    {
        "key": "py_dedupe",
        "topic": "programming",
        "prompts": [
            "How do I remove duplicates from a Python list but keep the original order?",
            "What's the cleanest way to dedupe a list of {{things}} in Python without changing the order?",
        ],
        "params": [
            {"things": "email addresses", "var": "emails", "sample": '["ana@example.com", "li@example.org", "ana@example.com"]'},
            {"things": "user IDs", "var": "user_ids", "sample": "[1042, 77, 1042, 305, 77]"},
            {"things": "tags", "var": "tags", "sample": '["python", "sql", "python", "bash"]'},
        ],
        "intro": [
            "The simplest order-preserving approach is `dict.fromkeys`, because dictionaries keep insertion order (guaranteed since Python 3.7).",
            "You can't use `set()` on its own here, since a set throws away the original order. Keep track of what you've already seen instead.",
        ],
        "sections": [
            ("code", "Quick solution", "python",
             "{{var}} = {{sample}}\nunique = list(dict.fromkeys({{var}}))\nprint(unique)  # first occurrence of each item, original order",
             "`dict.fromkeys` creates one key per distinct item in first-seen order, and `list()` turns the keys back into a list."),
            ("code", "Explicit loop with a set", "python",
             "def dedupe(items):\n    seen = set()\n    result = []\n    for item in items:\n        if item not in seen:\n            seen.add(item)\n            result.append(item)\n    return result",
             "This version is easy to extend, for example to compare items case-insensitively by checking `item.lower()` against the set."),
            ("ul", "Things to watch out for", [
                "Hashable items only: both approaches need items that can be dictionary keys, so lists of lists or dicts need a key function.",
                "Performance: each membership check is O(1) on average, so the whole pass is O(n).",
                "Avoid `list.count` or `in` on a list inside the loop: that makes the job O(n²) and it gets slow past a few thousand items.",
            ]),
            ("code", "Unhashable items such as dicts", "python",
             "def dedupe_by(items, key):\n    seen = set()\n    return [x for x in items if not (key(x) in seen or seen.add(key(x)))]\n\nrecords = dedupe_by(records, key=lambda r: r[\"id\"])",
             None),
        ],
        "outro": [
            "For most code, `list(dict.fromkeys(items))` is the idiom to reach for.",
            "If you already use pandas, `pd.Series(items).drop_duplicates().tolist()` does the same thing.",
        ],
        "wrong": "Just call `list(set({{var}}))`. Sets remember the order in which items were added, so the result keeps the original order.",
    },
    {
        "key": "py_csv_average",
        "topic": "programming",
        "prompts": [
            "I have a CSV file called {{file}} with a column named {{col}}. How can I compute the average of that column in Python?",
            "Write Python code that reads {{file}} and prints the mean of the {{col}} column, skipping empty cells.",
        ],
        "params": [
            {"file": "sales.csv", "col": "amount"},
            {"file": "grades.csv", "col": "score"},
            {"file": "sensor_log.csv", "col": "temperature"},
        ],
        "intro": [
            "Here are two ways: the standard-library `csv` module, which needs no installs, and pandas, which is shorter if you already use it.",
            "The standard library handles this fine. Read the file with `csv.DictReader`, convert the column to numbers and skip the cells that are empty.",
        ],
        "sections": [
            ("code", "Standard library only", "python",
             'import csv\n\ntotal = 0.0\ncount = 0\nwith open("{{file}}", newline="", encoding="utf-8") as f:\n    for row in csv.DictReader(f):\n        value = row["{{col}}"].strip()\n        if not value:\n            continue  # skip empty cells\n        total += float(value)\n        count += 1\n\nif count:\n    print(f"Average {{col}}: {total / count:.2f} ({count} rows)")\nelse:\n    print("No numeric values found")',
             "`DictReader` uses the header row for keys, so `row[\"{{col}}\"]` works wherever the column sits."),
            ("code", "With pandas", "python",
             'import pandas as pd\n\ndf = pd.read_csv("{{file}}")\nmean_value = pd.to_numeric(df["{{col}}"], errors="coerce").mean()\nprint(f"Average {{col}}: {mean_value:.2f}")',
             "`errors=\"coerce\"` turns anything that isn't a number into NaN, and `.mean()` skips NaN by default."),
            ("ul", "Common pitfalls", [
                "Thousands separators: values like \"1,250\" make `float()` fail; strip the commas first or pass `thousands=\",\"` to `read_csv`.",
                "Encoding: files saved from Excel are sometimes `utf-8-sig`; if the first column name looks odd, that's why.",
                "Division by zero: check that at least one value was read before dividing.",
            ]),
        ],
        "outro": [
            "If the file is large, the `csv` version streams row by row and keeps memory use flat.",
            "Beyond a single average, pandas pays off quickly: `df[\"{{col}}\"].describe()` gives count, mean, spread and quartiles at once.",
        ],
        "wrong": "Use `sum(row[\"{{col}}\"] for row in rows) / len(rows)`. The csv module converts numeric columns to floats for you, so no conversion is needed.",
    },
    {
        "key": "py_word_count",
        "topic": "programming",
        "prompts": [
            "How do I find the {{n}} most common words in a text file with Python?",
            "Can you show me a Python script that counts word frequencies in {{file}} and prints the top {{n}}?",
        ],
        "params": [{"n": 10, "file": "notes.txt"}, {"n": 5, "file": "speech.txt"}, {"n": 20, "file": "novel.txt"}],
        "intro": [
            "`collections.Counter` does the heavy lifting; the only real work is splitting the text into words sensibly.",
            "Read the file, normalise the words (lowercase, no punctuation) and let `Counter.most_common` rank them.",
        ],
        "sections": [
            ("code", "Script", "python",
             'import re\nfrom collections import Counter\n\nwith open("{{file}}", encoding="utf-8") as f:\n    text = f.read().lower()\n\nwords = re.findall(r"[a-z\']+", text)\ncounts = Counter(words)\n\nfor word, n in counts.most_common({{n}}):\n    print(f"{word:<15} {n}")',
             "The pattern keeps letters and apostrophes, so \"don't\" stays one word and punctuation disappears."),
            ("code", "Ignoring stop words", "python",
             'STOP_WORDS = {"the", "and", "a", "to", "of", "in", "is", "it", "that"}\ncounts = Counter(w for w in words if w not in STOP_WORDS)',
             "Without this, the top of the list is almost always \"the\", \"and\" and \"of\"."),
            ("ul", "Notes", [
                "Big files: read line by line and call `counts.update(...)` for each line instead of loading everything at once.",
                "Accented letters: `[a-z']+` drops them; `\\w+` matches Unicode letters in Python 3.",
                "Ties: `most_common` lists equal counts in the order the words were first seen.",
            ]),
        ],
        "outro": [
            "That's all you need for a quick frequency table.",
            "For a chart, pass `counts.most_common({{n}})` to matplotlib's `barh`.",
        ],
        "wrong": "Split the text with `text.split()` and call `words.count(w)` for every word. Python caches the counts, so this is just as fast as a Counter.",
    },
    {
        "key": "py_sort_dicts",
        "topic": "programming",
        "prompts": [
            "How do I sort a list of dictionaries by a key in Python, say by {{key}}?",
            "I have a list of dicts representing {{things}}. How can I sort them by {{key}} descending, and then by name?",
        ],
        "params": [
            {"key": "age", "things": "people", "var": "people", "ex": '{"name": "Ana", "age": 34}, {"name": "Ben", "age": 27}, {"name": "Cleo", "age": 34}'},
            {"key": "price", "things": "products", "var": "products", "ex": '{"name": "lamp", "price": 40}, {"name": "desk", "price": 180}, {"name": "chair", "price": 40}'},
        ],
        "intro": [
            "Use `sorted()` with a `key` function; `operator.itemgetter` is the idiomatic choice for dictionaries.",
            "`sorted` takes a `key` argument that says what to compare. For dicts that's usually a lambda or `itemgetter`.",
        ],
        "sections": [
            ("code", "Basic sort", "python",
             'from operator import itemgetter\n\n{{var}} = [{{ex}}]\n\nby_{{key}} = sorted({{var}}, key=itemgetter("{{key}}"))\n# same thing: sorted({{var}}, key=lambda d: d["{{key}}"])',
             None),
            ("code", "Descending, then by name", "python",
             'result = sorted({{var}}, key=lambda d: (-d["{{key}}"], d["name"]))',
             "Negating works for numbers. For strings, sort twice instead: Python's sort is stable, so sort by the secondary key first and then by the primary key with `reverse=True`."),
            ("code", "Stable two-pass sort", "python",
             'result = sorted({{var}}, key=itemgetter("name"))\nresult.sort(key=itemgetter("{{key}}"), reverse=True)',
             None),
            ("ul", "Gotchas", [
                "Missing keys: use `d.get(\"{{key}}\", 0)` so one incomplete dict doesn't raise `KeyError`.",
                "In place or not: `list.sort()` sorts in place and returns `None`, while `sorted()` returns a new list.",
                "Mixed types: comparing `None` with numbers raises `TypeError` in Python 3, so clean the data first.",
            ]),
        ],
        "outro": [
            "With `key=` and the stability guarantee you can express almost any ordering.",
            "`itemgetter` is also a little faster than a lambda on large lists.",
        ],
        "wrong": "Dictionaries compare by their first key, so a plain `sorted({{var}})` already orders them by name and then by {{key}}.",
    },
    {
        "key": "py_retry",
        "topic": "programming",
        "prompts": [
            "How can I retry a flaky API call in Python with exponential backoff?",
            "Write a Python decorator that retries a function up to {{n}} times with exponential backoff.",
        ],
        "params": [{"n": 3}, {"n": 5}],
        "intro": [
            "A small decorator covers most cases: catch the transient errors, sleep for a delay that doubles each attempt, and re-raise after the last try.",
            "Exponential backoff means waiting 0.5 s, then 1 s, then 2 s and so on between attempts, with a little random jitter so many clients don't retry in lockstep.",
        ],
        "sections": [
            ("code", "The decorator", "python",
             'import functools\nimport random\nimport time\n\n\ndef retry(max_attempts={{n}}, base_delay=0.5, exceptions=(Exception,)):\n    """Retry the wrapped function with exponential backoff and jitter."""\n    def decorator(func):\n        @functools.wraps(func)\n        def wrapper(*args, **kwargs):\n            for attempt in range(1, max_attempts + 1):\n                try:\n                    return func(*args, **kwargs)\n                except exceptions:\n                    if attempt == max_attempts:\n                        raise\n                    delay = base_delay * 2 ** (attempt - 1)\n                    time.sleep(delay + random.uniform(0, delay / 2))\n        return wrapper\n    return decorator',
             None),
            ("code", "Using it", "python",
             'import requests\n\n@retry(max_attempts={{n}}, exceptions=(requests.ConnectionError, requests.Timeout))\ndef fetch_user(user_id):\n    response = requests.get(f"https://api.example.com/users/{user_id}", timeout=5)\n    response.raise_for_status()\n    return response.json()',
             None),
            ("ul", "What to retry", [
                "Retry: timeouts, dropped connections, HTTP 429 and 5xx responses.",
                "Don't retry: 400, 401, 403 or 404; the next attempt will fail the same way.",
                "Respect `Retry-After`: if the server sends it with a 429, sleep that long instead of your own delay.",
                "Cap the total wait so a user-facing request doesn't hang for minutes.",
            ]),
            ("code", "The library route", "python",
             "from tenacity import retry, stop_after_attempt, wait_exponential\n\n@retry(stop=stop_after_attempt({{n}}), wait=wait_exponential(multiplier=0.5, max=10))\ndef fetch_user(user_id):\n    ...",
             "`tenacity` is well tested and adds logging hooks and per-exception rules if you need them later."),
        ],
        "outro": [
            "Either way, make sure the wrapped operation is safe to repeat; retrying a payment call can charge twice.",
            "Keep the decorator for scripts and reach for `tenacity` in larger services.",
        ],
        "wrong": "Wrap the call in `while True:` with `time.sleep(1)` after each failure. Retrying forever at a fixed interval is the recommended pattern for APIs.",
    },
    {
        "key": "py_nested_index",
        "topic": "programming",
        "prompts": [
            "I'm confused about indexing nested lists in Python. How do I get the third element of the first row of a matrix?",
            "Why does `matrix[0][2]` work on my list of lists but `matrix[0, 2]` gives me an error?",
        ],
        "intro": [
            "A nested list is a list whose elements are lists, so you index it one level at a time: `matrix[0]` is the first row, and `matrix[0][2]` is the third item of that row.",
            "Plain Python lists take one index per pair of brackets. To reach inside a nested list, chain the brackets, as in `matrix[0][2]`.",
        ],
        "sections": [
            ("code", "Example", "python",
             "matrix = [\n    [1, 2, 3],\n    [4, 5, 6],\n    [7, 8, 9],\n]\n\nfirst_row = matrix[0]      # [1, 2, 3]\nvalue = matrix[0][2]       # 3\narr = [10, 20, 30]\nprint(arr[1])              # 20, because indexes start at 0\nprint(matrix[-1][-1])      # 9, negative indexes count from the end",
             "Read `matrix[0][2]` from left to right: take row 0, then take element 2 of that row."),
            ("p", "Why the comma version fails",
             "The expression `matrix[0, 2]` passes the tuple `(0, 2)` as a single index. Lists only accept integers or slices, so Python raises `TypeError: list indices must be integers or slices, not tuple`. NumPy arrays do accept that syntax, which is usually where the habit comes from."),
            ("code", "NumPy version", "python",
             "import numpy as np\n\ngrid = np.array(matrix)\nprint(grid[0, 2])    # 3\nprint(grid[:, 1])    # second column: [2 5 8]",
             None),
            ("ul", "Quick reference", [
                "`arr[1]`: the second element of a flat list.",
                "`matrix[0][2]`: row 0, column 2 of a list of lists.",
                "`[row[1] for row in matrix]`: a whole column from a list of lists.",
                "`matrix[1][:2]`: the first two items of the second row.",
            ]),
        ],
        "outro": [
            "Once you read each `[...]` as one step into the structure, nested indexing stops being confusing.",
            "Mixing up rows and columns is the most common bug here, so print intermediate values when in doubt.",
        ],
        "wrong": "Use `matrix[0, 2]`. Python lists accept comma-separated indexes just like NumPy arrays, and chaining brackets is an older style.",
    },
    {
        "key": "py_find_files",
        "topic": "programming",
        "prompts": [
            "How do I find all {{ext}} files in a folder and its subfolders using Python?",
            "Write a Python script that lists every {{ext}} file under a directory and prints the total size.",
        ],
        "params": [{"ext": ".log"}, {"ext": ".jpg"}, {"ext": ".md"}],
        "intro": [
            "`pathlib` makes this short: `Path.rglob` walks every subfolder for you.",
            "You can use `pathlib` or the older `os.walk`; both search recursively.",
        ],
        "sections": [
            ("code", "With pathlib", "python",
             'from pathlib import Path\n\nroot = Path("data")\nfiles = sorted(root.rglob("*{{ext}}"))\n\ntotal = 0\nfor path in files:\n    size = path.stat().st_size\n    total += size\n    print(f"{size:>12,}  {path}")\n\nprint(f"{len(files)} files, {total / 1_048_576:.1f} MiB in total")',
             None),
            ("ul", "Details", [
                "Recursion: `rglob` searches every subfolder, while `glob(\"*{{ext}}\")` only looks at the top level.",
                "Case: matching is case-sensitive on Linux, so compare `path.suffix.lower()` if some files use capital extensions.",
                "Hidden folders: `.git` and friends are included; skip them with `if any(part.startswith(\".\") for part in path.parts): continue`.",
            ]),
            ("code", "With os.walk", "python",
             'import os\n\nfor dirpath, dirnames, filenames in os.walk("data"):\n    dirnames[:] = [d for d in dirnames if d != "node_modules"]  # prune in place\n    for name in filenames:\n        if name.endswith("{{ext}}"):\n            print(os.path.join(dirpath, name))',
             "`os.walk` lets you prune directories as you go, which matters in big trees."),
        ],
        "outro": [
            "Sorting the results makes the output stable between runs, which helps when you diff it.",
            "For millions of files, `os.scandir` is the fastest building block, but `rglob` is plenty for everyday use.",
        ],
        "wrong": "`os.listdir(\"data\")` already returns the files from every subfolder, so filter that list by extension and you're done.",
    },
    {
        "key": "py_venv",
        "topic": "programming",
        "prompts": [
            "What's the right way to set up a virtual environment for a Python project?",
            "Should I use venv for my Python project, and how do I create one on {{os}}?",
        ],
        "params": [{"os": "Windows"}, {"os": "macOS"}, {"os": "Linux"}],
        "intro": [
            "Give every project its own virtual environment, so its packages don't clash with other projects or with the system Python.",
            "The built-in `venv` module is all you need; there's nothing to install.",
        ],
        "sections": [
            ("code", "Create and activate", "bash",
             "python3 -m venv .venv\n\n# macOS / Linux\nsource .venv/bin/activate\n\n# Windows (PowerShell)\n.venv\\Scripts\\Activate.ps1\n\npython -m pip install --upgrade pip",
             "Once it's active, your prompt shows `(.venv)` and `pip install` puts packages inside the project folder."),
            ("code", "Recording dependencies", "bash",
             "pip install requests pandas\npip freeze > requirements.txt\n\n# on another machine\npip install -r requirements.txt",
             None),
            ("ul", "Habits that save trouble", [
                "Ignore it: add `.venv/` to `.gitignore`; commit `requirements.txt` instead.",
                "Recreate, don't move: a venv has absolute paths baked in, so delete and rebuild it after moving the project.",
                "Editors: VS Code and PyCharm detect a `.venv` folder in the project root automatically.",
                "Run tools through it: `python -m pip` and `python -m pytest` make sure you use the environment's copies.",
            ]),
        ],
        "outro": [
            "Tools like uv or Poetry build on the same idea and add lock files, which is worth it for larger projects.",
            "Run `deactivate` to leave the environment.",
        ],
        "wrong": "Install everything globally with `sudo pip install`. Virtual environments were only needed for Python 2 and are obsolete now.",
    },
    {
        "key": "sql_top_customers",
        "topic": "programming",
        "prompts": [
            "Write a SQL query to get the top {{n}} customers by total order value.",
            "How do I find which customers spent the most? I have a `customers` table and an `{{orders}}` table with `customer_id` and `{{amount}}`.",
        ],
        "params": [
            {"n": 5, "orders": "orders", "amount": "total_amount"},
            {"n": 10, "orders": "sales", "amount": "amount"},
        ],
        "intro": [
            "Join customers to their orders, sum per customer, sort descending and keep the first {{n}} rows.",
            "This is a classic GROUP BY with an ORDER BY on the aggregate.",
        ],
        "sections": [
            ("code", "Query", "sql",
             "SELECT c.customer_id,\n       c.name,\n       SUM(o.{{amount}}) AS total_spent,\n       COUNT(*)          AS order_count\nFROM customers AS c\nJOIN {{orders}} AS o ON o.customer_id = c.customer_id\nGROUP BY c.customer_id, c.name\nORDER BY total_spent DESC\nLIMIT {{n}};",
             None),
            ("ul", "How it works", [
                "JOIN: pairs each order with its customer.",
                "GROUP BY: collapses the orders into one row per customer, and `SUM` adds up their values.",
                "ORDER BY ... DESC: puts the biggest spenders first.",
                "LIMIT: keeps the top {{n}}; SQL Server writes `SELECT TOP {{n}} ...` instead.",
            ]),
            ("code", "Handling ties", "sql",
             "WITH totals AS (\n    SELECT customer_id, SUM({{amount}}) AS total_spent\n    FROM {{orders}}\n    GROUP BY customer_id\n)\nSELECT *\nFROM (\n    SELECT t.*, DENSE_RANK() OVER (ORDER BY total_spent DESC) AS rnk\n    FROM totals AS t\n) AS ranked\nWHERE rnk <= {{n}};",
             "With `LIMIT`, a customer tied with the last place is cut arbitrarily; `DENSE_RANK` keeps everyone who ties."),
            ("ul", "Variations", [
                "Only completed orders: add `WHERE o.status = 'completed'` before `GROUP BY`.",
                "One year: filter with `WHERE o.created_at >= DATE '2025-01-01' AND o.created_at < DATE '2026-01-01'`.",
            ]),
        ],
        "outro": [
            "An index on `{{orders}}(customer_id)` keeps this fast as the table grows.",
            "Swap `SUM` for `AVG` to rank by average order value instead.",
        ],
        "wrong": "Use `SELECT customer_id, MAX({{amount}}) FROM {{orders}} GROUP BY customer_id ORDER BY 2 DESC LIMIT {{n}};`. The largest single order tells you who spent the most overall.",
    },
    {
        "key": "sql_duplicates",
        "topic": "programming",
        "prompts": [
            "How do I find duplicate email addresses in a {{table}} table with SQL?",
            "I need to delete duplicate rows in a {{table}} table but keep the one with the lowest id. How?",
        ],
        "params": [{"table": "users"}, {"table": "contacts"}, {"table": "subscribers"}],
        "intro": [
            "Group by the column that should be unique and keep the groups with more than one row; deleting is the same idea with a join or a window function.",
            "Find them first, look at them, and only then delete, keeping the row with the smallest id.",
        ],
        "sections": [
            ("code", "Find the duplicates", "sql",
             "SELECT email, COUNT(*) AS copies\nFROM {{table}}\nGROUP BY email\nHAVING COUNT(*) > 1\nORDER BY copies DESC;",
             None),
            ("code", "Delete all but the lowest id (PostgreSQL)", "sql",
             "DELETE FROM {{table}} AS t\nUSING {{table}} AS d\nWHERE t.email = d.email\n  AND t.id > d.id;",
             None),
            ("code", "Portable version", "sql",
             "DELETE FROM {{table}}\nWHERE id IN (\n    SELECT id FROM (\n        SELECT id, ROW_NUMBER() OVER (PARTITION BY email ORDER BY id) AS rn\n        FROM {{table}}\n    ) AS numbered\n    WHERE rn > 1\n);",
             "`ROW_NUMBER` numbers the copies of each email from 1, so everything after the first is a duplicate."),
            ("ol", "Do it safely", [
                "Run the SELECT version first and check the count.",
                "Wrap the DELETE in a transaction (`BEGIN; ... COMMIT;`) so you can roll back.",
                "Normalise case if needed: `LOWER(email)` treats Ana@x.com and ana@x.com as the same address.",
                "Add a unique constraint afterwards so duplicates can't come back.",
            ]),
        ],
        "outro": [
            "After the cleanup, `CREATE UNIQUE INDEX ON {{table}} (LOWER(email));` enforces the rule in PostgreSQL.",
            "MySQL doesn't allow a subquery on the table you're deleting from, so wrap it in one more derived table there.",
        ],
        "wrong": "Run `SELECT DISTINCT email FROM {{table}};`. DISTINCT removes the duplicate rows from the table permanently.",
    },
    {
        "key": "sql_running_total",
        "topic": "programming",
        "prompts": [
            "How do I compute a running total of {{amount}} by date in SQL?",
            "Can you explain window functions with an example of a running total of {{amount}} that resets each month?",
        ],
        "params": [
            {"amount": "revenue", "table": "daily_sales", "date": "sale_date"},
            {"amount": "signups", "table": "daily_signups", "date": "day"},
        ],
        "intro": [
            "Use `SUM(...) OVER (ORDER BY ...)`: a window function that adds up every row up to the current one without collapsing the rows.",
            "Window functions compute across related rows while keeping each row in the output, which is exactly what a running total needs.",
        ],
        "sections": [
            ("code", "Running total", "sql",
             "SELECT {{date}},\n       {{amount}},\n       SUM({{amount}}) OVER (ORDER BY {{date}}) AS running_total\nFROM {{table}}\nORDER BY {{date}};",
             None),
            ("table", "What it returns", ["{{date}}", "{{amount}}", "running_total"],
             [["2025-03-01", "120", "120"], ["2025-03-02", "80", "200"], ["2025-03-03", "150", "350"]]),
            ("code", "Resetting every month", "sql",
             "SELECT {{date}},\n       {{amount}},\n       SUM({{amount}}) OVER (\n           PARTITION BY DATE_TRUNC('month', {{date}})\n           ORDER BY {{date}}\n           ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW\n       ) AS month_to_date\nFROM {{table}};",
             "`PARTITION BY` restarts the sum for each month."),
            ("ul", "Details", [
                "ROWS vs RANGE: the default frame is RANGE, which lumps together rows with the same date; `ROWS` counts them one at a time.",
                "Dialects: `DATE_TRUNC` is PostgreSQL; in MySQL partition by `YEAR({{date}}), MONTH({{date}})`.",
                "SQLite: window functions work from version 3.25 on.",
            ]),
        ],
        "outro": [
            "The same pattern gives moving averages: `AVG(...) OVER (ORDER BY {{date}} ROWS BETWEEN 6 PRECEDING AND CURRENT ROW)`.",
            "If you ever need it without window functions, a correlated subquery works but is much slower.",
        ],
        "wrong": "Use `SELECT {{date}}, SUM({{amount}}) FROM {{table}} GROUP BY {{date}};`. GROUP BY accumulates the earlier days automatically, so each row is already a running total.",
    },
    {
        "key": "sql_no_orders",
        "topic": "programming",
        "prompts": [
            "How can I list customers who have never placed an order?",
            "What's the difference between LEFT JOIN ... IS NULL and NOT EXISTS for finding customers without orders?",
        ],
        "intro": [
            "There are two standard patterns, an anti-join with `LEFT JOIN` and `NOT EXISTS`, and one trap to avoid, `NOT IN` with NULLs.",
            "Both `LEFT JOIN ... IS NULL` and `NOT EXISTS` return the same rows; `NOT EXISTS` states the intent more directly.",
        ],
        "sections": [
            ("code", "LEFT JOIN anti-join", "sql",
             "SELECT c.customer_id, c.name\nFROM customers AS c\nLEFT JOIN orders AS o ON o.customer_id = c.customer_id\nWHERE o.customer_id IS NULL;",
             "Customers without orders get NULLs for every order column, and the WHERE clause keeps exactly those."),
            ("code", "NOT EXISTS", "sql",
             "SELECT c.customer_id, c.name\nFROM customers AS c\nWHERE NOT EXISTS (\n    SELECT 1 FROM orders AS o WHERE o.customer_id = c.customer_id\n);",
             None),
            ("code", "The NOT IN trap", "sql",
             "-- returns no rows at all if any orders.customer_id is NULL\nSELECT *\nFROM customers\nWHERE customer_id NOT IN (SELECT customer_id FROM orders);",
             "A single NULL in the subquery makes every comparison unknown, so the result is empty."),
            ("ul", "Which to use", [
                "Performance: modern planners (PostgreSQL, SQL Server, MySQL 8) turn both into the same anti-join.",
                "Readability: `NOT EXISTS` reads like the question you're asking.",
                "Filters on orders: put them in the `ON` clause of the LEFT JOIN, not in `WHERE`, or you'll filter the unmatched rows away.",
            ]),
        ],
        "outro": [
            "I'd default to `NOT EXISTS` and keep `LEFT JOIN` for when you also need columns from the matched side.",
            "Whichever you pick, an index on `orders(customer_id)` keeps it quick.",
        ],
        "wrong": "Use an INNER JOIN and add `WHERE o.customer_id IS NULL`. The inner join keeps the customers whose orders are missing.",
    },
    {
        "key": "sh_delete_old",
        "topic": "programming",
        "prompts": [
            "How do I delete files older than {{days}} days in a directory on Linux?",
            "Give me a safe shell command to clean up {{pattern}} files older than {{days}} days in {{dir}}.",
        ],
        "params": [
            {"days": 30, "pattern": "*.log", "dir": "/var/log/myapp"},
            {"days": 7, "pattern": "*.tmp", "dir": "~/scratch"},
            {"days": 14, "pattern": "*.csv", "dir": "./exports"},
        ],
        "intro": [
            "`find` with `-mtime` does this. Always list the matches first, then delete.",
            "Use `find`: it can filter by age and delete in one pass, but do a dry run before the real thing.",
        ],
        "sections": [
            ("code", "Preview, then delete", "bash",
             "# 1. see what would go\nfind {{dir}} -type f -name '{{pattern}}' -mtime +{{days}} -print\n\n# 2. delete them\nfind {{dir}} -type f -name '{{pattern}}' -mtime +{{days}} -delete",
             None),
            ("ul", "What the options mean", [
                "`-type f`: files only, never directories.",
                "`-name '{{pattern}}'`: quote the pattern so the shell doesn't expand it first.",
                "`-mtime +{{days}}`: modified more than {{days}} full days ago (find rounds down to whole days).",
                "`-delete`: must come last; placed before the tests, it deletes everything it visits.",
            ]),
            ("code", "Run it nightly with cron", "bash",
             "# crontab -e\n15 3 * * * find {{dir}} -type f -name '{{pattern}}' -mtime +{{days}} -delete",
             "Add `-maxdepth 1` if you don't want to touch subdirectories."),
        ],
        "outro": [
            "For logs specifically, `logrotate` can compress and expire them for you.",
            "If you might need the files back, move them to an archive folder with `-exec mv -t /archive {} +` instead.",
        ],
        "wrong": "Run `rm -rf {{dir}}/*` and restore the newer files from your backup afterwards; it's quicker than working out which files are old.",
    },
    {
        "key": "sh_count_lines",
        "topic": "programming",
        "prompts": [
            "How can I count the total lines of code in all {{ext}} files in a project from the terminal?",
            "Shell one-liner to count lines in every {{ext}} file recursively?",
        ],
        "params": [{"ext": ".py"}, {"ext": ".js"}, {"ext": ".sql"}],
        "intro": [
            "Combine `find` and `wc -l`; the only subtlety is file names with spaces.",
            "Here are a few one-liners, from a per-file listing to a single total.",
        ],
        "sections": [
            ("code", "Per file, biggest last", "bash",
             "find . -name '*{{ext}}' -type f -print0 | xargs -0 wc -l | sort -n | tail -n 15",
             "`-print0` and `xargs -0` keep names with spaces intact."),
            ("code", "Just the total", "bash",
             "find . -name '*{{ext}}' -type f -exec cat {} + | wc -l",
             "With many files, `xargs` may call `wc` several times and print several \"total\" lines; piping through `cat` gives one number."),
            ("code", "Only tracked files", "bash",
             "git ls-files '*{{ext}}' | xargs wc -l | tail -n 1",
             None),
            ("ul", "Caveats", [
                "Blank lines and comments count too.",
                "Generated or vendored code (virtual environments, `node_modules`) inflates the number; exclude it with `-not -path './node_modules/*'`.",
                "`cloc` or `tokei` split the count into code, comments and blanks per language.",
            ]),
        ],
        "outro": [
            "The git version is usually what people mean by \"lines of code\", since it skips build output.",
            "For a quick sense of size, the total is enough; for reports, use `cloc`.",
        ],
        "wrong": "`wc -l *{{ext}}` already searches every subdirectory, so that's all you need.",
    },
    {
        "key": "sh_rename_ext",
        "topic": "programming",
        "prompts": [
            "How do I rename all .{{from}} files in a folder to .{{to}} in bash?",
            "What's a safe way to change the extension of every .{{from}} file in a directory to .{{to}}?",
        ],
        "params": [{"from": "jpeg", "to": "jpg"}, {"from": "txt", "to": "md"}, {"from": "htm", "to": "html"}],
        "intro": [
            "A `for` loop with parameter expansion does it in plain bash, no extra tools needed.",
            "Loop over the files and use `${f%.{{from}}}` to strip the old extension.",
        ],
        "sections": [
            ("code", "Loop", "bash",
             'for f in *.{{from}}; do\n  [ -e "$f" ] || continue            # no matches: skip the literal pattern\n  mv -n -- "$f" "${f%.{{from}}}.{{to}}"\ndone',
             None),
            ("ul", "Why each piece is there", [
                "`${f%.{{from}}}`: removes the shortest match of `.{{from}}` from the end of the name.",
                "`-n`: never overwrite a file that already exists.",
                "`--`: stops file names that start with a dash from being read as options.",
                "Quotes: keep names with spaces in one piece.",
            ]),
            ("code", "Dry run first", "bash",
             'for f in *.{{from}}; do echo mv -n -- "$f" "${f%.{{from}}}.{{to}}"; done',
             None),
            ("code", "Including subfolders", "bash",
             "find . -type f -name '*.{{from}}' -exec sh -c 'for f; do mv -n -- \"$f\" \"${f%.*}.{{to}}\"; done' sh {} +",
             "The Perl `rename` tool also works (`rename 's/\\.{{from}}$/.{{to}}/' *.{{from}}`), but the `rename` on some distributions has a different syntax."),
        ],
        "outro": [
            "Run the echo version, read the output, then run the real loop.",
            "If the folder is under git, `git mv` keeps the history tidy.",
        ],
        "wrong": "Run `mv *.{{from}} *.{{to}}`. mv expands both patterns and renames each file to match.",
    },
    {
        "key": "sh_disk_usage",
        "topic": "programming",
        "prompts": [
            "My disk is almost full. How do I find which folders are taking up the most space on Linux?",
            "What's the command to show the biggest directories under {{dir}}?",
        ],
        "params": [{"dir": "/home"}, {"dir": "/var"}],
        "intro": [
            "Start with `df` to see which filesystem is full, then drill down with `du`.",
            "`du` piped into `sort -h` answers this in one line.",
        ],
        "sections": [
            ("code", "Biggest directories", "bash",
             "df -h\nsudo du -h --max-depth=1 {{dir}} 2>/dev/null | sort -rh | head -n 15",
             "Repeat the `du` command on the largest entry to drill down a level at a time."),
            ("code", "Biggest single files", "bash",
             "sudo find {{dir}} -xdev -type f -size +500M -exec ls -lh {} + 2>/dev/null | sort -k5 -rh | head",
             "`-xdev` stays on one filesystem, so mounted drives don't pollute the results."),
            ("ul", "Usual suspects", [
                "Logs: `journalctl --vacuum-size=500M` trims the systemd journal.",
                "Package caches: `sudo apt clean` or `sudo dnf clean all`.",
                "Containers: `docker system df` shows what images and volumes use; `docker system prune` removes unused ones.",
                "Deleted but open files: `sudo lsof +L1` lists files a running process still holds.",
            ]),
            ("p", "Interactive option",
             "`ncdu {{dir}}` gives a navigable, sorted view and lets you delete from inside it. It's in most package managers and much quicker than rerunning `du` by hand."),
        ],
        "outro": [
            "Before deleting anything under `/var`, check what owns it; some of it belongs to running services.",
            "Once you've found the culprit, consider a cron job or logrotate rule so it doesn't fill up again.",
        ],
        "wrong": "Use `ls -lh {{dir}}`. The size column shows the total size of everything inside each folder.",
    },
]

SUBJECTS += [
    {
        "key": "cook_rice",
        "topic": "cooking",
        "prompts": [
            "How do I cook fluffy white rice on the stove without a rice cooker?",
            "What's the water-to-rice ratio for {{cups}} of long-grain rice, and how long do I cook it?",
        ],
        "params": [{"cups": "1 cup"}, {"cups": "2 cups"}],
        "intro": [
            "Rinse it, use a little less water than the packet often says, and leave the lid alone while it cooks.",
            "For long-grain white rice, about 1½ cups of water per cup of rice gives separate, fluffy grains.",
        ],
        "sections": [
            ("ol", "Method", [
                "Rinse the rice in a sieve until the water runs mostly clear; this washes off surface starch that makes it gummy.",
                "Put the rice, water and a pinch of salt in a heavy pot with a tight lid.",
                "Bring it to a boil uncovered, then cover and turn the heat to the lowest setting.",
                "Cook for 15 minutes without lifting the lid.",
                "Take it off the heat and let it rest, still covered, for 10 minutes.",
                "Fluff with a fork and serve.",
            ]),
            ("table", "Ratios by type", ["Rice", "Water per cup", "Simmer time"], [
                ["Long-grain white", "1½ cups", "15 min"],
                ["Jasmine", "1¼ cups", "12-15 min"],
                ["Basmati", "1½ cups", "12-15 min"],
                ["Brown", "2-2¼ cups", "40-45 min"],
            ]),
            ("ul", "Troubleshooting", [
                "Mushy: use less water next time and rinse more thoroughly.",
                "Still crunchy: sprinkle in 2-3 tablespoons of water, cover and give it 5 more minutes on low.",
                "Burnt bottom: use a heavier pot or a lower flame; a heat diffuser helps on strong burners.",
            ]),
            ("p", "Leftovers",
             "Spread leftover rice out to cool and refrigerate it within an hour or so. Cooked rice can carry spores of Bacillus cereus, which multiply when it sits warm for hours."),
        ],
        "outro": [
            "{{cups}} of dry rice makes roughly three times that volume cooked.",
            "Once you've got your pot dialled in, it's just as reliable as a rice cooker.",
        ],
        "wrong": "Use 3 cups of water per cup of white rice and stir it every few minutes so it doesn't stick; the extra water makes it fluffier.",
    },
    {
        "key": "cook_banana_bread",
        "topic": "cooking",
        "prompts": [
            "Can you give me a simple banana bread recipe?",
            "I have {{bananas}} very ripe bananas. What's a good banana bread recipe, and can I make it without eggs?",
        ],
        "params": [{"bananas": 3}, {"bananas": 4}],
        "intro": [
            "Here's a reliable one-bowl banana bread for one 9×5-inch loaf.",
            "Banana bread is forgiving: one bowl, no mixer, and it works with or without eggs.",
        ],
        "sections": [
            ("ul", "Ingredients", [
                "3 ripe bananas (about 1½ cups mashed; a fourth one is fine)",
                "⅓ cup (75 g) melted butter",
                "¾ cup (150 g) brown sugar",
                "1 large egg, beaten",
                "1 tsp vanilla extract",
                "1 tsp baking soda and ¼ tsp salt",
                "1½ cups (190 g) all-purpose flour",
            ]),
            ("ol", "Method", [
                "Heat the oven to 350°F (175°C) and grease the loaf pan.",
                "Mash the bananas in a bowl and stir in the melted butter.",
                "Mix in the sugar, egg and vanilla.",
                "Sprinkle the baking soda and salt over the batter and stir them in.",
                "Fold in the flour until no dry streaks remain; stop there, since overmixing makes it tough.",
                "Bake for 55-65 minutes, until a skewer comes out clean, then cool 10 minutes in the pan.",
            ]),
            ("ul", "Without eggs", [
                "Applesauce: 3 tablespoons of unsweetened applesauce per egg.",
                "Flax egg: 1 tablespoon ground flaxseed mixed with 3 tablespoons of water, rested for 5 minutes.",
                "The loaf comes out slightly denser but just as moist.",
            ]),
            ("ul", "Tips", [
                "Use bananas with plenty of brown spots; they're sweeter and mash easily.",
                "If the top browns too fast, tent it with foil for the last 15 minutes.",
                "Stir in ½ cup of walnuts or chocolate chips with the flour if you like.",
            ]),
        ],
        "outro": [
            "It keeps for three days wrapped at room temperature, and slices freeze well.",
            "If you have an extra banana, add it; the extra moisture only makes it better.",
        ],
        "wrong": "Bake it at 450°F for 20 minutes. The high heat makes banana bread rise more and stay moist inside.",
    },
    {
        "key": "cook_tomato_sauce",
        "topic": "cooking",
        "prompts": [
            "How do I make a basic tomato sauce for pasta from canned tomatoes?",
            "Quick weeknight pasta sauce recipe for {{people}} people?",
        ],
        "params": [{"people": 2}, {"people": 4}],
        "intro": [
            "A good tomato sauce takes about 30 minutes and five ingredients.",
            "Canned whole tomatoes, garlic and olive oil make a better sauce than most jars.",
        ],
        "sections": [
            ("ul", "Ingredients (about 4 servings)", [
                "2 tbsp olive oil",
                "3 garlic cloves, thinly sliced",
                "1 can (28 oz / 800 g) whole peeled tomatoes",
                "½ tsp salt and a pinch of chili flakes",
                "A handful of basil leaves, and 1 tbsp butter (optional)",
            ]),
            ("ol", "Method", [
                "Warm the oil over low heat and cook the garlic for 1-2 minutes without letting it brown.",
                "Add the tomatoes and crush them with a spoon or your hands.",
                "Simmer uncovered for 20-25 minutes, stirring now and then, until it thickens.",
                "Season with salt, then stir in the butter and torn basil.",
                "Toss with the cooked pasta and a splash of the pasta water.",
            ]),
            ("ul", "Variations", [
                "Arrabbiata: double the chili flakes.",
                "Puttanesca: add olives, capers and a couple of anchovies with the garlic.",
                "Onion and butter: simmer the tomatoes with a halved onion and 5 tbsp butter for 45 minutes, then remove the onion.",
            ]),
            ("p", "If it tastes sharp",
             "Canned tomatoes vary. If the sauce tastes too acidic, simmer it a little longer or add a small pinch of sugar, and taste again before adding more."),
        ],
        "outro": [
            "Allow about 100 g of dried pasta per person, and freeze any leftover sauce.",
            "It keeps for four days in the fridge and freezes for months.",
        ],
        "wrong": "Boil the sauce hard for about two hours; the longer it boils, the fresher and less acidic it tastes.",
    },
    {
        "key": "cook_roast_veg",
        "topic": "cooking",
        "prompts": [
            "What's the best way to roast vegetables so they get crispy instead of soggy?",
            "What temperature and time should I use to roast {{veg}}?",
        ],
        "params": [{"veg": "broccoli"}, {"veg": "potatoes"}, {"veg": "carrots"}],
        "intro": [
            "Crispy roasted vegetables come down to high heat, dry vegetables and space on the pan.",
            "Most vegetables roast best at 425°F (220°C); the timing depends on the vegetable and how you cut it.",
        ],
        "sections": [
            ("ul", "The rules", [
                "High heat: 425°F (220°C); lower temperatures steam more than they brown.",
                "Dry them: pat washed vegetables dry, since surface water turns to steam.",
                "Don't crowd: leave gaps between pieces and use two pans if needed.",
                "Enough oil: about 1 tablespoon per pound, tossed until every piece is coated.",
                "Even pieces: similar sizes finish at the same time.",
            ]),
            ("table", "Times at 425°F (220°C)", ["Vegetable", "Cut", "Time"], [
                ["Broccoli", "florets", "20-25 min"],
                ["Potatoes", "1-inch cubes", "35-45 min"],
                ["Carrots", "sticks or coins", "25-35 min"],
                ["Brussels sprouts", "halved", "20-30 min"],
                ["Butternut squash", "1-inch cubes", "30-40 min"],
            ]),
            ("ul", "Finishing touches", [
                "Flip once halfway through.",
                "Salt before roasting; add lemon juice, herbs or grated parmesan after.",
                "Preheat the pan for an extra-crisp underside.",
            ]),
        ],
        "outro": [
            "Get these right and almost any vegetable comes out browned and crisp at the edges.",
            "Leftovers re-crisp in a hot oven or air fryer in 5 minutes.",
        ],
        "wrong": "Cover the pan tightly with foil for the whole time to trap the heat; that's what makes roasted vegetables crispy.",
    },
    {
        "key": "cook_egg_sub",
        "topic": "cooking",
        "prompts": [
            "What can I use instead of eggs in baking?",
            "I'm out of eggs. What can I substitute in {{bake}}?",
        ],
        "params": [{"bake": "muffins"}, {"bake": "brownies"}, {"bake": "pancakes"}],
        "intro": [
            "It depends on what the egg was doing: binding, adding moisture or giving lift.",
            "Plenty of pantry items can stand in for one or two eggs.",
        ],
        "sections": [
            ("table", "Substitutes per egg", ["Substitute", "Amount", "Best for"], [
                ["Flax egg", "1 tbsp ground flax + 3 tbsp water", "muffins, cookies, brownies"],
                ["Applesauce", "¼ cup unsweetened", "cakes, quick breads"],
                ["Mashed banana", "¼ cup", "pancakes, banana bread"],
                ["Plain yogurt", "¼ cup", "muffins, cakes"],
                ["Aquafaba", "3 tbsp chickpea liquid", "meringues, mousse"],
                ["Baking soda + vinegar", "1 tsp + 1 tbsp", "fluffy cakes"],
            ]),
            ("ul", "What to expect", [
                "Swaps work best when a recipe uses one or two eggs; custards and soufflés really need the real thing.",
                "Fruit purées add flavour and make bakes denser and moister.",
                "Bake a few minutes longer and check with a skewer, since egg-free batters can take more time to set.",
            ]),
            ("p", "For {{bake}}",
             "For {{bake}}, a flax egg or ¼ cup of yogurt per egg is the safest choice; both keep the texture close to the original."),
        ],
        "outro": [
            "Commercial egg replacers are also worth keeping in the cupboard if this happens often.",
            "Start with the flax egg; it's the most neutral of the lot.",
        ],
        "wrong": "Just leave the eggs out and add an extra cup of flour. Eggs mainly add colour, so nothing else changes.",
    },
    {
        "key": "cook_pancakes",
        "topic": "cooking",
        "prompts": [
            "Give me a recipe for fluffy pancakes from scratch.",
            "How do I make pancakes for {{people}} people without a mix?",
        ],
        "params": [{"people": 2}, {"people": 3}],
        "intro": [
            "The secrets to fluffy pancakes are buttermilk, a lumpy batter and a short rest.",
            "This makes about 8 medium pancakes, enough for two or three people.",
        ],
        "sections": [
            ("ul", "Ingredients", [
                "1½ cups (190 g) all-purpose flour",
                "2 tbsp sugar, 2 tsp baking powder, ½ tsp baking soda, ½ tsp salt",
                "1¼ cups buttermilk (or milk with 1 tbsp lemon juice, left 5 minutes)",
                "1 egg",
                "3 tbsp melted butter, plus a little for the pan",
            ]),
            ("ol", "Method", [
                "Whisk the dry ingredients in one bowl and the wet ones in another.",
                "Pour the wet into the dry and stir just until combined; lumps are fine.",
                "Let the batter rest 5-10 minutes while the pan heats over medium.",
                "Pour about ¼ cup per pancake into the lightly greased pan.",
                "Flip when bubbles pop on the surface and the edges look dry, after 2-3 minutes; cook 1-2 minutes more.",
            ]),
            ("ul", "Tips", [
                "Don't press the pancakes with the spatula; it squeezes out the air.",
                "Keep finished ones warm on a tray in a 200°F (95°C) oven.",
                "Test the pan with a drop of water: it should sizzle and dance, not vanish instantly.",
            ]),
        ],
        "outro": [
            "This batch feeds two or three people; double it for a crowd.",
            "Serve with butter and maple syrup, or fresh berries and yogurt.",
        ],
        "wrong": "Beat the batter for several minutes until it's completely smooth; the more you mix, the fluffier the pancakes get.",
    },
    {
        "key": "travel_packing",
        "topic": "travel",
        "prompts": [
            "Can you make me a packing checklist for a one-week trip with only a carry-on?",
            "What should I pack for a week in {{place}} in {{season}} with just a carry-on bag?",
        ],
        "params": [
            {"place": "Portugal", "season": "spring"},
            {"place": "Scotland", "season": "autumn"},
            {"place": "Japan", "season": "summer"},
        ],
        "intro": [
            "A week fits in a carry-on if you plan outfits around one colour palette and do one small load of laundry.",
            "Here's a checklist; I've ticked the items you should sort out before packing day.",
        ],
        "sections": [
            ("check", "Before you go", [
                (True, "Passport or ID, plus a photo of the photo page"),
                (True, "Travel insurance documents saved offline"),
                (True, "Bookings and boarding passes on your phone"),
                (False, "Phone charger and plug adapter"),
                (False, "Small amount of local currency"),
            ]),
            ("ul", "Clothes", [
                "5-6 tops that all work with 2 bottoms",
                "1 warm layer and 1 light rain jacket",
                "Underwear and socks for 4-5 days, washed once mid-trip",
                "Comfortable walking shoes (wear the bulkiest pair on the plane)",
            ]),
            ("ul", "Toiletries", [
                "Liquids in containers of 100 ml (3.4 oz) or less, all in one clear 1-litre bag",
                "Toothbrush, razor, any prescription medicine in its original packaging",
                "Sunscreen and lip balm",
            ]),
            ("ul", "Packing tricks", [
                "Roll soft clothes and use packing cubes to compress them.",
                "Check your airline's size and weight limits; budget carriers are strict.",
                "Leave a little space for things you'll bring home.",
            ]),
        ],
        "outro": [
            "Check the ten-day forecast the night before you leave and swap a layer if needed.",
            "Lay everything out the night before; whatever you hesitate over can usually stay home.",
        ],
        "wrong": "Liquids of any size are fine in carry-on bags as long as they're in a clear plastic bag, so bring full-size bottles.",
    },
    {
        "key": "travel_jetlag",
        "topic": "travel",
        "prompts": [
            "How can I beat jet lag when flying from {{from}} to {{to}}?",
            "Any tips for dealing with jet lag on a long-haul flight?",
        ],
        "params": [
            {"from": "New York", "to": "London", "dir": "east"},
            {"from": "London", "to": "Tokyo", "dir": "east"},
            {"from": "Los Angeles", "to": "Sydney", "dir": "west"},
        ],
        "intro": [
            "Jet lag is your body clock lagging behind local time; light is the strongest tool for moving it.",
            "You can't avoid jet lag entirely, but you can cut it from a week to a couple of days.",
        ],
        "sections": [
            ("ul", "Before the flight", [
                "Shift your bedtime by an hour a day for two or three days, earlier for eastward trips and later for westward ones.",
                "Arrive rested; starting a trip short on sleep makes everything worse.",
            ]),
            ("ul", "On the plane", [
                "Set your watch to destination time and sleep or stay awake accordingly.",
                "Drink water and go easy on alcohol, which fragments sleep.",
                "Eye mask, earplugs and a neck pillow make plane sleep possible.",
            ]),
            ("ul", "After landing", [
                "Get outdoor light in the morning after flying east, and in the late afternoon after flying west.",
                "Stay up until at least 9 pm local time on the first day.",
                "Keep naps under 30 minutes and before mid-afternoon.",
                "Have caffeine only in the local morning.",
            ]),
            ("p", "Melatonin",
             "A low dose of melatonin (0.5-3 mg) at local bedtime can help after eastward flights. Check with a doctor or pharmacist first if you take other medication."),
        ],
        "outro": [
            "As a rule of thumb, recovery takes about a day per time zone crossed, and flying east is harder than flying west.",
            "The first two nights after landing matter most; protect them.",
        ],
        "wrong": "Take a long nap as soon as you arrive, however long you need. Your body resets itself by the next morning no matter what you do.",
    },
    {
        "key": "hist_ww1",
        "topic": "history",
        "prompts": [
            "What were the main causes of World War I?",
            "Explain the causes of WWI in simple terms for a {{audience}}.",
        ],
        "params": [{"audience": "high school essay"}, {"audience": "12-year-old"}],
        "intro": [
            "Historians often summarise the long-term causes with the acronym MAIN (militarism, alliances, imperialism and nationalism), with the assassination of Archduke Franz Ferdinand as the trigger.",
            "World War I grew out of rivalries that had been building for decades; a single assassination in June 1914 set them off.",
        ],
        "sections": [
            ("ul", "Long-term causes", [
                "Militarism: the great powers built up huge armies, and Britain and Germany raced to build battleships after the Dreadnought of 1906.",
                "Alliances: Germany, Austria-Hungary and Italy formed the Triple Alliance; France, Russia and Britain drew together in the Triple Entente.",
                "Imperialism: competition for colonies and influence, such as the Moroccan crises of 1905 and 1911, deepened mistrust.",
                "Nationalism: in the Balkans, Serbian nationalism clashed with Austria-Hungary, while Russia saw itself as protector of the Slavs.",
            ]),
            ("p", "The trigger",
             "On 28 June 1914, Gavrilo Princip, a Bosnian Serb linked to a nationalist network, shot Archduke Franz Ferdinand, heir to the Austro-Hungarian throne, in Sarajevo."),
            ("table", "The July Crisis", ["Date", "Event"], [
                ["23 July 1914", "Austria-Hungary sends Serbia an ultimatum, backed by Germany's \"blank cheque\""],
                ["28 July 1914", "Austria-Hungary declares war on Serbia"],
                ["30 July 1914", "Russia orders general mobilisation"],
                ["1-3 August 1914", "Germany declares war on Russia, then on France"],
                ["4 August 1914", "Germany invades Belgium; Britain declares war on Germany"],
            ]),
            ("p", "How historians see it",
             "After the war, the Treaty of Versailles placed the blame on Germany, and Fritz Fischer's work in the 1960s largely agreed. More recent accounts, such as Christopher Clark's The Sleepwalkers, stress shared responsibility and a chain of miscalculations."),
        ],
        "outro": [
            "In an essay, show how the long-term causes turned a regional crisis into a continental war.",
            "The short version: tensions built the bonfire, and Sarajevo lit the match.",
        ],
        "wrong": "World War I started when Germany invaded Poland, which brought Britain and France into the war through their guarantee to the Poles.",
    },
    {
        "key": "hist_rome",
        "topic": "history",
        "prompts": [
            "Why did the Western Roman Empire fall?",
            "Was the fall of Rome caused by barbarian invasions or by internal problems?",
        ],
        "intro": [
            "There's no single cause: internal weakness and outside pressure fed each other over two centuries, until the last western emperor, Romulus Augustulus, was deposed by Odoacer in 476 CE.",
            "Invasions and internal problems both mattered, and they're hard to separate: the invasions succeeded because the western empire was already weakened, and they weakened it further.",
        ],
        "sections": [
            ("ul", "Internal problems", [
                "Political instability: in the crisis of the third century, roughly two dozen emperors ruled in about 50 years, most of them killed or overthrown.",
                "Money: debased coinage, inflation and heavy taxes strained the economy.",
                "The army: Rome relied more and more on barbarian federates whose loyalty was to their own leaders.",
            ]),
            ("ul", "External pressure", [
                "The Huns pushed Gothic peoples across the Danube in the 370s.",
                "At Adrianople in 378 the Goths destroyed an imperial army and killed Emperor Valens.",
                "The Visigoths under Alaric sacked Rome in 410, and the Vandals sacked it again in 455.",
                "The Vandal capture of Carthage in 439 cost the west its richest tax province.",
            ]),
            ("p", "Why the East survived",
             "The eastern half, ruled from Constantinople, was richer, more urban and protected by formidable walls. It lasted as the Byzantine Empire until 1453."),
            ("p", "The debate",
             "Edward Gibbon blamed a loss of civic virtue and the rise of Christianity. Later historians such as Peter Brown described a slow transformation rather than a fall, while Bryan Ward-Perkins pointed to archaeological evidence of a real collapse in living standards."),
        ],
        "outro": [
            "Most historians now see the invasions as the immediate cause and the internal problems as the reason they couldn't be absorbed.",
            "476 is a convenient date, but few people at the time thought the world had ended that year.",
        ],
        "wrong": "Rome fell in a single year, when Julius Caesar was assassinated in 44 BC and the empire broke apart.",
    },
    {
        "key": "hist_printing",
        "topic": "history",
        "prompts": [
            "How did the printing press change Europe?",
            "Why was Gutenberg's printing press so important?",
        ],
        "intro": [
            "Johannes Gutenberg's press, developed in Mainz around 1440-1450, made books cheap and fast to produce, and that changed religion, science and everyday literacy.",
            "The press mattered because it turned copying from a craft into an industry.",
        ],
        "sections": [
            ("ul", "What Gutenberg combined", [
                "Movable metal type cast in a hand mould, so letters could be reused.",
                "Oil-based ink that stuck to metal.",
                "A screw press adapted from those used for wine and paper.",
            ]),
            ("p", "How fast it spread",
             "The Gutenberg Bible was finished around 1455, in about 180 copies. By 1500, presses were running in more than two hundred European towns, and millions of books had been printed."),
            ("ul", "Consequences", [
                "The Reformation: Martin Luther's 95 Theses (1517) and pamphlets spread across Germany within weeks.",
                "Science: identical copies with accurate diagrams let scholars build on each other, as with Copernicus's book of 1543.",
                "Languages: printing in the vernacular helped standardise spelling and national languages.",
                "Literacy: cheaper books slowly widened who could read.",
            ]),
            ("p", "Earlier printing",
             "Printing wasn't new: Bi Sheng made movable clay type in China in the 1040s, and Korea printed the Jikji with metal type in 1377. Gutenberg's system suited the small Latin alphabet and spread through a commercial market."),
        ],
        "outro": [
            "It's often compared to the internet: a communication shift whose effects took generations to play out.",
            "In short, the press made ideas hard to contain.",
        ],
        "wrong": "Gutenberg invented printing itself; before him, nobody anywhere had printed text, and every book was copied by hand.",
    },
    {
        "key": "hist_french_rev",
        "topic": "history",
        "prompts": [
            "What caused the French Revolution?",
            "Summarize the causes of the French Revolution of 1789.",
        ],
        "intro": [
            "A bankrupt state, an unfair tax system, hunger and new political ideas came together in 1789.",
            "The French Revolution had financial, social and intellectual causes, and a poor harvest turned them into a crisis.",
        ],
        "sections": [
            ("ul", "Causes", [
                "Debt: wars, including support for the American Revolution, left the crown deeply in debt.",
                "Taxes: the clergy and nobility were largely exempt, so the burden fell on the Third Estate, the vast majority of the population.",
                "Food: the bad harvest of 1788 sent bread prices soaring in 1789.",
                "Ideas: Enlightenment writers such as Rousseau, Montesquieu and Voltaire questioned privilege and absolute monarchy.",
                "Politics: Louis XVI called the Estates-General in May 1789, the first time since 1614, and lost control of it.",
            ]),
            ("table", "1789 in four steps", ["Date", "Event"], [
                ["5 May", "The Estates-General meets at Versailles"],
                ["20 June", "Third Estate deputies swear the Tennis Court Oath"],
                ["14 July", "Crowds storm the Bastille"],
                ["26 August", "Declaration of the Rights of Man and of the Citizen"],
            ]),
            ("p", "Putting it together",
             "The fiscal crisis forced the king to ask for help, the Estates-General gave the Third Estate a stage, and hunger brought the people of Paris into the streets."),
        ],
        "outro": [
            "For an essay, distinguish long-term causes (debt, privilege, ideas) from short-term triggers (harvest, Estates-General).",
            "No single cause was enough; their coincidence in 1788-89 was.",
        ],
        "wrong": "It began because Napoleon overthrew King Louis XIV in 1789 and declared a republic.",
    },
    {
        "key": "hist_industrial",
        "topic": "history",
        "prompts": [
            "Why did the Industrial Revolution start in Britain?",
            "What factors made Britain the first industrial nation?",
        ],
        "intro": [
            "Britain had an unusual combination: cheap coal, expensive labour, capital, markets and a stable state that protected property.",
            "Historians point to several advantages that Britain had together in the eighteenth century.",
        ],
        "sections": [
            ("ul", "Key factors", [
                "Coal and iron: large deposits close to rivers and the coast.",
                "Wages and energy: high wages and cheap coal made labour-saving machines pay off, an argument associated with Robert Allen.",
                "Agriculture: enclosure and new crop rotations raised output and freed workers for industry.",
                "Capital and trade: profits from overseas trade, including the Atlantic slave economy, and banks ready to lend.",
                "Institutions: political stability after 1688, patents and secure property rights.",
            ]),
            ("table", "Milestones", ["Year", "Invention"], [
                ["1709", "Abraham Darby smelts iron with coke"],
                ["c. 1764", "James Hargreaves's spinning jenny"],
                ["1769", "Richard Arkwright's water frame; James Watt patents his improved steam engine"],
                ["1779", "Samuel Crompton's spinning mule"],
            ]),
            ("p", "Cotton first",
             "The cotton industry led the way: demand was huge, and each machine removed a bottleneck in spinning or weaving, which pushed inventors to fix the next one."),
        ],
        "outro": [
            "No factor was unique to Britain, but nowhere else had all of them at once.",
            "It spread to Belgium, France, Germany and the United States in the following decades.",
        ],
        "wrong": "It started in Britain because Britain had by far the largest population in Europe, so it had the most workers.",
    },
    {
        "key": "hist_berlin_wall",
        "topic": "history",
        "prompts": [
            "Why did the Berlin Wall fall in 1989?",
            "What led to the fall of the Berlin Wall?",
        ],
        "intro": [
            "The Wall fell because Soviet control of Eastern Europe was loosening, East Germans were leaving and protesting in huge numbers, and a botched announcement on 9 November 1989 sent crowds to the checkpoints.",
            "It was a mix of long-term collapse and one evening's confusion.",
        ],
        "sections": [
            ("p", "Background",
             "East Germany built the Wall in August 1961 to stop its citizens from leaving through West Berlin; by then millions had already gone."),
            ("ul", "What changed in the 1980s", [
                "Mikhail Gorbachev's glasnost and perestroika, and his refusal to send in troops to prop up allied regimes.",
                "Poland's partly free elections in June 1989, won by Solidarity.",
                "Hungary opening its border with Austria in 1989, which let thousands of East Germans escape west.",
                "Mass protests, such as the Monday demonstrations in Leipzig, where about 70,000 marched on 9 October.",
            ]),
            ("p", "The night of 9 November",
             "At a press conference, Politburo spokesman Günter Schabowski announced new travel rules and, unsure of the details, said they took effect immediately. Crowds gathered at the crossings, and at Bornholmer Straße the overwhelmed guards opened the gates."),
            ("p", "Aftermath",
             "Germany was reunified less than a year later, on 3 October 1990."),
        ],
        "outro": [
            "The Wall was a symptom of the system, and when the system lost its nerve the Wall couldn't stand.",
            "The fall was not planned by anyone; it happened because no one gave the order to stop it.",
        ],
        "wrong": "American troops tore the Wall down in 1987, straight after President Reagan's speech in Berlin.",
    },
    {
        "key": "hist_silk_road",
        "topic": "history",
        "prompts": [
            "What was the Silk Road and why did it matter?",
            "Explain the Silk Road trade network.",
        ],
        "intro": [
            "The Silk Road was a network of overland and sea routes that linked China with Central Asia, the Middle East and the Mediterranean from about the second century BCE.",
            "It wasn't one road but many routes, and its biggest cargo was arguably ideas.",
        ],
        "sections": [
            ("ul", "What moved", [
                "Goods: silk, porcelain, paper and tea went west; horses, glass, silver and wool went east.",
                "Religions: Buddhism reached China along these routes, and later Islam spread into Central Asia.",
                "Technology: paper-making travelled west from China.",
                "Disease: the Black Death of the 1340s probably followed the same paths.",
            ]),
            ("ul", "Key places", [
                "Chang'an (today's Xi'an), the eastern terminus under the Han and Tang dynasties.",
                "Kashgar, Samarkand and Merv, oasis cities in Central Asia.",
                "Baghdad and Constantinople, great markets further west.",
            ]),
            ("p", "How trade worked",
             "Few merchants travelled the whole way. Goods passed from hand to hand in relay, and each middleman added a profit."),
            ("p", "The name",
             "The term itself is modern: the German geographer Ferdinand von Richthofen popularised it in 1877."),
        ],
        "outro": [
            "It declined as sea routes became cheaper and safer after the fifteenth century.",
            "It matters because it tied Eurasia together long before modern globalisation.",
        ],
        "wrong": "The Silk Road was a single paved highway built by the Romans that ran from Rome to Beijing.",
    },
    {
        "key": "hist_apollo",
        "topic": "history",
        "prompts": [
            "How did the United States win the race to the Moon?",
            "Tell me about the Apollo 11 mission.",
        ],
        "intro": [
            "Apollo 11 landed the first people on the Moon on 20 July 1969, eight years after President Kennedy set the goal.",
            "The Moon landing was the climax of a space race the Soviet Union had been winning until the mid-1960s.",
        ],
        "sections": [
            ("ul", "Context", [
                "The Soviet Union launched Sputnik in 1957 and put Yuri Gagarin in orbit in 1961.",
                "In May 1961, Kennedy asked Congress to commit to landing a man on the Moon before the decade was out.",
                "NASA's budget peaked in the mid-1960s, and the Saturn V rocket made the trip possible.",
            ]),
            ("table", "Apollo 11", ["Date", "Event"], [
                ["16 July 1969", "Launch from Kennedy Space Center"],
                ["20 July 1969", "The lunar module Eagle lands in the Sea of Tranquility"],
                ["21 July 1969", "Armstrong and Aldrin spend about two and a half hours outside"],
                ["24 July 1969", "Splashdown in the Pacific Ocean"],
            ]),
            ("p", "The crew",
             "Neil Armstrong and Buzz Aldrin walked on the surface while Michael Collins orbited in the command module Columbia. They brought back about 21.5 kilograms of lunar rock and soil."),
            ("p", "What followed",
             "Six Apollo missions landed between 1969 and 1972, and twelve astronauts walked on the Moon. The Soviet N1 rocket failed all four of its launches."),
        ],
        "outro": [
            "Armstrong's first words on the surface, \"That's one small step for man, one giant leap for mankind\", became the mission's legacy.",
            "It remains one of the most ambitious engineering projects ever attempted.",
        ],
        "wrong": "Apollo 11 landed on the Moon in 1967, and Buzz Aldrin was the first person to step onto the surface.",
    },
]

SUBJECTS += [
    {
        "key": "health_sleep",
        "topic": "health",
        "prompts": [
            "I have trouble falling asleep. What are some evidence-based sleep tips?",
            "How can I improve my sleep quality without medication?",
        ],
        "intro": [
            "Most adults need 7-9 hours, and the habits below, often called sleep hygiene, are the first thing doctors recommend.",
            "Sleep improves most from consistency, light management and a calm wind-down, rather than from any single trick.",
        ],
        "sections": [
            ("ul", "Timing and light", [
                "Same schedule: go to bed and get up at the same time every day, weekends included.",
                "Morning light: get outside within an hour of waking; it anchors your body clock.",
                "Evening dimming: lower the lights and put screens away for the last hour before bed.",
            ]),
            ("ul", "What you consume", [
                "Caffeine: stop about 8 hours before bed; it has a half-life of around 5 hours.",
                "Alcohol: it helps you drop off but fragments sleep in the second half of the night.",
                "Late meals: finish big meals 2-3 hours before lying down.",
            ]),
            ("ul", "Your bedroom", [
                "Cool, dark and quiet: around 18°C (65°F) suits most people.",
                "Bed is for sleep: if you're awake for more than about 20 minutes, get up, do something calm in dim light and come back when sleepy.",
            ]),
            ("p", "When to see a doctor",
             "If you struggle to sleep at least three nights a week for three months, or you snore loudly and wake up gasping, talk to a doctor. Chronic insomnia responds well to cognitive behavioural therapy for insomnia (CBT-I), and loud snoring can be a sign of sleep apnea."),
        ],
        "outro": [
            "Pick two or three changes, keep them for two weeks and judge by how you feel during the day.",
            "Regular exercise helps too, ideally finished a few hours before bedtime.",
        ],
        "wrong": "A nightcap is the best natural sleep aid: a couple of drinks before bed gives you deeper, more restful sleep all night.",
    },
    {
        "key": "health_protein",
        "topic": "health",
        "prompts": [
            "How much protein do I need per day?",
            "I'm {{weight}} kg and started lifting weights. How much protein should I eat, and what are good sources?",
        ],
        "params": [{"weight": 70, "rda": 56, "lo": 84, "hi": 112}, {"weight": 85, "rda": 68, "lo": 102, "hi": 136}],
        "intro": [
            "The baseline for adults is 0.8 g per kilogram of body weight a day, and people who train regularly do better with more.",
            "For someone who lifts, most sports-nutrition guidance lands between 1.2 and 1.6 g per kilogram a day.",
        ],
        "sections": [
            ("table", "Example: daily targets at {{weight}} kg", ["Situation", "Per kg", "Per day"], [
                ["Sedentary adult (RDA)", "0.8 g", "about {{rda}} g"],
                ["Regular strength training", "1.2-1.6 g", "about {{lo}}-{{hi}} g"],
            ]),
            ("p", "Where to get it",
             "Good sources of protein include eggs, Greek yogurt, chicken, fish, tofu, lentils and beans. Plant sources work fine too; mixing several over the day covers all the essential amino acids."),
            ("table", "Typical amounts", ["Food", "Serving", "Protein"], [
                ["Chicken breast, cooked", "100 g", "~31 g"],
                ["Greek yogurt", "170 g pot", "~17 g"],
                ["Lentils, cooked", "1 cup", "~18 g"],
                ["Eggs", "2 large", "~12 g"],
                ["Firm tofu", "100 g", "~15 g"],
            ]),
            ("ul", "Practical tips", [
                "Spread it out: 20-40 g per meal is easier than one huge serving.",
                "Supplements: a protein shake is convenient, not necessary.",
                "Kidney disease: if you have it, ask your doctor before raising your intake.",
            ]),
        ],
        "outro": [
            "Hit your total most days and the exact timing matters much less.",
            "Pair it with progressive training and enough sleep; protein alone doesn't build muscle.",
        ],
        "wrong": "Your body can only absorb about 10 grams of protein per meal, so anything beyond that is simply wasted.",
    },
    {
        "key": "health_running",
        "topic": "health",
        "prompts": [
            "I want to start running but I get out of breath after a minute. How should I begin?",
            "Give me a beginner plan to run 5K in about {{weeks}} weeks.",
        ],
        "params": [{"weeks": 8}, {"weeks": 10}],
        "intro": [
            "Getting out of breath early is normal; the fix is to run slower and mix running with walking.",
            "Run/walk intervals are the proven way in: three sessions a week, gradually shifting from walking to running.",
        ],
        "sections": [
            ("table", "Sample plan (three sessions a week)", ["Weeks", "Each session"], [
                ["1-2", "1 min run / 2 min walk, 8 times"],
                ["3-4", "3 min run / 2 min walk, 5 times"],
                ["5-6", "5 min run / 1 min walk, 4 times"],
                ["7-8", "10 min run / 1 min walk, 3 times"],
                ["After", "25-30 min of continuous easy running"],
            ]),
            ("ul", "Key rules", [
                "Pace: slow enough to talk in full sentences. If you can't, slow down.",
                "Rest days: take a day off between sessions so your tendons can adapt.",
                "Warm-up: walk briskly for five minutes first.",
                "Repeat a week whenever it felt too hard; the plan is a guide, not a deadline.",
            ]),
            ("p", "Shoes and pain",
             "A comfortable pair of running shoes matters more than any brand. Mild muscle soreness is normal, but sharp or joint pain that gets worse as you run is a signal to stop and rest."),
            ("p", "Health check",
             "If you have a heart condition, chest pain on exertion or other health concerns, check with a doctor before starting."),
        ],
        "outro": [
            "Most beginners can run 5K without stopping after about {{weeks}} weeks of this.",
            "Consistency beats intensity: three easy sessions every week will get you there.",
        ],
        "wrong": "Run as fast as you can every day until you can do 5K; rest days only slow your progress.",
    },
    {
        "key": "health_water",
        "topic": "health",
        "prompts": [
            "Do I really need to drink 8 glasses of water a day?",
            "How much water should I drink a day?",
        ],
        "intro": [
            "The \"8 glasses a day\" rule is an easy reminder, not a scientific target, and food and other drinks count too.",
            "Needs vary with body size, activity and climate, but there are sensible reference values.",
        ],
        "sections": [
            ("table", "Reference intakes (all fluids and food)", ["Group", "Total water per day"], [
                ["Men", "about 3.7 litres"],
                ["Women", "about 2.7 litres"],
            ]),
            ("p", "Where it comes from",
             "These figures from the US National Academies include water in food, which supplies roughly a fifth of the total. Coffee and tea count towards it too; their mild diuretic effect doesn't cancel out the fluid."),
            ("ul", "Practical signs", [
                "Thirst: for most healthy people it's a reliable guide.",
                "Urine colour: pale yellow means you're doing fine.",
                "Drink more in hot weather, during exercise, and when pregnant or breastfeeding.",
            ]),
            ("p", "Too much",
             "Drinking far more than you need can dilute blood sodium (hyponatremia), mainly a risk in long endurance events. People with heart failure or kidney disease may have fluid limits and should follow their doctor's advice."),
        ],
        "outro": [
            "Keep water within reach and drink when you're thirsty; that covers most people.",
            "There's no need to force down glasses you don't want.",
        ],
        "wrong": "Coffee and tea don't count at all; they dehydrate you more than they hydrate, so you need an extra glass of water for every cup.",
    },
    {
        "key": "health_cold_flu",
        "topic": "health",
        "prompts": [
            "How can I tell if I have a cold or the flu?",
            "What's the difference between a cold and the flu, and when should I see a doctor?",
        ],
        "intro": [
            "The flu usually hits suddenly and hard, with fever and aches; a cold builds up gradually and stays mostly in the nose and throat.",
            "Both are viral infections of the airways, but they feel quite different.",
        ],
        "sections": [
            ("table", "Typical symptoms", ["Symptom", "Cold", "Flu"], [
                ["Onset", "gradual", "sudden"],
                ["Fever", "rare", "common, often high"],
                ["Aches", "slight", "common, often severe"],
                ["Tiredness", "mild", "can be extreme, lasting weeks"],
                ["Stuffy nose and sneezing", "common", "sometimes"],
            ]),
            ("ul", "Looking after yourself", [
                "Rest and fluids.",
                "Paracetamol (acetaminophen) or ibuprofen for fever and aches, following the label.",
                "Honey for a cough, but never for children under one year old.",
                "Antibiotics don't work on either virus.",
            ]),
            ("ul", "See a doctor if", [
                "You have trouble breathing or chest pain.",
                "You feel confused or can't keep fluids down.",
                "You start to recover and then get worse again.",
                "You're in a higher-risk group (over 65, pregnant, or with a chronic condition) and think it's flu; antivirals work best within 48 hours.",
            ]),
            ("p", "Prevention",
             "An annual flu vaccine is the best protection, along with handwashing. Since COVID-19 causes similar symptoms, a home test can help tell them apart."),
        ],
        "outro": [
            "Most colds clear in a week to ten days, and most flu cases improve within one to two weeks.",
            "If in doubt, phone your doctor or a nurse line; they can tell you whether you need to be seen.",
        ],
        "wrong": "Antibiotics will clear up both a cold and the flu faster, so ask your doctor for them as early as possible.",
    },
    {
        "key": "health_desk",
        "topic": "health",
        "prompts": [
            "My lower back hurts after sitting at my desk all day. How should I set up my workstation?",
            "What's the ideal desk and chair setup to avoid neck pain?",
        ],
        "intro": [
            "A good setup helps, but the biggest factor is not staying in any one position for hours.",
            "Adjust the chair first, then the desk and screen around it.",
        ],
        "sections": [
            ("ol", "Setup, step by step", [
                "Chair: feet flat on the floor, knees roughly level with your hips, lower back against the backrest or a lumbar cushion.",
                "Keyboard and mouse: close enough that your elbows stay near your sides at roughly 90 degrees, shoulders relaxed.",
                "Screen: an arm's length away, with the top of the screen at or slightly below eye level.",
                "Laptop: raise it on a stand and use a separate keyboard and mouse.",
            ]),
            ("ul", "Movement", [
                "Change position every 30-45 minutes; the best posture is the next one.",
                "Stand for calls or alternate with a standing desk if you have one.",
                "Look at something 20 feet away for 20 seconds every 20 minutes to rest your eyes.",
            ]),
            ("ul", "Stretches", [
                "Chin tucks for the neck.",
                "Cat-cow on hands and knees for the back.",
                "A kneeling hip-flexor stretch, since long sitting shortens the front of the hips.",
            ]),
            ("p", "When to get it checked",
             "See a doctor or physiotherapist if the pain lasts more than a few weeks, spreads down a leg, or comes with numbness or weakness."),
        ],
        "outro": [
            "Fix the screen height and take regular breaks first; those two changes help most people.",
            "There's no perfect posture, only postures held too long.",
        ],
        "wrong": "Sit perfectly upright at exactly 90 degrees all day without moving; any slouching is what causes back pain.",
    },
    {
        "key": "sci_sky",
        "topic": "science",
        "prompts": [
            "Why is the sky blue?",
            "Why is the sky blue during the day but red and orange at sunset?",
        ],
        "intro": [
            "Sunlight is scattered by the gas molecules in the air, and shorter (bluer) wavelengths are scattered much more than longer (redder) ones. This is called Rayleigh scattering.",
            "The colour comes from how air molecules scatter different wavelengths of sunlight.",
        ],
        "sections": [
            ("p", "Rayleigh scattering",
             "The amount of scattering grows steeply as the wavelength gets shorter, roughly with one over the wavelength to the fourth power. Blue light at about 450 nm is scattered around five times more than red light at about 700 nm, so blue light reaches your eyes from every direction of the sky."),
            ("p", "Why not violet?",
             "Violet is scattered even more, but sunlight contains less violet, some of it is absorbed high in the atmosphere, and our eyes are less sensitive to it. The mix we see looks sky blue."),
            ("p", "Sunsets",
             "When the Sun is low, its light crosses far more air to reach you. Most of the blue is scattered out along the way, leaving the reds and oranges. Dust and smoke can make sunsets even more vivid."),
            ("ul", "Related effects", [
                "Clouds look white because their droplets are large enough to scatter all colours about equally.",
                "On Mars, fine dust makes the daytime sky butterscotch and the sunsets bluish.",
            ]),
        ],
        "outro": [
            "In short: blue light bounces around the sky, and at sunset only the reds make it through.",
            "It's the same physics in both cases, just with different path lengths through the air.",
        ],
        "wrong": "The sky is blue because it reflects the colour of the oceans, which cover most of the Earth.",
    },
    {
        "key": "sci_photosynthesis",
        "topic": "science",
        "prompts": [
            "Can you explain photosynthesis simply?",
            "How does photosynthesis work, and what's the equation?",
        ],
        "intro": [
            "Photosynthesis is how plants, algae and some bacteria use light energy to turn carbon dioxide and water into sugar, releasing oxygen.",
            "In one line: 6CO₂ + 6H₂O + light energy → C₆H₁₂O₆ + 6O₂.",
        ],
        "sections": [
            ("p", "Where it happens",
             "It takes place in chloroplasts, mostly in leaf cells. Their green pigment, chlorophyll, absorbs red and blue light and reflects green, which is why leaves look green."),
            ("ol", "The two stages", [
                "Light-dependent reactions: in the thylakoid membranes, light energy splits water, releases oxygen, and makes the energy carriers ATP and NADPH.",
                "Calvin cycle: in the stroma, the enzyme RuBisCO fixes carbon dioxide, and ATP and NADPH power its conversion into sugars.",
            ]),
            ("ul", "Why it matters", [
                "It feeds almost every food chain on Earth.",
                "It produces the oxygen we breathe.",
                "It pulls carbon dioxide out of the air.",
            ]),
            ("p", "Adaptations",
             "Plants in hot, dry places use variations: C4 plants such as maize concentrate CO₂ to work efficiently, and CAM plants such as cacti open their pores at night to save water."),
        ],
        "outro": [
            "Most of a tree's mass comes from carbon dioxide pulled out of the air, not from the soil.",
            "Remember it as: light in, sugar made, oxygen out.",
        ],
        "wrong": "Plants get most of their mass from the soil; photosynthesis mainly turns soil minerals into sugar.",
    },
    {
        "key": "sci_vaccines",
        "topic": "science",
        "prompts": [
            "How do vaccines work?",
            "How do mRNA vaccines work, and can they change your DNA?",
        ],
        "intro": [
            "Vaccines train your immune system to recognise a germ without you having to get sick first.",
            "A vaccine shows your immune system a harmless piece or version of a germ, so it builds memory cells ready for the real thing.",
        ],
        "sections": [
            ("p", "Immune memory",
             "After a vaccine, B cells make antibodies against the target and T cells learn to recognise infected cells. Some of both become long-lived memory cells, so a later infection is fought off quickly, often before you feel ill."),
            ("table", "Main types", ["Type", "What it contains", "Examples"], [
                ["Live attenuated", "weakened germ", "MMR"],
                ["Inactivated", "killed germ", "injected polio vaccine"],
                ["Subunit", "one protein", "hepatitis B, HPV"],
                ["Toxoid", "inactivated toxin", "tetanus"],
                ["mRNA", "instructions for one protein", "COVID-19 vaccines"],
            ]),
            ("p", "mRNA vaccines",
             "The mRNA, wrapped in a tiny fat bubble, tells some of your cells to make one viral protein, such as the coronavirus spike. The immune system learns to recognise it, and the mRNA itself is broken down within days. It never enters the cell nucleus, where DNA is kept, so it can't change your DNA."),
            ("ul", "Side effects and community protection", [
                "A sore arm, tiredness or a mild fever for a day or two are signs of the immune response.",
                "When enough people are immune, outbreaks can't spread; for measles that takes about 95% coverage.",
            ]),
        ],
        "outro": [
            "Some vaccines need boosters because memory fades or the germ changes.",
            "It's a rehearsal, so the immune system knows its lines on the day.",
        ],
        "wrong": "Vaccines work by killing any viruses already in your body, the same way antibiotics kill bacteria.",
    },
    {
        "key": "sci_black_holes",
        "topic": "science",
        "prompts": [
            "What is a black hole and how does it form?",
            "What would happen if you fell into a black hole?",
        ],
        "intro": [
            "A black hole is a region where gravity is so strong that nothing, not even light, can escape once it crosses the boundary called the event horizon.",
            "Black holes are what's left when matter is squeezed into a small enough space that its escape speed exceeds the speed of light.",
        ],
        "sections": [
            ("ul", "How they form", [
                "Stellar black holes: the core of a very massive star collapses at the end of its life, often in a supernova.",
                "Supermassive black holes: millions to billions of solar masses, sitting at the centres of galaxies; Sagittarius A* in the Milky Way is about four million times the Sun's mass.",
            ]),
            ("p", "Size",
             "The event horizon's radius grows with mass. If the Sun were squeezed into a black hole, its event horizon would have a radius of only about 3 km."),
            ("p", "Falling in",
             "Near a small black hole, the pull on your feet would be far stronger than on your head, stretching you apart (\"spaghettification\"). Near a supermassive one the stretching is gentler, and you could cross the horizon without noticing anything special. To someone watching from far away, you would appear to slow down and fade to red."),
            ("table", "How we know they're real", ["Year", "Observation"], [
                ["2015", "LIGO detects gravitational waves from two merging black holes"],
                ["2019", "The Event Horizon Telescope images the black hole in galaxy M87"],
                ["2022", "The same team images Sagittarius A*"],
            ]),
        ],
        "outro": [
            "Stephen Hawking showed that black holes should slowly lose energy by emitting radiation, though for real black holes it's far too faint to detect.",
            "They don't suck everything in: from far enough away, a black hole pulls like any other object of the same mass.",
        ],
        "wrong": "Black holes are cosmic vacuum cleaners that will eventually suck in every star in the galaxy.",
    },
    {
        "key": "sci_tides",
        "topic": "science",
        "prompts": [
            "What causes ocean tides?",
            "Why are there two high tides a day instead of one?",
        ],
        "intro": [
            "Tides come mainly from the difference in the Moon's gravitational pull across the Earth, with a smaller contribution from the Sun.",
            "The Moon's gravity pulls on the near side of Earth more than on the far side, and that difference stretches the oceans into two bulges.",
        ],
        "sections": [
            ("p", "Two bulges",
             "On the side facing the Moon, the water is pulled toward it more strongly than the Earth as a whole. On the far side, the water is pulled less strongly than the Earth, so it's left behind. The result is a bulge on each side."),
            ("p", "Two tides a day",
             "As the Earth rotates, a given coast passes through both bulges. Because the Moon moves along its orbit, a full cycle takes about 24 hours 50 minutes, so high tides come roughly every 12 hours 25 minutes."),
            ("ul", "Spring and neap tides", [
                "Spring tides: at new and full moon the Sun and Moon line up, giving the biggest range.",
                "Neap tides: at the quarter moons they pull at right angles, giving the smallest range.",
                "The Sun's tidal effect is a bit under half the Moon's.",
            ]),
            ("p", "Local geography",
             "Coastlines and basins shape what actually happens. The Bay of Fundy in Canada can see ranges of about 16 metres, while some coasts get only one high tide a day."),
        ],
        "outro": [
            "So: gravity differences make the bulges, and Earth's rotation carries you through them.",
            "Tide tables combine these effects with local measurements to predict each port's times.",
        ],
        "wrong": "Tides are caused by wind pushing the sea toward the coast twice a day.",
    },
    {
        "key": "sci_greenhouse",
        "topic": "science",
        "prompts": [
            "Explain the greenhouse effect.",
            "How can carbon dioxide warm the planet when it's such a small part of the atmosphere?",
        ],
        "intro": [
            "Sunlight passes through the atmosphere and warms the surface; the surface gives off infrared heat, and greenhouse gases absorb part of that heat and send some back down.",
            "The amount isn't what matters; what matters is that CO₂ absorbs infrared radiation strongly, while nitrogen and oxygen barely do.",
        ],
        "sections": [
            ("ol", "Step by step", [
                "Mostly visible sunlight reaches and warms the ground and oceans.",
                "The warm surface radiates energy as infrared.",
                "Water vapour, carbon dioxide, methane and nitrous oxide absorb some of that infrared and re-emit it in all directions, including back down.",
                "The surface ends up warmer than it would be without them.",
            ]),
            ("p", "How big the natural effect is",
             "Without any greenhouse effect, Earth's average surface temperature would be about -18°C instead of about 15°C."),
            ("ul", "The human part", [
                "CO₂ has risen from about 280 ppm before industrialisation to over 420 ppm today.",
                "Methane traps far more heat per molecule than CO₂ but lasts only about a decade in the air.",
                "Warming from more CO₂ adds water vapour, which amplifies the effect.",
                "Global temperature has risen by about 1.1°C since the late 1800s.",
            ]),
            ("p", "A misleading name",
             "A real greenhouse stays warm mainly because its glass stops warm air from rising away, which is a different mechanism."),
        ],
        "outro": [
            "The greenhouse effect itself is natural and essential; the concern is the extra warming from what we've added.",
            "Small concentration, strong absorber: that's the whole story.",
        ],
        "wrong": "The greenhouse effect is caused by the hole in the ozone layer, which lets extra sunlight in to heat the planet.",
    },
    {
        "key": "sci_batteries",
        "topic": "science",
        "prompts": [
            "How does a lithium-ion battery work?",
            "Why do phone batteries lose capacity over time?",
        ],
        "intro": [
            "A lithium-ion battery stores energy by moving lithium ions between two electrodes; electrons take the outside route through your device.",
            "Capacity fades because each charge cycle causes small, irreversible chemical changes inside the cell.",
        ],
        "sections": [
            ("ul", "Parts", [
                "Anode: usually graphite, which holds lithium when charged.",
                "Cathode: a lithium metal oxide, such as NMC or lithium iron phosphate.",
                "Electrolyte: a lithium salt in an organic solvent that lets ions move.",
                "Separator: a thin porous film that keeps the electrodes from touching.",
            ]),
            ("p", "Charging and discharging",
             "When charging, the charger pushes lithium ions out of the cathode, through the electrolyte, and into the graphite. When you use the phone, they flow back, and the electrons released travel through the circuit and power it."),
            ("ul", "Why capacity fades", [
                "A film called the SEI layer grows on the anode and slowly locks away lithium.",
                "Heat speeds up every ageing reaction.",
                "Sitting at 100% charge or running down to 0% stresses the electrodes.",
                "Typical phone batteries keep about 80% of their capacity after roughly 500-1,000 full cycles.",
            ]),
            ("ul", "Making it last", [
                "Avoid heat, such as a phone on a car dashboard.",
                "Use your phone's optimised or limited charging setting.",
                "Replace a swollen battery straight away; don't keep using it.",
            ]),
        ],
        "outro": [
            "There's no memory effect, so partial top-ups are fine, even better than full cycles.",
            "Keeping the charge roughly between 20% and 80% noticeably slows wear.",
        ],
        "wrong": "Always run a lithium-ion battery all the way down to 0% before charging, or it develops a memory effect and loses capacity.",
    },
    {
        "key": "sci_seasons",
        "topic": "science",
        "prompts": [
            "Why do we have seasons?",
            "Is it summer because the Earth is closer to the Sun?",
        ],
        "intro": [
            "Seasons happen because Earth's axis is tilted about 23.4 degrees relative to its orbit, not because of its distance from the Sun.",
            "Distance isn't the reason: Earth is actually closest to the Sun in early January, during the northern winter. The tilt of the axis is what matters.",
        ],
        "sections": [
            ("ul", "What the tilt does", [
                "Steeper sunlight: the hemisphere tilted toward the Sun receives light more directly, concentrating its energy on each square metre.",
                "Longer days: the same hemisphere gets more hours of daylight to warm up.",
                "Six months later the situation reverses.",
            ]),
            ("table", "Key dates (Northern Hemisphere)", ["Around", "Event"], [
                ["20 March", "spring equinox"],
                ["21 June", "summer solstice, longest day"],
                ["22-23 September", "autumn equinox"],
                ["21 December", "winter solstice, shortest day"],
            ]),
            ("p", "Distance",
             "Earth's orbit is nearly circular: the distance changes by only about 3%, which changes the sunlight received by roughly 7%. That's much smaller than the effect of the tilt."),
            ("p", "Near the equator and poles",
             "Near the equator the Sun stays high all year, so seasons are mostly wet and dry rather than warm and cold. Near the poles, the tilt means months of midnight sun in summer and polar night in winter."),
        ],
        "outro": [
            "That's why Australia has summer at Christmas.",
            "Tilt, not distance, is the whole answer.",
        ],
        "wrong": "Seasons happen because Earth's orbit brings it much closer to the Sun in summer and much farther away in winter.",
    },
    {
        "key": "fin_index_funds",
        "topic": "finance",
        "prompts": [
            "Should I invest in index funds or pick individual stocks?",
            "What is an index fund and why do people recommend them for beginners?",
        ],
        "intro": [
            "For most people, low-cost index funds are the better core holding; individual stocks add risk without an expected reward for that risk.",
            "An index fund simply buys every company in an index, such as the S&P 500, so you own a slice of the whole market.",
        ],
        "sections": [
            ("ul", "Why index funds", [
                "Diversification: hundreds or thousands of companies in one purchase.",
                "Low fees: expense ratios are often below 0.1% a year, against 0.5-1% for many actively managed funds.",
                "Track record: most active large-company funds trail the index over 10-15 years, according to S&P's SPIVA reports.",
                "Simplicity: no need to research individual companies.",
            ]),
            ("p", "The risks that remain",
             "Index funds still fall with the market. The S&P 500 lost more than half its value from peak to trough in 2007-09. Money you'll need within about five years belongs in safer places."),
            ("p", "If you enjoy stock picking",
             "A common approach is \"core and satellite\": keep most of your money, say 90%, in index funds and use a small slice for individual stocks you want to follow."),
            ("ul", "Getting started", [
                "Use tax-advantaged accounts first, if you have them.",
                "Automate a monthly contribution.",
                "Don't sell in a panic when markets drop.",
            ]),
        ],
        "outro": [
            "This is general information, not personal advice; your goals and timeline matter.",
            "Boring and cheap tends to win over decades.",
        ],
        "wrong": "Index funds are guaranteed by the government not to lose money, so they're as safe as a savings account.",
    },
    {
        "key": "fin_credit_score",
        "topic": "finance",
        "prompts": [
            "How can I improve my credit score?",
            "What actually affects a credit score?",
        ],
        "intro": [
            "Paying on time and keeping card balances low do most of the work; everything else is fine-tuning.",
            "FICO, the most widely used US score, publishes the rough weights of what it looks at.",
        ],
        "sections": [
            ("table", "What goes into a FICO score", ["Factor", "Weight"], [
                ["Payment history", "35%"],
                ["Amounts owed (utilisation)", "30%"],
                ["Length of credit history", "15%"],
                ["New credit", "10%"],
                ["Credit mix", "10%"],
            ]),
            ("ol", "What to do", [
                "Pay every bill on time; set up autopay for at least the minimum.",
                "Keep card balances under 30% of the limit, and under 10% if you can.",
                "Keep old accounts open; they lengthen your history.",
                "Apply for new credit only when you need it; each application causes a hard inquiry.",
                "Check your reports for free at AnnualCreditReport.com and dispute any errors.",
            ]),
            ("p", "How long things take",
             "Late payments stay on your report for seven years, but their effect fades, especially once you've built a run of on-time payments. Lower utilisation can lift a score within a month or two."),
        ],
        "outro": [
            "Checking your own score is a soft inquiry and never lowers it.",
            "Give it six months of steady habits and you'll see the difference.",
        ],
        "wrong": "Checking your own credit score lowers it, so you should avoid looking at it more than once a year.",
    },
]


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


DEBTS = [
    ("Credit card", 4200, 22.9), ("Car loan", 9800, 6.4), ("Store card", 850, 26.9),
    ("Personal loan", 3000, 11.5), ("Student loan", 14500, 5.2), ("Second credit card", 1900, 19.9),
]


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


EMAIL_SCENARIOS = [
    {
        "draft": "Hey {r}, I can't finish {thing} by {day}. I need more time. Let me know.",
        "formal": "Subject: {Thing} timeline\n\nHi {r},\n\nI wanted to give you an early heads-up about {thing}, which is due on {day}. Two sections are taking longer than planned because I'm still waiting on figures from finance, and I don't want to send you something incomplete.\n\nWould it be possible to move the deadline to {later}? I can share a draft of the finished sections on {day} so you can see where things stand.\n\nThanks for understanding,\n{s}",
        "short": "Hi {r},\n\nI'm running behind on {thing} and won't have it ready to the standard I want by {day}. Could I have until {later}? I'll send what I have on {day} either way.\n\nThanks,\n{s}",
        "notes": ["Give the reason briefly; one sentence is enough.",
                  "Propose a specific new date instead of an open-ended \"more time\".",
                  "Offer something in the meantime, such as a partial draft.",
                  "Ask rather than announce; it leaves the decision with your manager."],
        "bad": "Hi {r}, I can't finish {thing} by {day}, so I need more time. Please let me know. Thanks.",
    },
    {
        "draft": "You still haven't paid invoice #{inv}. It's been {days} days. Pay it now.",
        "formal": "Subject: Invoice #{inv}: payment reminder\n\nHi {r},\n\nI hope things are going well. I'm following up on invoice #{inv} for {amount}, which was due {days} days ago. I haven't seen the payment come through yet, so I wanted to check that you received the invoice and whether anything is holding it up.\n\nI've attached a copy for convenience. Could you let me know when I can expect payment?\n\nBest regards,\n{s}",
        "short": "Hi {r},\n\nJust a quick reminder that invoice #{inv} ({amount}) is now {days} days past its due date. Could you confirm when it will be paid? I'm happy to resend it if it went astray.\n\nThanks,\n{s}",
        "notes": ["Assume good faith first; invoices do get lost.",
                  "Include the number, amount and due date so they can act immediately.",
                  "Ask for a specific response, such as a payment date.",
                  "Keep a firmer second reminder in reserve in case this one goes unanswered."],
        "bad": "Dear {r}, you still haven't paid invoice #{inv} and it has been {days} days. Please pay it now.",
    },
    {
        "draft": "I can't come to the {meeting} on {day}, it's a waste of my time.",
        "formal": "Subject: {Meeting} on {day}\n\nHi {r},\n\nThanks for the invitation to the {meeting} on {day}. Unfortunately I won't be able to attend, as I'm committed to {commitment} that afternoon.\n\nIf there's anything you need from me, I'm happy to send my updates in writing beforehand, and I'll catch up on the notes afterwards.\n\nBest,\n{s}",
        "short": "Hi {r},\n\nI'm going to sit out the {meeting} on {day} so I can stay focused on {commitment}. Could you share the notes afterwards? If a decision needs my input, just flag it and I'll reply the same day.\n\nThanks,\n{s}",
        "notes": ["Drop the judgement about the meeting; it won't change the meeting and it costs goodwill.",
                  "Give a brief, neutral reason.",
                  "Offer another way to contribute.",
                  "If meetings often feel unproductive, raise that separately and constructively."],
        "bad": "Hi {r}, I can't come to the {meeting} on {day} because it's not a good use of my time. Sorry.",
    },
    {
        "draft": "The heating has been broken for a week and nobody has fixed it. This is ridiculous.",
        "formal": "Subject: Heating repair at {address}\n\nDear {r},\n\nI'm writing about the heating at {address}, which stopped working a week ago. I reported it by phone the same day, but it hasn't been repaired yet, and the flat is now very cold at night.\n\nCould you please arrange a repair within the next two days and let me know when to expect the engineer? I'm happy to be flexible about access.\n\nKind regards,\n{s}",
        "short": "Dear {r},\n\nFollowing up on my call last week: the heating at {address} still isn't working. Could you tell me when a repair is scheduled? It's getting hard to keep warm in the evenings.\n\nThank you,\n{s}",
        "notes": ["Put the key facts first: what's broken, since when, and when you reported it.",
                  "Ask for a specific action and timeframe.",
                  "Keep a written record; email is better than phone for that.",
                  "Check your local tenancy rules on repair deadlines in case you need to escalate."],
        "bad": "Dear {r}, the heating has been broken for a week and nobody has fixed it, which is ridiculous. Please fix it.",
    },
]


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


COVER_ROLES = [
    ("data analyst", "a national retail chain", "built a sales dashboard that cut weekly reporting from a full day to an hour"),
    ("project coordinator", "a construction firm", "kept a 40-unit housing project on schedule through two supplier changes"),
    ("UX designer", "a fintech startup", "redesigned a checkout flow that raised completed purchases by 18%"),
    ("registered nurse", "a community hospital", "trained twelve new nurses on the cardiac ward's discharge process"),
    ("marketing coordinator", "a regional nonprofit", "grew the newsletter from 3,000 to 11,000 subscribers in a year"),
    ("software engineer", "a logistics company", "rewrote a route-planning service that cut API response times by 60%"),
]


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


CITIES = {
    "Lisbon": {
        "days": [
            ("Baixa and Alfama", ["Start at Praça do Comércio on the riverfront.", "Ride Tram 28 early, before the queues build.", "Climb to São Jorge Castle and the Miradouro de Santa Luzia viewpoint.", "Have dinner with live fado in Alfama."]),
            ("Belém", ["Visit the Jerónimos Monastery; book ahead in summer.", "Walk to the Belém Tower and the Monument to the Discoveries.", "Try the custard tarts at Pastéis de Belém.", "Finish at the MAAT museum by the river."]),
            ("Sintra day trip", ["Take the train from Rossio station, about 40 minutes.", "Book a timed ticket for Pena Palace.", "Explore the gardens and well of Quinta da Regaleira.", "Walk the walls of the Moorish Castle if you have energy left."]),
            ("LX Factory and sunset", ["Browse the shops and cafés of LX Factory.", "Eat at the Time Out Market.", "Watch the sunset from the Miradouro da Senhora do Monte."]),
        ],
        "food": ["Bifana, a garlicky pork sandwich.", "Bacalhau à Brás, salt cod with eggs and potatoes.", "Grilled sardines in summer.", "A shot of ginjinha, the local cherry liqueur."],
        "transport": "Buy a rechargeable Viva Viagem card for the metro, trams and trains. Lisbon is very hilly, so bring comfortable shoes and use the trams and funiculars.",
        "wrong": "Skip Sintra: it's a two-hour drive each way, so it isn't worth a day trip from Lisbon.",
    },
    "Kyoto": {
        "days": [
            ("Fushimi Inari and Gion", ["Walk through the torii gates of Fushimi Inari early in the morning.", "Visit Tōfuku-ji, especially in autumn.", "Stroll Gion and Hanamikōji Street in the evening."]),
            ("Arashiyama", ["Reach the bamboo grove before 8 a.m. to avoid crowds.", "Visit Tenryū-ji and its garden.", "See the Ōkōchi Sansō villa.", "Climb to the Iwatayama monkey park for city views."]),
            ("Golden Pavilion and markets", ["See Kinkaku-ji, the Golden Pavilion.", "Sit with the rock garden at Ryōan-ji.", "Graze your way through Nishiki Market."]),
            ("Nara day trip", ["Take the train to Nara, about 45 minutes.", "See the giant Buddha at Tōdai-ji.", "Meet the deer in Nara Park.", "Walk the lantern-lined paths of Kasuga Taisha."]),
        ],
        "food": ["A kaiseki dinner, at least once.", "Yudōfu, simmered tofu, near Nanzen-ji or Arashiyama.", "Matcha sweets and soft-serve.", "Street snacks in Nishiki Market."],
        "transport": "Get an ICOCA card for buses and trains. Buses are slow and crowded at peak times, so combine trains and walking where you can.",
        "wrong": "Most Kyoto temples stay open until midnight, so you can leave them all for the evenings.",
    },
    "Rome": {
        "days": [
            ("Ancient Rome", ["Visit the Colosseum with a combined ticket for the Roman Forum and Palatine Hill; book ahead.", "Walk through the Forum and up the Palatine.", "End at the Capitoline Hill for the view over the Forum."]),
            ("Vatican", ["Book the Vatican Museums and Sistine Chapel for the morning.", "Visit St Peter's Basilica; shoulders and knees must be covered.", "Walk to Castel Sant'Angelo along the river."]),
            ("Centro storico", ["See the Trevi Fountain early, before the crowds.", "Visit the Pantheon and Piazza Navona.", "Climb the Spanish Steps.", "Cross the river for dinner in Trastevere."]),
            ("Borghese and Testaccio", ["See the Borghese Gallery, which requires a reservation.", "Walk in the Villa Borghese gardens.", "Eat your way through the Testaccio market."]),
        ],
        "food": ["Cacio e pepe and carbonara.", "Supplì, fried rice balls with mozzarella.", "Pizza al taglio for lunch on the go.", "Gelato from a shop that keeps it in covered tins."],
        "transport": "The historic centre is best on foot. Fill your bottle at the public drinking fountains, and expect a small cover charge (coperto) in many restaurants.",
        "wrong": "The Vatican Museums are open every Sunday and you never need to book, so just turn up whenever you like.",
    },
    "Edinburgh": {
        "days": [
            ("Old Town", ["Tour Edinburgh Castle; book a morning slot.", "Walk down the Royal Mile to St Giles' Cathedral.", "Browse the colourful shops of Victoria Street.", "Visit Greyfriars Kirkyard."]),
            ("Arthur's Seat and Holyrood", ["Hike Arthur's Seat in the morning, about an hour up.", "Visit the Palace of Holyroodhouse.", "Walk along the Water of Leith to Dean Village and Stockbridge."]),
            ("Museums and New Town", ["Spend the morning in the free National Museum of Scotland.", "Walk Princes Street Gardens and the Georgian New Town.", "Catch the sunset from Calton Hill."]),
            ("Day trip", ["Visit Stirling Castle, under an hour by train.", "Or join a coach tour to Glencoe and the Highlands for a long but spectacular day."]),
        ],
        "food": ["Haggis with neeps and tatties.", "Cullen skink, a smoked haddock soup.", "A full Scottish breakfast.", "Shortbread and a dram of whisky."],
        "transport": "Edinburgh is compact and walkable, but hilly and often wet, so pack layers and a rain jacket. Lothian buses and the tram cover the rest, including the airport.",
        "wrong": "Loch Ness is only a 30-minute drive from Edinburgh, so it's an easy afternoon trip.",
    },
}


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


MEALS = {
    "breakfast": ["Overnight oats with chia seeds and berries", "Greek yogurt with granola and sliced banana",
                  "Scrambled eggs on wholegrain toast with spinach", "Peanut butter toast and an apple",
                  "Veggie omelette with peppers and feta", "Smoothie with spinach, frozen mango, oats and milk",
                  "Cottage cheese with pineapple and walnuts"],
    "lunch": ["Lentil soup with crusty bread", "Chickpea salad wrap with cucumber and yogurt sauce",
              "Leftover chili over a baked potato", "Quinoa bowl with roasted vegetables and hummus",
              "Tomato and mozzarella sandwich with a side salad", "Black bean and corn quesadillas", "Egg fried rice with frozen peas"],
    "vegetarian": ["Vegetable chili with rice (make a double batch)", "Pasta with tomato sauce, white beans and spinach",
                   "Tofu and broccoli stir-fry with noodles", "Sheet-pan halloumi with peppers and potatoes",
                   "Red lentil dal with rice and yogurt", "Homemade pizza with whatever vegetables are left", "Shakshuka with crusty bread"],
    "omnivore": ["Turkey chili with rice (make a double batch)", "Baked salmon with roasted potatoes and green beans",
                 "Chicken and vegetable stir-fry with rice", "Sheet-pan chicken thighs with carrots and onions",
                 "Beef and bean tacos with crunchy slaw", "Pasta with tomato sauce, white beans and spinach", "Shakshuka with crusty bread"],
}
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

SOURCES = {  # references that fit any subject of the topic
    "programming": [("Stack Overflow", "https://stackoverflow.com"), ("The Missing Semester of Your CS Education", "https://missing.csail.mit.edu")],
    "math": [("Khan Academy: Pre-algebra", "https://www.khanacademy.org/math/pre-algebra"),
             ("OpenStax Prealgebra 2e", "https://openstax.org/details/books/prealgebra-2e")],
    "cooking": [("Serious Eats", "https://www.seriouseats.com"), ("BBC Good Food", "https://www.bbcgoodfood.com")],
    "travel": [("Lonely Planet", "https://www.lonelyplanet.com"), ("Rick Steves Europe", "https://www.ricksteves.com")],
    "history": [("Encyclopaedia Britannica", "https://www.britannica.com"),
                ("Khan Academy: World history", "https://www.khanacademy.org/humanities/world-history")],
    "health": [("MedlinePlus", "https://medlineplus.gov"), ("NIH guidance", "https://www.nih.gov/health-information"),
               ("Mayo Clinic", "https://www.mayoclinic.org")],
    "science": [("Encyclopaedia Britannica", "https://www.britannica.com"), ("Khan Academy: Science", "https://www.khanacademy.org/science")],
    "finance": [("Consumer Financial Protection Bureau", "https://www.consumerfinance.gov"), ("Investor.gov", "https://www.investor.gov")],
    "writing": [("Purdue OWL", "https://owl.purdue.edu/owl/general_writing/"), ("Grammarly Blog", "https://www.grammarly.com/blog/")],
}
KEY_SOURCES = {  # references specific to one subject
    "py_dedupe": [("Python documentation: dict.fromkeys", "https://docs.python.org/3/library/stdtypes.html#dict.fromkeys")],
    "py_csv_average": [("Python documentation: csv", "https://docs.python.org/3/library/csv.html"),
                       ("pandas: read_csv", "https://pandas.pydata.org/docs/reference/api/pandas.read_csv.html")],
    "py_word_count": [("Python documentation: collections.Counter", "https://docs.python.org/3/library/collections.html#collections.Counter")],
    "py_sort_dicts": [("Python Sorting HOW TO", "https://docs.python.org/3/howto/sorting.html")],
    "py_retry": [("tenacity documentation", "https://tenacity.readthedocs.io")],
    "py_nested_index": [("Python tutorial: Lists", "https://docs.python.org/3/tutorial/introduction.html#lists"),
                        ("NumPy: Indexing on ndarrays", "https://numpy.org/doc/stable/user/basics.indexing.html")],
    "py_find_files": [("Python documentation: pathlib", "https://docs.python.org/3/library/pathlib.html")],
    "py_venv": [("Python documentation: venv", "https://docs.python.org/3/library/venv.html")],
    "sql_top_customers": [("PostgreSQL documentation: Aggregate Functions", "https://www.postgresql.org/docs/current/functions-aggregate.html")],
    "sql_duplicates": [("PostgreSQL documentation: DELETE", "https://www.postgresql.org/docs/current/sql-delete.html")],
    "sql_running_total": [("PostgreSQL documentation: Window Functions", "https://www.postgresql.org/docs/current/tutorial-window.html")],
    "sql_no_orders": [("PostgreSQL documentation: Subquery Expressions", "https://www.postgresql.org/docs/current/functions-subquery.html")],
    "sh_delete_old": [("GNU Findutils manual", "https://www.gnu.org/software/findutils/manual/html_mono/find.html")],
    "sh_count_lines": [("GNU Coreutils: wc invocation", "https://www.gnu.org/software/coreutils/manual/html_node/wc-invocation.html")],
    "sh_rename_ext": [("Bash Reference Manual: Shell Parameter Expansion", "https://www.gnu.org/software/bash/manual/html_node/Shell-Parameter-Expansion.html")],
    "sh_disk_usage": [("ncdu", "https://dev.yorhel.nl/ncdu"), ("GNU Coreutils: du invocation", "https://www.gnu.org/software/coreutils/manual/html_node/du-invocation.html")],
    "cook_rice": [("USDA FoodKeeper", "https://www.foodsafety.gov/keep-food-safe/foodkeeper-app")],
    "cook_banana_bread": [("King Arthur Baking blog", "https://www.kingarthurbaking.com/blog")],
    "cook_egg_sub": [("King Arthur Baking blog", "https://www.kingarthurbaking.com/blog")],
    "travel_packing": [("TSA: Liquids Rule", "https://www.tsa.gov/travel/security-screening/liquids-rule")],
    "travel_jetlag": [("CDC Yellow Book", "https://www.cdc.gov/yellow-book")],
    "t_lisbon": [("Visit Lisboa", "https://www.visitlisboa.com")],
    "t_kyoto": [("Kyoto City Official Travel Guide", "https://kyoto.travel/en/")],
    "t_rome": [("Musei Vaticani", "https://www.museivaticani.va")],
    "t_edinburgh": [("VisitScotland", "https://www.visitscotland.com")],
    "hist_ww1": [("Imperial War Museums", "https://www.iwm.org.uk/history")],
    "hist_apollo": [("NASA: Apollo 11 Mission Overview", "https://www.nasa.gov/mission/apollo-11/")],
    "hist_berlin_wall": [("Berlin Wall Memorial", "https://www.stiftung-berliner-mauer.de/en")],
    "health_sleep": [("CDC: About Sleep", "https://www.cdc.gov/sleep/")],
    "health_protein": [("The Nutrition Source: Protein", "https://www.hsph.harvard.edu/nutritionsource/what-should-you-eat/protein/")],
    "health_cold_flu": [("NHS: Flu", "https://www.nhs.uk/conditions/flu/"), ("CDC: Flu", "https://www.cdc.gov/flu/")],
    "health_water": [("National Academies: Dietary Reference Intakes", "https://www.nationalacademies.org")],
    "sci_sky": [("NASA Science: Why is the sky blue?", "https://science.nasa.gov")],
    "sci_tides": [("NOAA Ocean Service: Tides", "https://oceanservice.noaa.gov/facts/")],
    "sci_greenhouse": [("IPCC AR6 Synthesis Report", "https://www.ipcc.ch/report/ar6/syr/")],
    "sci_vaccines": [("CDC: How vaccines work", "https://www.cdc.gov/vaccines/")],
    "sci_black_holes": [("NASA Science: Black Holes", "https://science.nasa.gov/universe/black-holes/")],
    "sci_batteries": [("Battery University", "https://batteryuniversity.com")],
    "fin_credit_score": [("myFICO: What's in my FICO Scores", "https://www.myfico.com/credit-education/whats-in-your-credit-score"),
                         ("AnnualCreditReport.com", "https://www.annualcreditreport.com")],
    "fin_index_funds": [("S&P Dow Jones Indices: SPIVA", "https://www.spglobal.com/spdji/en/research-insights/spiva/")],
    "fin_compound": [("Investor.gov: Compound Interest Calculator", "https://www.investor.gov/financial-tools-calculators/calculators/compound-interest-calculator")],
}
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

WARMUPS = {
    "programming": [("Quick question first: what's the difference between a list and a tuple in Python?",
                     "A list is mutable, so you can add, remove and change items; a tuple is immutable once created. Tuples are often used for fixed records, such as coordinates, and can be dictionary keys."),
                    ("Is SQL case-sensitive?",
                     "Keywords like SELECT aren't case-sensitive. Whether string comparisons are depends on the database and its collation: MySQL's default is case-insensitive, PostgreSQL's is case-sensitive.")],
    "math": [("What's 15% of 80?", "15% of 80 is 0.15 × 80 = 12."),
             ("How do I turn a fraction into a percentage?", "Divide the top by the bottom and multiply by 100. For example, 3/8 = 0.375, which is 37.5%.")],
    "cooking": [("Is it okay to use salted butter in baking?", "Yes, usually. Just cut the added salt by about ¼ teaspoon per stick (113 g) of butter."),
                ("What does 'simmer' mean exactly?", "A simmer is below a full boil: small bubbles break the surface gently and steadily, around 85-95°C.")],
    "travel": [("Do I need a visa for a short holiday in Europe?", "It depends on your passport. Many nationalities can visit the Schengen area visa-free for up to 90 days in any 180; check the official government site for yours."),
               ("Is it better to exchange money before I travel?", "Usually not. A card with no foreign transaction fees and an ATM withdrawal on arrival tend to give better rates than airport exchange desks.")],
    "history": [("When did World War II end?", "In Europe on 8 May 1945 (VE Day), and in the Pacific with Japan's surrender, announced on 15 August and signed on 2 September 1945."),
                ("Who was the first emperor of Rome?", "Augustus, who ruled from 27 BC until his death in AD 14.")],
    "health": [("How many steps a day is healthy?", "There's no magic number, but studies link roughly 7,000-8,000 steps a day to lower mortality compared with very low counts; benefits level off above that."),
               ("Is it bad to exercise every day?", "Light to moderate activity every day is fine and healthy. For hard workouts, alternate intensity and muscle groups so your body can recover.")],
    "science": [("What is light made of?", "Light is electromagnetic radiation; it behaves both as a wave and as a stream of particles called photons."),
                ("How old is the Earth?", "About 4.54 billion years, based on radiometric dating of meteorites and the oldest Earth minerals.")],
    "finance": [("What's the difference between a debit card and a credit card?", "A debit card spends money already in your account; a credit card borrows money you repay later, with interest if you don't pay the full balance."),
                ("What does APR mean?", "Annual percentage rate: the yearly cost of borrowing, including interest and some fees, expressed as a percentage.")],
    "writing": [("Should I use 'who' or 'whom' in emails?", "Use 'whom' when it's the object of a verb or preposition ('to whom'), but 'who' is widely accepted in everyday writing."),
                ("Is it okay to start an email with 'Hey'?", "With colleagues you know well, yes. For clients, managers you don't know well or formal requests, 'Hi' or 'Hello' is safer.")],
}
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


FORCED = [  # answers that carry the look-alikes the clean stage must leave alone
    ("py_nested_index", "own_better", "numeric", "h2"),
    ("health_protein", "other_better", "sup", "bold"),
    ("travel_packing", "own_better", "fullwidth", "plain"),
    ("sci_sky", "own_better", "links", None),
    ("hist_rome", "other_better", "footnote", None),
]


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

CONCEPTS = [
    ("inflation", "the general rise in prices over time, which means each unit of money buys a little less", "If a loaf of bread costs $3 this year and $3.15 next year, that is 5% inflation for bread."),
    ("opportunity cost", "the value of the best alternative you give up when you make a choice", "Spending Saturday studying has the opportunity cost of the shift you could have worked."),
    ("supply and demand", "the model in which prices settle where the quantity sellers offer matches the quantity buyers want", "When a frost ruins the orange harvest, supply falls and orange prices rise."),
    ("compound interest", "interest calculated on both the original amount and the interest already earned", "At 10% a year, $100 grows to $110 and then to $121."),
    ("a budget deficit", "the gap when a government spends more in a year than it collects in revenue", "A country that collects $900 billion and spends $1 trillion runs a $100 billion deficit."),
    ("photosynthesis", "the process plants use to turn light, water and carbon dioxide into sugar and oxygen", "A leaf in sunlight takes in carbon dioxide and releases oxygen."),
    ("an ecosystem", "a community of living things interacting with each other and with their physical environment", "A pond with its fish, insects, plants, water and mud is an ecosystem."),
    ("evaporation", "the change of a liquid into a gas at its surface, below its boiling point", "A puddle disappears on a warm afternoon because the water evaporates."),
    ("friction", "the force that resists two surfaces sliding against each other", "Rubbing your hands together warms them because of friction."),
    ("gravity", "the attraction between masses, which keeps us on the ground and the planets in orbit", "A dropped apple falls because Earth's gravity pulls it down."),
    ("an atom", "the smallest unit of a chemical element, made of a nucleus surrounded by electrons", "A single atom of gold is still gold; split it and it is not."),
    ("a catalyst", "a substance that speeds up a chemical reaction without being used up", "Enzymes in saliva act as catalysts that break down starch."),
    ("erosion", "the wearing away of rock and soil by water, wind or ice", "A river slowly carving a canyon is an example of erosion."),
    ("an algorithm", "a step-by-step procedure for solving a problem or completing a task", "A recipe for pancakes is an everyday algorithm."),
    ("a variable", "in programming, a named place that stores a value which can change", "In `count = 3`, the variable count holds the value 3."),
    ("recursion", "a technique in which a function solves a problem by calling itself on smaller versions of it", "Computing 5! as 5 × 4! is a recursive definition."),
    ("encryption", "scrambling data so that only someone with the right key can read it", "HTTPS encrypts the connection between your browser and a website."),
    ("a database index", "a data structure that lets a database find rows quickly without scanning the whole table", "An index on email makes looking up a user by email fast."),
    ("open-source software", "software whose source code anyone may read, modify and share under its licence", "Linux and Python are open-source projects."),
    ("a metaphor", "a figure of speech that describes something as if it were something else", "\"Time is a thief\" is a metaphor."),
    ("alliteration", "the repetition of the same first sound in nearby words", "\"Peter Piper picked a peck of pickled peppers\" uses alliteration."),
    ("a thesis statement", "one or two sentences that state the main argument of an essay", "\"Cities should expand bike lanes because they cut traffic and pollution\" is a thesis statement."),
    ("the passive voice", "a sentence structure in which the subject receives the action", "\"The window was broken by the storm\" is in the passive voice."),
    ("an oxymoron", "a phrase that combines two contradictory words", "\"Deafening silence\" is an oxymoron."),
    ("democracy", "a system of government in which citizens hold power, usually by voting for representatives", "Holding regular, free elections is a feature of democracy."),
    ("a constitution", "the set of fundamental rules that defines how a state is governed", "It sets out which branch of government makes, carries out and interprets laws."),
    ("the placebo effect", "an improvement in symptoms caused by expecting a treatment to work rather than by the treatment itself", "Patients given sugar pills sometimes report less pain."),
    ("a vaccine", "a preparation that trains the immune system to recognise a germ without causing the disease", "A flu shot prepares your body to fight influenza."),
    ("metabolism", "all the chemical processes in the body that turn food into energy and building blocks", "Your metabolism keeps running even while you sleep."),
    ("hydration", "keeping the body supplied with enough water to work properly", "Drinking water during a long hike maintains hydration."),
    ("a renewable resource", "a natural resource that replenishes itself on a human timescale", "Sunlight and wind are renewable resources."),
    ("biodiversity", "the variety of living things in a place, from genes to species to ecosystems", "A coral reef has very high biodiversity."),
    ("climate", "the average weather of a place over many years", "A desert climate is dry most of the year, even if it rains one day."),
    ("a peninsula", "a piece of land surrounded by water on three sides", "Italy is a peninsula."),
    ("latitude", "the distance north or south of the equator, measured in degrees", "The equator is at 0 degrees latitude."),
    ("a prime number", "a whole number greater than 1 whose only divisors are 1 and itself", "7 is prime, but 9 is not because 3 divides it."),
    ("a ratio", "a comparison of two quantities by division", "A class with 12 girls and 8 boys has a girls-to-boys ratio of 3:2."),
    ("the median", "the middle value of a sorted list of numbers", "The median of 2, 5 and 11 is 5."),
    ("probability", "a number between 0 and 1 that measures how likely an event is", "A fair coin lands heads with probability 1/2."),
    ("a hypothesis", "a testable prediction that explains an observation", "\"Plants grow taller with more light\" is a hypothesis you can test."),
    ("a control group", "the group in an experiment that does not receive the treatment, used for comparison", "In a drug trial, the control group might receive a placebo."),
    ("procrastination", "delaying a task even though you expect the delay to make things worse", "Cleaning your desk instead of starting an essay is classic procrastination."),
    ("active listening", "giving full attention to a speaker, checking your understanding and responding thoughtfully", "Summarising what someone said before replying is part of active listening."),
    ("a mortgage", "a loan used to buy property, with the property as security", "A 30-year mortgage is repaid in monthly instalments."),
    ("diversification", "spreading investments across many assets to reduce risk", "Owning a fund of 500 companies is more diversified than owning one stock."),
    ("a credit score", "a number that summarises how reliably someone has repaid debts", "Lenders check your credit score before approving a loan."),
    ("fermentation", "the breakdown of sugars by yeast or bacteria without oxygen", "Yeast fermentation makes bread rise and turns grape juice into wine."),
    ("the Maillard reaction", "the browning reaction between proteins and sugars that gives seared and baked foods their flavour", "The crust on toast and a seared steak both come from the Maillard reaction."),
    ("emulsification", "mixing two liquids that normally separate, such as oil and water, into a stable blend", "Mayonnaise is an emulsion of oil and egg yolk."),
    ("jet lag", "tiredness and disrupted sleep caused by crossing time zones faster than the body clock can adjust", "Flying from London to Tokyo often brings several days of jet lag."),
    ("a watershed", "an area of land that drains into a particular river, lake or sea", "Rain falling anywhere in the Mississippi watershed ends up in the Gulf of Mexico."),
    ("the water cycle", "the continuous movement of water between the oceans, the air and the land", "Water evaporates from the sea, falls as rain and flows back in rivers."),
    ("a food chain", "a sequence showing which living things eat which others", "Grass is eaten by rabbits, and rabbits are eaten by foxes."),
    ("a neuron", "a nerve cell that carries electrical and chemical signals", "Neurons in your spinal cord carry the signal to pull your hand from a hot stove."),
    ("an exoplanet", "a planet that orbits a star other than the Sun", "Thousands of exoplanets have been found by space telescopes."),
    ("a light-year", "the distance light travels in one year, about 9.46 trillion kilometres", "The nearest star beyond the Sun is about 4.2 light-years away."),
    ("a firewall", "a system that filters network traffic according to security rules", "A home router's firewall blocks unsolicited incoming connections."),
    ("version control", "software that records changes to files so you can review history and undo mistakes", "Git is the most widely used version control system."),
    ("a spreadsheet", "a grid of cells for organising, calculating and analysing data", "A household budget is easy to keep in a spreadsheet."),
    ("a haiku", "a short poem of three lines with five, seven and five syllables", "Haiku traditionally refer to a season or a moment in nature."),
]

TIPS = [
    ("sleeping better", ["Keep the same bedtime and wake time every day.", "Avoid caffeine after early afternoon.", "Keep your bedroom cool, dark and quiet.", "Put screens away an hour before bed.", "Get some daylight in the morning.", "Save your bed for sleep."]),
    ("studying for an exam", ["Start at least a week ahead and spread the work out.", "Test yourself instead of rereading notes.", "Study in short focused blocks with breaks.", "Explain the material aloud as if teaching it.", "Do past papers under timed conditions.", "Sleep well the night before."]),
    ("saving money on groceries", ["Plan meals for the week before you shop.", "Make a list and stick to it.", "Buy store brands for staples.", "Compare unit prices, not package prices.", "Cook in batches and freeze leftovers.", "Don't shop when you're hungry."]),
    ("staying focused while working from home", ["Set up a dedicated workspace.", "Start at the same time every day.", "Put your phone in another room.", "Work in timed blocks with short breaks.", "Write down the three priorities for the day.", "Close unused browser tabs."]),
    ("learning a new language", ["Practise a little every day rather than a lot once a week.", "Learn the most common words first.", "Listen to podcasts or music in the language.", "Speak from the start, even with mistakes.", "Use spaced-repetition flashcards.", "Find a conversation partner."]),
    ("running your first 5K", ["Start with run/walk intervals.", "Run slowly enough to hold a conversation.", "Train three times a week with rest days between.", "Get properly fitted running shoes.", "Increase your distance gradually.", "Don't try anything new on race day."]),
    ("writing a clear email", ["Put the main point in the first two sentences.", "Use a specific subject line.", "Keep paragraphs short.", "Say exactly what you need and by when.", "Read it once before sending.", "Cut any sentence that adds nothing."]),
    ("keeping houseplants alive", ["Check how much light each plant needs.", "Water when the top inch of soil is dry.", "Use pots with drainage holes.", "Wipe dust off the leaves.", "Feed them lightly in spring and summer.", "Don't move them around too often."]),
    ("reducing stress", ["Take a short walk outside.", "Try slow breathing for two minutes.", "Write down what's worrying you.", "Limit news and social media.", "Keep a regular sleep schedule.", "Talk to someone you trust."]),
    ("giving a good presentation", ["Know your main message in one sentence.", "Use fewer words on each slide.", "Rehearse out loud at least twice.", "Start with a question or a story.", "Look at the audience, not the screen.", "Finish on time."]),
    ("cooking more at home", ["Start with a handful of simple recipes.", "Keep basic staples in the pantry.", "Cook double and eat leftovers.", "Prep vegetables once for several meals.", "Use a slow cooker or sheet pan for easy dinners.", "Invite a friend to cook with you."]),
    ("preparing for a job interview", ["Research the company and the role.", "Prepare stories that show your skills.", "Practise common questions out loud.", "Have two or three questions to ask them.", "Plan your route or test your video setup.", "Send a short thank-you note afterwards."]),
    ("drinking more water", ["Carry a reusable bottle.", "Drink a glass with every meal.", "Add lemon or cucumber for flavour.", "Set reminders on your phone.", "Eat water-rich foods like fruit and soup.", "Keep a glass on your desk."]),
    ("making new friends in a new city", ["Join a club based on a hobby.", "Take a class.", "Say yes to invitations.", "Volunteer for a local cause.", "Be a regular at a café or gym.", "Follow up after meeting someone."]),
    ("packing light for travel", ["Pick clothes that mix and match.", "Roll your clothes.", "Wear your bulkiest items on the plane.", "Bring travel-size toiletries.", "Plan to do laundry once.", "Leave the just-in-case items at home."]),
    ("managing your time", ["Write a to-do list every morning.", "Do the hardest task first.", "Block time in your calendar for deep work.", "Say no to low-value requests.", "Batch small tasks like email.", "Review your week every Friday."]),
    ("protecting your online accounts", ["Use a password manager.", "Turn on two-factor authentication.", "Never reuse passwords.", "Be suspicious of unexpected links.", "Keep your software updated.", "Check account activity regularly."]),
    ("reading more books", ["Carry a book or e-reader everywhere.", "Read for ten minutes before bed.", "Quit books you don't enjoy.", "Join a book club.", "Try audiobooks on commutes.", "Keep a list of books you want to read."]),
    ("eating more vegetables", ["Add a handful of spinach to eggs or pasta.", "Keep chopped vegetables ready to snack on.", "Roast a tray of vegetables each week.", "Fill half your plate with vegetables.", "Try one new vegetable each week.", "Blend vegetables into soups and sauces."]),
    ("starting a journaling habit", ["Write for just five minutes a day.", "Keep the notebook by your bed.", "Use prompts when you're stuck.", "Don't worry about grammar.", "Write at the same time each day.", "Reread old entries once a month."]),
    ("keeping a tidy home", ["Put things back as soon as you finish with them.", "Do a ten-minute tidy each evening.", "Give everything a home.", "Deal with mail the day it arrives.", "Clean as you cook.", "Declutter one drawer a week."]),
    ("improving your handwriting", ["Slow down.", "Hold the pen lightly.", "Practise letters one at a time.", "Use lined paper.", "Copy a passage you like every day.", "Keep letter sizes consistent."]),
    ("taking better photos with a phone", ["Clean the lens.", "Use natural light.", "Tap to focus on your subject.", "Follow the rule of thirds.", "Avoid digital zoom.", "Take several shots and pick the best."]),
    ("being more productive in the morning", ["Prepare the night before.", "Get up at the same time every day.", "Drink a glass of water first.", "Avoid email for the first hour.", "Start with your most important task.", "Move your body for a few minutes."]),
    ("lowering your electricity bill", ["Switch to LED bulbs.", "Unplug chargers and devices on standby.", "Wash clothes in cold water.", "Use a programmable thermostat.", "Seal drafts around doors and windows.", "Run full loads in the dishwasher."]),
    ("learning to code", ["Pick one language and stick with it.", "Build small projects early.", "Read other people's code.", "Practise a little every day.", "Learn to read error messages.", "Use version control from the start."]),
]

FORMAL = [
    ("Gonna be late, traffic is awful.", "I will be arriving late because of heavy traffic."),
    ("Can you send me that file ASAP?", "Could you please send me the file at your earliest convenience?"),
    ("We can't do the meeting tomorrow.", "Unfortunately, we are unable to attend tomorrow's meeting."),
    ("Thanks a ton for the help!", "Thank you very much for your assistance."),
    ("The new policy is kind of confusing.", "The new policy is somewhat unclear."),
    ("I messed up the numbers in the report.", "I made an error in the figures in the report."),
    ("Let me know what you think.", "I would appreciate your feedback."),
    ("The printer's broken again.", "The printer is out of order again."),
    ("We need to talk about the budget.", "We should discuss the budget."),
    ("Sorry, I totally forgot to reply.", "I apologise for my delayed response."),
    ("Your order's gonna ship next week.", "Your order will be dispatched next week."),
    ("Can we push the deadline back a bit?", "Would it be possible to extend the deadline slightly?"),
    ("That idea is a no-go.", "That proposal is not feasible."),
    ("Hit me up if you have questions.", "Please contact me if you have any questions."),
    ("The project is way behind schedule.", "The project is significantly behind schedule."),
    ("I'm not sure this is gonna work.", "I have some doubts about whether this approach will succeed."),
    ("Got your message, will check it out.", "I have received your message and will review it."),
    ("The price is too high for us.", "The price exceeds our budget."),
    ("We're super excited to work with you.", "We look forward to working with you."),
    ("Just checking in about the invoice.", "I am following up regarding the invoice."),
    ("Can you fix this by Friday?", "Would you be able to resolve this by Friday?"),
    ("The guy from sales called.", "A representative from the sales team called."),
    ("I can't make it to the party.", "I regret that I will be unable to attend the party."),
    ("This report has tons of mistakes.", "This report contains numerous errors."),
    ("Let's grab lunch and go over the plan.", "Shall we meet over lunch to review the plan?"),
    ("We ran out of time to finish it.", "We were unable to complete it in the time available."),
    ("Send it over when it's done.", "Please send it to me once it is complete."),
    ("I think the numbers are off.", "I believe there may be a discrepancy in the figures."),
]

GRAMMAR = [
    ("Me and him went to the store.", "He and I went to the store."),
    ("Their going to the park later.", "They're going to the park later."),
    ("She don't like coffee.", "She doesn't like coffee."),
    ("Each of the students have a book.", "Each of the students has a book."),
    ("I seen that movie last week.", "I saw that movie last week."),
    ("The dog wagged it's tail.", "The dog wagged its tail."),
    ("There is five apples on the table.", "There are five apples on the table."),
    ("He runs more faster than me.", "He runs faster than me."),
    ("Who's book is this?", "Whose book is this?"),
    ("I could of finished earlier.", "I could have finished earlier."),
    ("Less people came than expected.", "Fewer people came than expected."),
    ("Between you and I, the plan won't work.", "Between you and me, the plan won't work."),
    ("The team are playing good today.", "The team is playing well today."),
    ("If I was you, I would apologise.", "If I were you, I would apologise."),
    ("We was waiting for an hour.", "We were waiting for an hour."),
    ("Your the best friend I have.", "You're the best friend I have."),
    ("She has went home already.", "She has gone home already."),
    ("The data shows that sales is rising.", "The data show that sales are rising."),
    ("I have less books than you.", "I have fewer books than you."),
    ("Irregardless of the weather, we'll go.", "Regardless of the weather, we'll go."),
    ("He lay the book on the table.", "He laid the book on the table."),
    ("Its been a long day.", "It's been a long day."),
]

SYNONYMS = [
    ("happy", ["cheerful", "content", "joyful"], "sad"), ("big", ["large", "huge", "vast"], "small"),
    ("fast", ["quick", "rapid", "swift"], "slow"), ("smart", ["clever", "bright", "intelligent"], "foolish"),
    ("difficult", ["hard", "challenging", "tough"], "easy"), ("brave", ["courageous", "bold", "fearless"], "cowardly"),
    ("quiet", ["silent", "calm", "hushed"], "loud"), ("old", ["ancient", "aged", "elderly"], "young"),
    ("rich", ["wealthy", "affluent", "prosperous"], "poor"), ("begin", ["start", "commence", "launch"], "end"),
    ("angry", ["furious", "irate", "annoyed"], "calm"), ("tired", ["exhausted", "weary", "drained"], "energetic"),
    ("beautiful", ["lovely", "gorgeous", "stunning"], "ugly"), ("important", ["significant", "crucial", "vital"], "trivial"),
    ("honest", ["truthful", "sincere", "frank"], "dishonest"), ("strong", ["powerful", "sturdy", "robust"], "weak"),
    ("clean", ["spotless", "tidy", "pristine"], "dirty"), ("generous", ["giving", "charitable", "kind"], "stingy"),
    ("cold", ["chilly", "freezing", "icy"], "hot"), ("empty", ["vacant", "bare", "hollow"], "full"),
    ("increase", ["raise", "boost", "expand"], "decrease"), ("accept", ["agree to", "welcome", "embrace"], "reject"),
    ("ancient", ["old", "archaic", "antique"], "modern"), ("cheap", ["inexpensive", "affordable", "low-cost"], "expensive"),
    ("simple", ["easy", "plain", "straightforward"], "complex"), ("polite", ["courteous", "respectful", "civil"], "rude"),
    ("careful", ["cautious", "attentive", "thorough"], "careless"), ("shy", ["timid", "reserved", "bashful"], "outgoing"),
    ("win", ["triumph", "prevail", "succeed"], "lose"), ("create", ["make", "build", "produce"], "destroy"),
    ("wet", ["damp", "soaked", "moist"], "dry"), ("early", ["premature", "timely", "prompt"], "late"),
    ("narrow", ["thin", "slim", "tight"], "wide"), ("bright", ["shining", "vivid", "radiant"], "dim"),
    ("gentle", ["soft", "mild", "tender"], "rough"), ("rare", ["uncommon", "scarce", "unusual"], "common"),
]

ANIMALS = [
    ("dolphin", "mammal"), ("bat", "mammal"), ("whale", "mammal"), ("penguin", "bird"), ("ostrich", "bird"),
    ("eagle", "bird"), ("crocodile", "reptile"), ("turtle", "reptile"), ("gecko", "reptile"), ("frog", "amphibian"),
    ("salamander", "amphibian"), ("newt", "amphibian"), ("shark", "fish"), ("salmon", "fish"), ("seahorse", "fish"),
    ("platypus", "mammal"), ("kangaroo", "mammal"), ("owl", "bird"), ("iguana", "reptile"), ("toad", "amphibian"),
    ("tuna", "fish"), ("hummingbird", "bird"), ("hedgehog", "mammal"), ("cobra", "reptile"), ("axolotl", "amphibian"),
    ("goldfish", "fish"), ("walrus", "mammal"), ("flamingo", "bird"), ("chameleon", "reptile"), ("manatee", "mammal"),
]
ANIMAL_NOTES = {
    "mammal": "Mammals are warm-blooded, have hair or fur at some stage and feed their young milk.",
    "bird": "Birds have feathers, lay hard-shelled eggs and have beaks.",
    "reptile": "Reptiles are cold-blooded, have scaly skin and mostly lay eggs on land.",
    "amphibian": "Amphibians usually start life in water with gills and later breathe air.",
    "fish": "Fish live in water, breathe with gills and usually have fins and scales.",
}

WORDS = ["apple", "river", "garden", "window", "pencil", "mountain", "candle", "harbor", "violin", "meadow", "lantern",
         "basket", "planet", "orange", "tunnel", "saddle", "copper", "forest", "island", "kettle", "ladder", "marble",
         "needle", "pepper", "rocket", "silver", "temple", "valley", "wallet", "zebra", "anchor", "bridge", "cactus",
         "desert", "engine", "falcon", "glacier", "helmet", "igloo", "jacket", "koala", "lemon", "magnet", "nectar",
         "oyster", "parrot", "quartz", "ribbon", "spinach", "tomato", "umbrella", "velvet", "walnut", "yogurt", "blanket",
         "cookie", "dragon", "feather", "guitar", "hammer", "insect", "jungle", "kitten", "lizard", "mirror", "noodle"]

TOPIC_FACTS = [
    ("the benefits of walking", ["Walking is one of the easiest ways to stay active.", "A brisk daily walk strengthens the heart and lungs.", "Walking outdoors can lift your mood and lower stress.", "It puts little strain on the joints.", "Regular walkers often sleep better at night.", "You need no special equipment beyond comfortable shoes."]),
    ("how bees make honey", ["Bees collect nectar from flowers with their long tongues.", "They store the nectar in a special honey stomach.", "Back at the hive they pass the nectar from bee to bee.", "Enzymes slowly turn the nectar into honey.", "Bees fan their wings to evaporate extra water.", "Finally they seal the honey in wax cells."]),
    ("why people keep journals", ["Writing things down helps people sort out their thoughts.", "A journal records memories that would otherwise fade.", "Many people use journals to track goals and habits.", "Writing about worries can make them feel smaller.", "Old entries show how much a person has grown.", "Some writers use journals to collect ideas."]),
    ("the history of the bicycle", ["Early bicycles in the 1810s had no pedals at all.", "Riders pushed themselves along with their feet.", "Pedals were added to the front wheel in the 1860s.", "The high-wheeled penny-farthing followed in the 1870s.", "The safety bicycle with a chain drive arrived in the 1880s.", "Its design is still the basis of most bikes today."]),
    ("the water cycle", ["The sun heats water in oceans and lakes.", "The water evaporates and rises as vapour.", "High in the sky the vapour cools and forms clouds.", "Water falls back to the ground as rain or snow.", "Rivers carry much of it back to the sea.", "Then the cycle starts all over again."]),
    ("the importance of sleep", ["Sleep gives the body time to repair itself.", "The brain sorts and stores memories during sleep.", "Poor sleep makes it harder to concentrate.", "Most adults need seven to nine hours each night.", "A regular bedtime makes falling asleep easier.", "Children and teenagers need even more sleep."]),
    ("how volcanoes form", ["Volcanoes form where molten rock reaches the surface.", "This molten rock is called magma underground.", "Many volcanoes sit where tectonic plates meet.", "Pressure builds as gas collects in the magma.", "An eruption releases lava ash and gas.", "Layers of cooled lava build the mountain over time."]),
    ("the life of a honeybee colony", ["A colony has one queen and thousands of workers.", "The queen lays nearly all of the eggs.", "Worker bees clean the hive and care for the young.", "Older workers fly out to gather nectar and pollen.", "Male bees called drones mate with new queens.", "The colony survives winter by huddling together."]),
    ("growing tomatoes at home", ["Tomatoes need at least six hours of sun a day.", "Plant them after the last frost of spring.", "Water deeply at the base of the plant.", "A stake or cage keeps the stems off the ground.", "Pinching off side shoots helps some varieties.", "Pick the fruit when it is fully coloured."]),
    ("why the moon has phases", ["The moon does not make its own light.", "We see sunlight reflected off its surface.", "As the moon orbits Earth we see different amounts of its lit side.", "At new moon the lit side faces away from us.", "At full moon the whole lit side faces us.", "A full cycle of phases takes about 29.5 days."]),
    ("the invention of the telephone", ["Alexander Graham Bell patented the telephone in 1876.", "His first words on it asked his assistant to come to him.", "Other inventors were working on similar ideas at the time.", "Early telephones needed operators to connect calls.", "Phone lines soon spread between major cities.", "Today most calls travel over digital networks."]),
    ("recycling plastic", ["Not every plastic item can be recycled.", "Numbers on the packaging show the type of plastic.", "Clean containers are easier to recycle.", "Recycled plastic can become clothing or furniture.", "Reducing plastic use helps even more than recycling.", "Local rules decide which items go in the bin."]),
    ("learning to play the guitar", ["Beginners usually start with a few open chords.", "Short daily practice beats long weekly sessions.", "Sore fingertips are normal in the first weeks.", "Tuning before every session trains your ear.", "Playing along with songs keeps practice fun.", "A metronome helps you keep steady time."]),
    ("how airplanes fly", ["Wings are shaped to move air downward.", "Pushing air down creates an upward force called lift.", "Engines provide thrust to move the plane forward.", "Drag from the air resists that forward motion.", "Gravity pulls the plane toward the ground.", "Flight happens when lift and thrust beat gravity and drag."]),
    ("the benefits of reading", ["Reading builds vocabulary in a natural way.", "Stories help readers understand other points of view.", "Regular reading can improve concentration.", "Reading before bed can help people relax.", "Books let readers learn from experts for little cost.", "Children who read for fun often do better at school."]),
    ("the rainforest", ["Rainforests receive heavy rain throughout the year.", "They are home to more than half of all land species.", "Tall trees form a thick canopy high above the ground.", "Little sunlight reaches the forest floor.", "Many medicines come from rainforest plants.", "Logging and farming threaten large areas of rainforest."]),
    ("starting a small business", ["Every business starts with a problem worth solving.", "Talking to customers early saves time and money.", "A simple plan helps you set clear goals.", "Keep business and personal money separate.", "Track every expense from the first day.", "Growth usually takes longer than founders expect."]),
    ("the human heart", ["The heart is a muscle about the size of a fist.", "It pumps blood through the body without stopping.", "It has four chambers called atria and ventricles.", "Valves keep the blood flowing in one direction.", "An adult heart beats about 60 to 100 times a minute at rest.", "Exercise makes the heart stronger over time."]),
    ("composting at home", ["Compost turns food scraps into rich soil.", "Mix green waste like peelings with brown waste like dry leaves.", "Turning the pile adds air and speeds things up.", "Keep the pile damp but not soaking wet.", "Avoid meat and dairy in a home compost bin.", "Finished compost smells earthy and looks dark."]),
    ("how rainbows form", ["Rainbows appear when sunlight meets raindrops.", "Light bends as it enters each drop.", "The drop splits white light into separate colours.", "Light reflects off the back of the drop.", "You see a rainbow with the sun behind you.", "Red is always on the outside of the main bow."]),
    ("why exercise matters", ["Exercise strengthens muscles and bones.", "It lowers the risk of heart disease.", "Physical activity can improve mood and sleep.", "Adults should aim for about 150 minutes a week.", "Any movement is better than none.", "Strength training twice a week helps as people age."]),
    ("the Great Wall of China", ["The Great Wall was built over many centuries.", "Most of the wall seen today dates from the Ming dynasty.", "It was built to protect against raids from the north.", "Workers used earth stone brick and wood.", "Watchtowers let guards send signals with smoke and fire.", "It is not visible to the naked eye from space."]),
    ("keeping a pet dog healthy", ["Dogs need daily exercise and play.", "A balanced diet keeps their weight in check.", "Regular vet visits catch problems early.", "Vaccinations protect against serious diseases.", "Brushing their teeth helps prevent gum disease.", "Fresh water should always be available."]),
    ("the solar system", ["The solar system has eight planets.", "The four inner planets are small and rocky.", "The four outer planets are giants made mostly of gas and ice.", "Jupiter is the largest planet.", "Mercury is the closest planet to the sun.", "Dwarf planets such as Pluto orbit beyond Neptune."]),
    ("saving money", ["Saving starts with knowing where your money goes.", "Paying yourself first makes saving automatic.", "An emergency fund protects you from surprises.", "Small daily savings add up over a year.", "Interest helps savings grow over time.", "Clear goals make it easier to stay motivated."]),
    ("public libraries", ["Public libraries lend books for free.", "Many also offer e-books and audiobooks.", "Libraries host classes and events for all ages.", "They provide free internet access.", "Librarians help people find reliable information.", "Libraries are quiet places to study and work."]),
    ("the printing press", ["Johannes Gutenberg built his press around 1450.", "It used movable metal type.", "Books became much cheaper to produce.", "Ideas spread faster across Europe.", "More people learned to read.", "Printing helped drive the Reformation and the Scientific Revolution."]),
    ("coral reefs", ["Coral reefs are built by tiny animals called polyps.", "Reefs cover a small part of the ocean floor.", "They shelter about a quarter of all marine species.", "Warm clear water suits most reef-building corals.", "Rising sea temperatures can cause coral bleaching.", "Healthy reefs protect coastlines from waves."]),
    ("teamwork", ["Good teams share a clear goal.", "Each member brings different strengths.", "Honest communication prevents misunderstandings.", "Trust grows when people keep their promises.", "Teams solve problems faster by sharing ideas.", "Celebrating small wins keeps energy high."]),
    ("drinking water safely while hiking", ["Streams can carry germs even when they look clean.", "Boiling water for one minute kills most germs.", "Filters remove bacteria and protozoa.", "Chemical tablets work but take time.", "Collect water from moving sources when possible.", "Carry more water than you think you need."]),
]
END_PHRASES = ["Is there anything else I can help with?", "Let me know if you have additional questions.", "That is all for today.",
               "Thanks for reading.", "I hope this helps.", "Any other questions?"]

IDEAS = [
    ("a rainy Sunday afternoon", ["Bake something new, like focaccia or cinnamon rolls.", "Start a jigsaw puzzle.", "Have a themed movie marathon.", "Try a new board game.", "Reorganise one cupboard and donate what you don't use.", "Write letters to friends.", "Learn a simple card trick."]),
    ("a 10-year-old's birthday party", ["A backyard treasure hunt with clues.", "A make-your-own-pizza party.", "A science party with slime and baking-soda volcanoes.", "A movie night with a projector and a sheet.", "A sports afternoon in the park.", "A craft party making friendship bracelets."]),
    ("a team-building activity at work", ["An escape room.", "A cooking class together.", "A volunteer afternoon at a food bank.", "A trivia quiz with mixed teams.", "A lunchtime walk to somewhere new.", "A show-and-tell where each person shares a hobby."]),
    ("a cheap date night", ["Cook a new recipe together.", "Have a picnic in the park.", "Go stargazing somewhere dark.", "Visit a free museum evening.", "Play a board game at a café.", "Take a sunset walk and get ice cream."]),
    ("a science fair project", ["Test which paper towel brand absorbs the most water.", "Grow beans under different colours of light.", "Measure how salt changes the boiling point of water.", "Compare how fast ice melts in different cups.", "Build a simple electric circuit with a lemon battery.", "Test which materials keep a drink coldest."]),
    ("things to do with leftover rice", ["Egg fried rice with frozen peas.", "Rice pudding with cinnamon.", "Crispy rice cakes in a hot pan.", "Stuffed peppers.", "A rice and bean burrito bowl.", "Arancini, if you're feeling ambitious."]),
    ("a small balcony garden", ["Herbs like basil, mint and parsley in pots.", "Cherry tomatoes in a large container.", "Strawberries in a hanging basket.", "Salad leaves you can cut and regrow.", "Nasturtiums, which are edible and bright.", "A small trellis for climbing beans."]),
    ("a gift for a friend who loves cooking", ["A good chef's knife.", "A cookbook from a cuisine they haven't tried.", "A set of quality spices.", "A cast-iron pan.", "A cooking class for two.", "A herb-growing kit."]),
    ("a name for a small bakery", ["The Rolling Pin.", "Golden Crust.", "Flour & Friends.", "Rise and Shine Bakery.", "The Daily Loaf.", "Sugar and Sourdough."]),
    ("a weekend hobby", ["Learn to bake bread.", "Start sketching in a small notebook.", "Try geocaching.", "Join a community garden.", "Learn basic woodworking.", "Take up photography walks."]),
    ("a podcast episode about local history", ["The oldest building in town and who built it.", "How the main street looked a hundred years ago.", "A local inventor or artist people have forgotten.", "The story behind street names.", "A flood, fire or storm that changed the town.", "Interviews with the oldest residents."]),
    ("healthy snacks for work", ["Apple slices with peanut butter.", "Greek yogurt with berries.", "A handful of almonds.", "Hummus with carrot sticks.", "A boiled egg.", "Roasted chickpeas."]),
    ("a family road trip", ["Download audiobooks everyone can enjoy.", "Plan a stop every two hours.", "Pack a snack bag for each person.", "Play the licence-plate game.", "Let each person pick one stop.", "Keep a small first-aid kit in the car."]),
    ("a short story opening", ["A letter arrives addressed to someone who died fifty years ago.", "The town's clocks all stop at the same minute.", "A girl finds a map of her neighbourhood with one extra street.", "A lighthouse keeper sees a light that answers back.", "Two strangers wake up with each other's memories.", "A dog returns home wearing a collar nobody recognises."]),
]

ELI5 = [
    ("the internet", "Imagine every computer in the world could pass notes to each other. The internet is the giant system of cables, radio signals and rules that lets those notes travel, so your computer can ask another computer for a video and get it back in pieces."),
    ("electricity", "Electricity is lots of tiny particles called electrons moving along a wire, a bit like water flowing through a hose. When they flow through a lamp, they make it glow, and when they flow through a motor, they make it spin."),
    ("why we have to sleep", "Your body is like a busy city during the day. At night the city closes, and cleaning crews come out to fix roads and take out the trash. Sleep is when your brain and body clean up and store what you learned."),
    ("how a rainbow forms", "Sunlight looks white, but it's really all colours mixed together. When it shines through raindrops, each drop bends the light and spreads the colours out, like a tiny prism, so you see a rainbow."),
    ("money", "Money is something everyone agrees to trade for things. Instead of swapping your apples for someone's shoes, you use money, because everyone accepts it."),
    ("what a virus is", "A virus is a tiny germ, much smaller than a cell. It can't do anything on its own, so it sneaks into your cells and tricks them into making more viruses. Your immune system works to find and stop it."),
    ("how plants eat", "Plants make their own food. Their leaves catch sunlight, and they use that energy to turn water from the soil and air into sugar, like a tiny kitchen powered by the sun."),
    ("gravity", "Gravity is an invisible pull that everything with mass has. Earth is so big that its pull keeps us on the ground and makes a dropped ball fall down instead of floating away."),
    ("recycling", "Recycling means turning old things into new things. An empty bottle can be cleaned, melted and made into a new bottle, so we don't need as many new materials."),
    ("how a computer remembers things", "A computer stores everything as tiny switches that are either on or off. Billions of them together can remember your photos, games and homework."),
    ("why the ocean is salty", "Rain slowly washes tiny bits of salt out of rocks on land. Rivers carry that salt to the sea. When seawater evaporates, the salt stays behind, so over millions of years the ocean became salty."),
    ("what an election is", "An election is how a group picks its leaders. Everyone who can vote makes a choice, the votes are counted, and the person with the most votes usually wins."),
    ("how a refrigerator works", "A fridge moves heat from inside to outside. A special liquid inside its pipes soaks up heat as it turns into gas, then a pump squeezes it so it gives that heat away at the back."),
    ("why we see lightning before thunder", "Lightning and thunder happen at the same moment, but light travels almost instantly while sound is much slower. So the flash reaches you first and the rumble arrives a few seconds later."),
]

DIFFERENCES = [
    ("weather", "climate", "Weather is what the atmosphere is doing right now or this week: rain today, sun tomorrow. Climate is the average pattern over many years, such as a region having hot, dry summers."),
    ("a virus", "bacteria", "Bacteria are living single cells that can reproduce on their own, and many are harmless or even helpful. Viruses are much smaller and can only multiply inside a host's cells. Antibiotics work on bacteria but not on viruses."),
    ("RAM", "storage", "RAM is short-term working memory that holds what the computer is using right now and is wiped when it turns off. Storage, such as an SSD, keeps your files permanently."),
    ("a crocodile", "an alligator", "Alligators have wider, U-shaped snouts and mostly live in fresh water in the US and China. Crocodiles have narrower, V-shaped snouts, and their lower teeth show when their mouths are closed."),
    ("affect", "effect", "Affect is usually a verb meaning to influence: the rain affected the game. Effect is usually a noun meaning a result: the rain had an effect on the game."),
    ("a debit card", "a credit card", "A debit card spends money that is already in your bank account. A credit card borrows money that you pay back later, with interest if you don't clear the balance."),
    ("baking soda", "baking powder", "Baking soda is pure sodium bicarbonate and needs an acid, such as buttermilk, to react. Baking powder already contains its own acid, so it works with plain milk."),
    ("a simile", "a metaphor", "A simile compares using 'like' or 'as': she ran like the wind. A metaphor says one thing is another: she was a rocket off the line."),
    ("an asteroid", "a comet", "Asteroids are rocky or metallic bodies, mostly found between Mars and Jupiter. Comets are icy bodies that grow glowing tails when they come close to the Sun."),
    ("a latte", "a cappuccino", "Both are espresso with milk. A latte has more steamed milk and a thin layer of foam, while a cappuccino has less milk and a thick cap of foam."),
    ("HTTP", "HTTPS", "Both are ways a browser talks to a website. HTTPS adds encryption, so people on the same network can't read or change what you send and receive."),
    ("a hurricane", "a tornado", "A hurricane is a huge storm system hundreds of kilometres wide that forms over warm oceans and lasts for days. A tornado is a narrow, violent spinning column of air that usually lasts minutes."),
    ("renting", "buying a home", "Renting gives flexibility and fewer upfront costs, but you don't build ownership. Buying builds equity over time but ties up savings, adds maintenance costs and makes moving harder."),
    ("a sprain", "a strain", "A sprain is an injury to a ligament, which connects bone to bone, often at the ankle. A strain is an injury to a muscle or tendon, often in the back or hamstring."),
    ("frequency", "amplitude", "In a wave, frequency is how many waves pass per second, which we hear as pitch. Amplitude is how tall the waves are, which we hear as loudness."),
    ("an ocean", "a sea", "Oceans are the five huge connected bodies of salt water. Seas are smaller and usually partly enclosed by land, such as the Mediterranean Sea."),
]

MESSAGES = [
    ("my roommate", "I'll be home late tonight, so please don't wait for me for dinner", "Hey! Just a heads-up, I'll be home late tonight, so don't wait for me for dinner. Save me some leftovers if there are any!"),
    ("my boss", "I'm sick and can't come in today", "Hi, I woke up sick this morning and won't be able to come in today. I'll keep an eye on email for anything urgent and will let you know how I'm feeling tomorrow."),
    ("a friend", "I can't make it to their party this weekend", "Hey, I'm so sorry but I can't make it to your party this weekend. I hope it's a great night, and let's get together soon so I can hear all about it!"),
    ("my neighbour", "their dog has been barking all night", "Hi, I hope you're well. I wanted to mention that your dog has been barking quite a lot at night recently. I thought you might not know, since it happens when you're out. Could we figure something out?"),
    ("my sister", "happy birthday, and I'm sorry I'm far away", "Happy birthday! I wish I could be there to celebrate with you. I'm sending a big hug from far away, and I'll call you tonight."),
    ("a colleague", "thanks for covering my shift", "Thanks so much for covering my shift on Saturday. I really appreciate it, and I owe you one. Just let me know when you need a swap."),
    ("my landlord", "the kitchen tap is leaking", "Hi, I wanted to let you know that the kitchen tap has started leaking steadily. Could you arrange for someone to take a look this week? I'm home most evenings."),
    ("my coach", "I have to miss practice on Thursday", "Hi Coach, I have a family commitment on Thursday and won't be able to make practice. I'll do a run on my own and be ready for Saturday."),
    ("a client", "the delivery will be two days late", "Hello, I wanted to let you know that your delivery will arrive two days later than planned because of a supplier delay. I'm sorry for the inconvenience, and I'll send tracking details as soon as it ships."),
    ("my friend", "congratulations on the new job", "Congratulations on the new job! You worked so hard for this, and they're lucky to have you. Let's celebrate when you've settled in."),
]

REVIEW_PRODUCTS = ["headphones", "coffee maker", "hiking boots", "desk lamp", "yoga mat", "phone case", "backpack", "blender",
                   "novel", "office chair", "water bottle", "electric kettle"]
REVIEW_POS = ["works exactly as described", "feels sturdy and well made", "arrived a day earlier than promised", "is worth every penny",
              "has held up perfectly after months of daily use", "is comfortable from the very first day", "looks even better than the photos"]
REVIEW_NEG = ["stopped working after two weeks", "feels cheap and flimsy", "came with useless instructions",
              "is much smaller than the photos suggest", "broke the first time I dropped it", "smells strongly of plastic", "was missing a part"]
NLI_PEOPLE = ["man", "woman", "child", "teenager", "chef", "cyclist", "student", "group of friends", "farmer", "musician"]
NLI_ACTIONS = [
    ("riding a bicycle along the beach", "is outdoors", "is asleep in bed"),
    ("cooking pasta in a small kitchen", "is preparing food", "is swimming in a lake"),
    ("reading a book on a park bench", "is reading", "is driving a truck"),
    ("playing a guitar on a street corner", "is playing an instrument", "is sitting in a silent library"),
    ("painting a fence in the sun", "is working outside", "is sleeping indoors"),
    ("climbing a steep rock wall", "is climbing", "is lying on a sofa"),
    ("carrying groceries up the stairs", "is holding bags", "has empty hands"),
    ("building a sandcastle at low tide", "is at the beach", "is on a mountain top"),
    ("feeding ducks at a pond", "is near water", "is in a desert"),
    ("typing on a laptop in a café", "is using a computer", "is running a marathon"),
]
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


CONVERSIONS = [("miles", "kilometres", 1.609344), ("kilometres", "miles", 0.621371), ("kilograms", "pounds", 2.204623),
               ("pounds", "kilograms", 0.453592), ("inches", "centimetres", 2.54), ("feet", "metres", 0.3048),
               ("litres", "US gallons", 0.264172), ("cups", "millilitres", 236.588)]


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

INGREDIENTS = {
    "chicken": "sear it in a hot pan", "rice": "use it as the base", "eggs": "fry or scramble them", "spinach": "wilt it in at the end",
    "chickpeas": "roast them until crisp", "pasta": "boil it in well-salted water", "tomatoes": "cook them down into a quick sauce",
    "potatoes": "cube and roast them", "tofu": "press it and pan-fry it", "mushrooms": "brown them without crowding the pan",
    "beans": "simmer them with garlic", "cheese": "grate it over the top", "onions": "soften them slowly", "peppers": "slice and char them",
    "tortillas": "warm them in a dry pan", "lentils": "simmer them until soft",
}
DISHES = ["a quick stir-fry", "a one-pan skillet", "a simple traybake", "a warm grain bowl", "loaded quesadillas", "a frittata", "a hearty soup"]
FEELINGS = ["nervous", "anxious", "overwhelmed", "sad", "restless", "unmotivated"]
EVENTS = ["a job interview", "moving to a new city", "my first day at a new school", "giving a speech", "starting university",
          "a big exam", "going back to work after parental leave", "my driving test"]
STUDY_SUBJECTS = ["biology", "chemistry", "algebra", "world history", "economics", "French", "statistics", "physics", "English literature", "geography"]
PETS = {"cat": ["Miso", "Pepper", "Luna", "Biscuit", "Mochi", "Ziggy"], "dog": ["Maple", "Scout", "Bear", "Juniper", "Ollie", "Pixel"],
        "rabbit": ["Clover", "Thumper", "Hazel", "Nibbles", "Pip", "Willow"], "hamster": ["Peanut", "Nugget", "Crumb", "Bean", "Toffee", "Sprout"],
        "goldfish": ["Bubbles", "Goldie", "Finn", "Nemo", "Sunny", "Koi"]}
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

MMLU_FACTS = {
    "high_school_biology": [
        ("Which organelle is the main site of aerobic respiration in eukaryotic cells?", "Mitochondrion", ["Ribosome", "Golgi apparatus", "Lysosome"]),
        ("Which molecule carries amino acids to the ribosome during translation?", "Transfer RNA (tRNA)", ["Messenger RNA (mRNA)", "DNA polymerase", "Ribosomal RNA (rRNA)"]),
        ("In humans, which blood vessels carry blood away from the heart?", "Arteries", ["Veins", "Capillaries", "Venules"]),
        ("Which type of cell division produces gametes with half the parent cell's chromosome number?", "Meiosis", ["Mitosis", "Binary fission", "Budding"]),
        ("What is the main function of red blood cells?", "Transporting oxygen", ["Fighting infection", "Clotting blood", "Producing antibodies"]),
        ("If tall (T) is dominant over short (t), what ratio of tall to short offspring is expected from a Tt × Tt cross?", "3:1", ["1:1", "1:2:1", "9:3:3:1"]),
        ("Which base pairs with adenine in DNA?", "Thymine", ["Uracil", "Guanine", "Cytosine"]),
        ("Mushrooms and yeasts belong to which kingdom?", "Fungi", ["Plantae", "Protista", "Animalia"]),
        ("What is the primary role of chlorophyll?", "Absorbing light energy for photosynthesis", ["Storing starch", "Transporting water", "Releasing carbon dioxide"]),
        ("Which organ produces the hormone insulin?", "Pancreas", ["Liver", "Kidney", "Gallbladder"]),
        ("Organisms that make their own food from inorganic substances are called:", "Autotrophs", ["Heterotrophs", "Decomposers", "Consumers"]),
        ("What holds the two strands of a DNA double helix together?", "Hydrogen bonds between bases", ["Peptide bonds", "Ionic bonds between sugars", "Disulfide bridges"]),
        ("Which part of a neuron usually receives signals from other neurons?", "Dendrites", ["Axon terminals", "Myelin sheath", "Nodes of Ranvier"]),
        ("What is the main function of stomata in leaves?", "Gas exchange", ["Absorbing water from the soil", "Producing seeds", "Anchoring the plant"]),
        ("Natural selection acts most directly on an organism's:", "Phenotype", ["Future mutations", "Chromosome count", "Cell size alone"]),
        ("Which class of macromolecule is built from amino acids?", "Proteins", ["Carbohydrates", "Lipids", "Nucleic acids"]),
        ("Where does the Calvin cycle take place?", "In the stroma of the chloroplast", ["In the thylakoid membranes", "In the mitochondrial matrix", "In the nucleus"]),
        ("How do enzymes speed up chemical reactions?", "By lowering the activation energy", ["By raising the activation energy", "By being consumed in the reaction", "By changing the equilibrium constant"]),
        ("Which blood type is the universal donor for red blood cells?", "O negative", ["AB positive", "A negative", "B positive"]),
        ("Population growth that levels off as it approaches carrying capacity is called:", "Logistic growth", ["Exponential growth", "Linear decline", "Genetic drift"]),
        ("In bacteria, where is the genetic material found instead of in a nucleus?", "The nucleoid region", ["The nuclear envelope", "The Golgi body", "The central vacuole"]),
        ("Which gas is released as a by-product of photosynthesis?", "Oxygen", ["Carbon dioxide", "Nitrogen", "Methane"]),
        ("A relationship in which one organism benefits and the other is harmed is called:", "Parasitism", ["Mutualism", "Commensalism", "Competition"]),
        ("How many chromosomes does a typical human somatic cell contain?", "46", ["23", "44", "92"]),
    ],
    "high_school_world_history": [
        ("In which year did the Berlin Wall fall?", "1989", ["1961", "1991", "1985"]),
        ("Who was the first emperor of Rome?", "Augustus", ["Julius Caesar", "Nero", "Constantine"]),
        ("In which year was the Magna Carta sealed?", "1215", ["1066", "1315", "1492"]),
        ("Which civilization built Machu Picchu?", "The Inca", ["The Aztecs", "The Maya", "The Olmecs"]),
        ("The Meiji Restoration took place in which country?", "Japan", ["China", "Korea", "Thailand"]),
        ("Which event of July 1789 is traditionally seen as the start of the French Revolution?", "The storming of the Bastille", ["The execution of Louis XVI", "Napoleon's coronation", "The Congress of Vienna"]),
        ("Who led the campaign of nonviolent resistance against British rule in India?", "Mahatma Gandhi", ["Winston Churchill", "Lord Mountbatten", "Subhas Chandra Bose"]),
        ("The Treaty of Versailles of 1919 followed which war?", "World War I", ["World War II", "The Franco-Prussian War", "The Crimean War"]),
        ("Which civilization developed cuneiform writing?", "The Sumerians", ["The Egyptians", "The Greeks", "The Phoenicians"]),
        ("Whose expedition completed the first circumnavigation of the globe in 1522, after its leader's death?", "Ferdinand Magellan's", ["Christopher Columbus's", "Vasco da Gama's", "James Cook's"]),
        ("In which country did the Renaissance begin?", "Italy", ["England", "Spain", "Sweden"]),
        ("In which year did World War II end?", "1945", ["1918", "1939", "1950"]),
        ("Most of the Great Wall of China that survives today was built under which dynasty?", "The Ming", ["The Qin", "The Han", "The Qing"]),
        ("Who wrote the Ninety-five Theses in 1517?", "Martin Luther", ["John Calvin", "Henry VIII", "Erasmus"]),
        ("The Cold War was mainly a rivalry between the United States and:", "The Soviet Union", ["China", "West Germany", "Japan"]),
        ("Which ancient Greek city-state was known for its militaristic society?", "Sparta", ["Athens", "Corinth", "Delphi"]),
        ("Who became South Africa's first president elected in a fully democratic election?", "Nelson Mandela", ["F. W. de Klerk", "Desmond Tutu", "Thabo Mbeki"]),
        ("In which country did the Industrial Revolution begin?", "Great Britain", ["France", "Germany", "The United States"]),
        ("Which empire was ruled from Constantinople after the Western Roman Empire fell?", "The Byzantine Empire", ["The Holy Roman Empire", "The Persian Empire", "The Carolingian Empire"]),
        ("Which crown sponsored Christopher Columbus's voyage of 1492?", "Spain", ["Portugal", "England", "France"]),
        ("In which century did the Black Death sweep through Europe?", "The 14th century", ["The 11th century", "The 16th century", "The 18th century"]),
        ("Which document of 1776 declared the American colonies independent?", "The Declaration of Independence", ["The Constitution", "The Bill of Rights", "The Articles of Confederation"]),
        ("In which year did the Ottoman Empire capture Constantinople?", "1453", ["1204", "1517", "1683"]),
        ("Who led the Soviet Union for most of World War II?", "Joseph Stalin", ["Vladimir Lenin", "Nikita Khrushchev", "Leon Trotsky"]),
    ],
    "astronomy": [
        ("Which planet is closest to the Sun?", "Mercury", ["Venus", "Mars", "Earth"]),
        ("What is the largest planet in the solar system?", "Jupiter", ["Saturn", "Neptune", "Earth"]),
        ("About how long does sunlight take to reach Earth?", "About 8 minutes", ["About 8 seconds", "About 8 hours", "About 1 second"]),
        ("A light-year is a unit of:", "Distance", ["Time", "Brightness", "Mass"]),
        ("Which planet has the most prominent ring system?", "Saturn", ["Jupiter", "Uranus", "Mars"]),
        ("What powers the Sun's core?", "Nuclear fusion of hydrogen into helium", ["Nuclear fission of uranium", "Burning of carbon", "Friction between gas layers"]),
        ("What causes the phases of the Moon?", "The changing view we have of the Moon's sunlit half", ["Earth's shadow falling on the Moon", "Clouds on the Moon", "Changes in the Moon's distance from Earth"]),
        ("Which is the nearest large spiral galaxy to the Milky Way?", "The Andromeda Galaxy", ["The Whirlpool Galaxy", "The Sombrero Galaxy", "The Large Magellanic Cloud"]),
        ("What will the Sun become at the end of its life?", "A white dwarf", ["A black hole", "A neutron star", "A blue supergiant"]),
        ("A lunar eclipse happens when:", "Earth passes between the Sun and the Moon", ["The Moon passes between the Sun and Earth", "The Sun passes behind Jupiter", "The Moon is at first quarter"]),
        ("What is the boundary around a black hole beyond which nothing can escape called?", "The event horizon", ["The photosphere", "The heliopause", "The Roche limit"]),
        ("Which planet has the Great Red Spot?", "Jupiter", ["Mars", "Saturn", "Neptune"]),
        ("Roughly how long does the Moon take to orbit Earth relative to the stars?", "About 27 days", ["About 7 days", "About 365 days", "About 60 days"]),
        ("What is the most abundant element in the universe?", "Hydrogen", ["Helium", "Oxygen", "Carbon"]),
        ("Which planet has an axial tilt of about 98 degrees, so it spins on its side?", "Uranus", ["Venus", "Neptune", "Mercury"]),
        ("What is the approximate age of the universe?", "About 13.8 billion years", ["About 4.6 billion years", "About 100 million years", "About 1 trillion years"]),
        ("The main asteroid belt lies between the orbits of:", "Mars and Jupiter", ["Earth and Mars", "Jupiter and Saturn", "Venus and Earth"]),
        ("Which of these is classified as a dwarf planet?", "Pluto", ["Titan", "Europa", "Ganymede"]),
        ("What is a supernova?", "The explosive death of a star", ["The birth of a planet", "A comet's closest approach to the Sun", "A cloud of gas forming a galaxy"]),
        ("Which space telescope, launched in 2021, observes mainly in the infrared?", "The James Webb Space Telescope", ["The Hubble Space Telescope", "The Kepler Space Telescope", "The Chandra X-ray Observatory"]),
        ("Why does Venus have the hottest surface of any planet?", "Its thick carbon dioxide atmosphere traps heat", ["It is the closest planet to the Sun", "It has no atmosphere", "It rotates very quickly"]),
        ("Which star is closest to the Sun?", "Proxima Centauri", ["Sirius", "Betelgeuse", "Polaris"]),
        ("Ocean tides on Earth are caused mainly by the gravity of:", "The Moon", ["Jupiter", "Mars", "The centre of the Milky Way"]),
        ("How is the Sun classified?", "A G-type main-sequence star", ["An M-type red dwarf", "An O-type supergiant", "A white dwarf"]),
    ],
    "nutrition": [
        ("About how many kilocalories does one gram of fat provide?", "9", ["4", "7", "2"]),
        ("About how many kilocalories does one gram of carbohydrate provide?", "4", ["9", "7", "12"]),
        ("Which vitamin does the skin make when exposed to sunlight?", "Vitamin D", ["Vitamin C", "Vitamin A", "Vitamin K"]),
        ("Scurvy results from a deficiency of which vitamin?", "Vitamin C", ["Vitamin B12", "Vitamin D", "Vitamin E"]),
        ("Which mineral is needed to make haemoglobin, the oxygen carrier in red blood cells?", "Iron", ["Calcium", "Potassium", "Iodine"]),
        ("Which nutrient is the body's preferred source of quick energy?", "Carbohydrates", ["Vitamins", "Minerals", "Fibre"]),
        ("Which of these foods is the richest source of dietary fibre?", "Lentils", ["White rice", "Chicken breast", "Cheddar cheese"]),
        ("What is the RDA of protein for healthy adults?", "0.8 g per kg of body weight per day", ["0.2 g per kg per day", "2.5 g per kg per day", "5 g per kg per day"]),
        ("Which type of fat has been banned or restricted in many countries because of its health effects?", "Artificial trans fat", ["Monounsaturated fat", "Omega-3 fat", "Polyunsaturated fat"]),
        ("A deficiency of which vitamin causes night blindness?", "Vitamin A", ["Vitamin C", "Vitamin D", "Vitamin B1"]),
        ("Iodine is added to table salt mainly to prevent:", "Goitre and other thyroid problems", ["Anaemia", "Rickets", "Scurvy"]),
        ("In many Western diets, the main source of calcium is:", "Dairy products", ["Fruit", "Refined grains", "Cooking oils"]),
        ("Which food is richest in omega-3 fatty acids?", "Oily fish such as salmon", ["White bread", "Table sugar", "Butter"]),
        ("What is a main benefit of dietary fibre?", "It supports digestive health and regular bowel movements", ["It provides most of the body's energy", "It builds muscle tissue", "It carries oxygen in the blood"]),
        ("Which vitamin is found almost only in animal foods, so vegans usually need a supplement?", "Vitamin B12", ["Vitamin C", "Folate", "Vitamin K"]),
        ("Essential amino acids are those that:", "Must come from the diet", ["The body makes in large amounts", "Are found only in plants", "Adults no longer need"]),
        ("Eating too much of which mineral is most linked to high blood pressure?", "Sodium", ["Potassium", "Magnesium", "Calcium"]),
        ("The glycemic index of a food describes:", "How quickly it raises blood glucose", ["How much protein it contains", "Its fat content", "How many calories it has"]),
        ("Which vitamin is needed for normal blood clotting?", "Vitamin K", ["Vitamin C", "Vitamin D", "Vitamin B6"]),
        ("Rickets in children is mainly caused by a lack of:", "Vitamin D", ["Vitamin C", "Iron", "Iodine"]),
        ("The WHO recommends keeping free sugars below what share of daily energy intake?", "10%", ["25%", "40%", "1%"]),
        ("Which plant food is a complete protein?", "Soy", ["Rice", "Wheat", "Corn"]),
        ("Adequate folate before and in early pregnancy helps prevent:", "Neural tube defects", ["Tooth decay", "Night blindness", "High cholesterol"]),
        ("Which nutrient, made of amino acids, provides about 4 kcal per gram?", "Protein", ["Fat", "Alcohol", "Fibre"]),
    ],
    "high_school_chemistry": [
        ("What is the atomic number of carbon?", "6", ["12", "8", "14"]),
        ("What is the pH of pure water at 25 °C?", "7", ["0", "1", "14"]),
        ("Which subatomic particle carries a negative charge?", "The electron", ["The proton", "The neutron", "The nucleus"]),
        ("What kind of bond forms when two atoms share electrons?", "A covalent bond", ["An ionic bond", "A hydrogen bond", "A metallic bond"]),
        ("Which gas makes up about 78% of Earth's atmosphere?", "Nitrogen", ["Oxygen", "Argon", "Carbon dioxide"]),
        ("What is the approximate value of Avogadro's number?", "6.02 × 10²³", ["3.00 × 10⁸", "6.67 × 10⁻¹¹", "1.60 × 10⁻¹⁹"]),
        ("In which group of the periodic table are the noble gases?", "Group 18", ["Group 1", "Group 2", "Group 17"]),
        ("A solution with a pH of 3 is:", "Acidic", ["Basic", "Neutral", "Saturated"]),
        ("What is the chemical symbol for sodium?", "Na", ["So", "Sd", "S"]),
        ("In 2H₂ + O₂ → 2H₂O, how many water molecules form from 2 molecules of oxygen?", "4", ["2", "1", "8"]),
        ("What is the change of a solid directly into a gas called?", "Sublimation", ["Condensation", "Deposition", "Melting"]),
        ("Isotopes of the same element differ in their number of:", "Neutrons", ["Protons", "Electrons in the neutral atom", "Atomic number"]),
    ],
    "college_computer_science": [
        ("What is the worst-case time complexity of binary search on a sorted array of n elements?", "O(log n)", ["O(n)", "O(n log n)", "O(1)"]),
        ("Which data structure follows last-in, first-out order?", "A stack", ["A queue", "A hash table", "A binary search tree"]),
        ("What is the average-case time to look up a key in a hash table?", "O(1)", ["O(log n)", "O(n)", "O(n²)"]),
        ("Which sorting algorithm has a worst-case running time of O(n log n)?", "Merge sort", ["Quicksort", "Bubble sort", "Insertion sort"]),
        ("How many bits are in a byte?", "8", ["4", "16", "10"]),
        ("Which traversal of a binary search tree visits the keys in sorted order?", "In-order", ["Pre-order", "Post-order", "Level-order"]),
        ("What does a compiler do?", "Translates source code into a lower-level form before it runs", ["Runs code line by line without translating it", "Manages memory while a program runs", "Connects computers to a network"]),
        ("Which data structure is normally used to implement breadth-first search?", "A queue", ["A stack", "A heap", "A trie"]),
        ("What is TRUE XOR TRUE?", "FALSE", ["TRUE", "Undefined", "Both TRUE and FALSE"]),
        ("In a binary tree with the root at depth 0, what is the most nodes there can be at depth d?", "2^d", ["d²", "2d", "d + 1"]),
        ("Which of these problems is NP-complete?", "Boolean satisfiability (SAT)", ["Sorting a list", "Single-source shortest paths with non-negative weights", "Searching a sorted array"]),
        ("In the worst case, how many comparisons does linear search make on n items?", "n", ["log₂ n", "n²", "1"]),
    ],
}

CAPITALS = [
    ("France", "Paris", "Europe", None), ("Germany", "Berlin", "Europe", "Munich"), ("Spain", "Madrid", "Europe", "Barcelona"),
    ("Portugal", "Lisbon", "Europe", "Porto"), ("Poland", "Warsaw", "Europe", "Kraków"), ("Sweden", "Stockholm", "Europe", "Gothenburg"),
    ("Norway", "Oslo", "Europe", "Bergen"), ("Hungary", "Budapest", "Europe", None), ("Austria", "Vienna", "Europe", "Salzburg"),
    ("Switzerland", "Bern", "Europe", "Zurich"), ("Netherlands", "Amsterdam", "Europe", "Rotterdam"), ("Japan", "Tokyo", "Asia", "Osaka"),
    ("South Korea", "Seoul", "Asia", "Busan"), ("Thailand", "Bangkok", "Asia", "Chiang Mai"), ("Vietnam", "Hanoi", "Asia", "Ho Chi Minh City"),
    ("Indonesia", "Jakarta", "Asia", "Surabaya"), ("Pakistan", "Islamabad", "Asia", "Karachi"), ("Turkey", "Ankara", "Asia", "Istanbul"),
    ("Philippines", "Manila", "Asia", "Cebu City"), ("Canada", "Ottawa", "the Americas", "Toronto"), ("Brazil", "Brasília", "the Americas", "Rio de Janeiro"),
    ("Argentina", "Buenos Aires", "the Americas", "Córdoba"), ("Peru", "Lima", "the Americas", "Cusco"), ("Colombia", "Bogotá", "the Americas", "Medellín"),
    ("Chile", "Santiago", "the Americas", "Valparaíso"), ("Kenya", "Nairobi", "Africa", "Mombasa"), ("Egypt", "Cairo", "Africa", "Alexandria"),
    ("Nigeria", "Abuja", "Africa", "Lagos"), ("Morocco", "Rabat", "Africa", "Casablanca"), ("Ghana", "Accra", "Africa", "Kumasi"),
    ("Ethiopia", "Addis Ababa", "Africa", None), ("Australia", "Canberra", "Oceania", "Sydney"), ("New Zealand", "Wellington", "Oceania", "Auckland"),
]


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

IF_TASKS = [
    "Write a short blog post about {a}.", "Write a letter to a {b} explaining why you love {a}.", "Write a poem about {c}.",
    "Describe {d} to someone who has never been there.", "Write a product description for {e}.", "Write a short story about {f}.",
    "Explain {g} to {h}.", "Write a review of {e} that you bought last month.", "Write a speech for {i}.",
    "Write an advertisement for {j}.", "Give advice to someone who is {k}.", "Write a journal entry from the point of view of {f}.",
    "Write a short essay on whether {l}.", "Write a cover letter for a job as {m}.", "Write a FAQ section for {j}.",
]
IF_FILL = {
    "a": ["urban gardening", "learning to swim as an adult", "slow travel by train", "keeping a reading log", "the joys of baking sourdough",
          "cycling to work", "living in a small apartment", "birdwatching in the city", "board game nights", "volunteering at an animal shelter"],
    "b": ["childhood friend", "former teacher", "new neighbour", "pen pal in another country", "younger cousin"],
    "c": ["the first snow of winter", "an old lighthouse", "a city at midnight", "the smell of rain", "a grandmother's kitchen", "autumn leaves",
          "a long train journey", "the ocean at dawn"],
    "d": ["a night market in Taipei", "the Scottish Highlands in autumn", "a busy fish market at dawn", "a desert campsite at night",
          "a mountain village in the Alps", "a rainy afternoon in Amsterdam"],
    "e": ["a solar-powered lantern", "a pair of noise-cancelling headphones", "a reusable coffee cup", "a smart thermostat",
          "a foldable electric bike", "a cast-iron skillet", "an ergonomic office chair"],
    "f": ["a lighthouse keeper who finds a message in a bottle", "a robot that learns to paint", "a girl who can talk to birds",
          "an old dog waiting for its owner", "a chef who loses their sense of taste", "a time traveller stuck in 1920"],
    "g": ["how the stock market works", "why leaves change colour", "how vaccines are tested", "what causes earthquakes",
          "how a bill becomes a law", "why we dream"],
    "h": ["a ten-year-old", "a group of retirees", "a busy parent", "a high school class"],
    "i": ["a school graduation", "the opening of a community library", "a retirement party", "a charity fundraiser"],
    "j": ["a dog-walking service", "a neighbourhood bakery", "a language-exchange app", "a bicycle repair shop", "a weekend pottery class"],
    "k": ["starting their first job", "moving to a new country", "training for a half marathon", "learning to cook", "feeling stuck in their career"],
    "l": ["schools should start later in the morning", "cities should ban cars from their centres", "homework should be optional",
          "everyone should learn a second language", "remote work is better than office work"],
    "m": ["a museum guide", "a park ranger", "a barista", "a junior data analyst", "a library assistant"],
}
IF_KEYWORDS = ["community", "patience", "sunlight", "journey", "balance", "curious", "window", "harmony", "careful", "memory", "garden", "bridge"]
IF_FORBIDDEN = ["very", "really", "amazing", "basically", "literally", "awesome", "thing", "nice"]
IF_END = ["Is there anything else I can help with?", "Let me know if you have additional questions.", "Peace and love.", "See you next time."]
IF_CONFLICTS = [
    {"change_case:english_lowercase", "change_case:english_capital"},
    {"detectable_format:json_format", "detectable_format:number_bullet_lists"}, {"detectable_format:json_format", "detectable_format:title"},
    {"detectable_format:json_format", "length_constraints:number_paragraphs"}, {"detectable_format:json_format", "startend:quotation"},
    {"detectable_format:json_format", "startend:end_checker"}, {"detectable_format:json_format", "detectable_content:postscript"},
    {"detectable_format:json_format", "punctuation:no_comma"}, {"detectable_format:json_format", "combination:repeat_prompt"},
    {"detectable_format:json_format", "change_case:english_capital"}, {"detectable_format:json_format", "change_case:english_lowercase"},
    {"startend:quotation", "startend:end_checker"}, {"startend:quotation", "detectable_content:postscript"},
    {"startend:quotation", "combination:repeat_prompt"}, {"startend:end_checker", "detectable_content:postscript"},
    {"detectable_format:number_bullet_lists", "length_constraints:number_paragraphs"},
    {"detectable_content:postscript", "change_case:english_lowercase"},
    {"combination:repeat_prompt", "detectable_format:title"}, {"combination:repeat_prompt", "punctuation:no_comma"},
    {"keywords:existence", "keywords:forbidden_words"},
]


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


IF_IDS = ["punctuation:no_comma", "change_case:english_lowercase", "change_case:english_capital", "detectable_format:number_bullet_lists",
          "detectable_format:title", "detectable_format:json_format", "keywords:existence", "keywords:forbidden_words",
          "length_constraints:number_words", "length_constraints:number_paragraphs", "startend:end_checker", "startend:quotation",
          "detectable_content:postscript", "combination:repeat_prompt"]


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

GEN_TEMPLATES = [
    ("Write a short story about {x}.", ["a baker who receives a mysterious recipe", "two rival gardeners who must share a greenhouse",
                                        "a child who finds a door in the back of a wardrobe that leads to a library", "a retired astronaut learning to paint",
                                        "a cat that runs a small bookshop", "a storm that strands strangers in a mountain hut", "a musician who can only play at night",
                                        "the last person to leave a sinking island", "a postman who reads one letter too many", "a friendship between a crow and a fox"]),
    ("Explain how {x} works.", ["a refrigerator", "the human immune system", "a solar panel", "GPS navigation", "a bicycle gear system",
                                "an electric guitar", "the postal system", "a credit card payment", "noise-cancelling headphones", "a hydroelectric dam"]),
    ("Describe {x}.", ["a crowded train station at rush hour", "the view from the top of a lighthouse", "a forest after a wildfire",
                       "your ideal weekend morning", "a kitchen during a family holiday dinner", "a small harbour town in winter",
                       "a science museum on a school trip day", "an abandoned amusement park", "a farmers' market in summer", "a thunderstorm over the sea"]),
    ("Write a letter from {x}.", ["a tree to the city council", "a soldier in 1916 to his sister", "a first-year student to their future self",
                                  "a lighthouse keeper to a passing ship's captain", "a grandmother to her newborn grandchild", "an astronaut on Mars to her family",
                                  "a retired teacher to a former student", "a dog to its owner"]),
    ("What would happen if {x}?", ["the Moon disappeared", "everyone could read minds", "humans no longer needed sleep", "the internet went down for a month",
                                   "all cars became self-driving overnight", "it rained every day for a year", "money stopped existing", "animals could vote",
                                   "Earth had two suns", "nobody could tell lies", "every city banned private cars", "plants could walk"]),
    ("Write a persuasive essay arguing that {x}.", ["public libraries deserve more funding", "cities should plant more trees", "children should learn to cook at school",
                                                    "museums should be free", "four-day work weeks are a good idea", "everyone should learn first aid"]),
    ("Tell me about the history of {x}.", ["the bicycle", "coffee", "the printing press", "chess", "the Olympic Games", "paper money",
                                           "the umbrella", "public libraries", "the bicycle helmet", "tea", "the lighthouse", "street lighting"]),
    ("Write a dialogue between {x}.", ["a detective and a nervous witness", "a teenager and a grandparent about social media",
                                       "two astronauts waiting for a launch", "a chef and a food critic", "a shop owner and a shoplifter who is sorry",
                                       "two friends planning a road trip"]),
    ("Write a travel guide entry for {x}.", ["a fictional island nation", "a small mountain town", "a city built underground", "a floating market",
                                             "a village famous for its cheese"]),
    ("Write a poem about {x}.", ["a bicycle left out in the rain", "the last day of summer", "a kettle coming to the boil", "fog over a harbour",
                                 "a library after closing time", "a garden in March", "an empty playground", "the hum of a city at night"]),
    ("Give a detailed explanation of why {x}.", ["the sky changes colour at sunset", "bread goes stale", "cats purr", "ice floats on water",
                                                  "some people are morning people", "cities are warmer than the countryside"]),
    ("Write a news report about {x}.", ["a town that wins a national baking contest", "a whale rescued from a harbour", "the opening of a new footbridge",
                                        "a school robotics team that reaches the finals", "a record-breaking spring heatwave"]),
    ("Write a speech for {x}.", ["a best man at a wedding", "a student's first day as class president", "an award for a volunteer nurse",
                                 "the last night of a summer camp", "the launch of a community garden"]),
    ("Describe a day in the life of {x}.", ["a zookeeper", "a medieval blacksmith", "a deep-sea researcher", "an air traffic controller",
                                            "a honeybee", "a city bus driver"]),
    ("Write the introduction to a recipe blog post for {x}.", ["grandma's apple pie", "a spicy lentil soup", "lemon drizzle cake", "homemade dumplings"]),
    ("Write a short story that begins with the sentence \"{x}\"", ["The lights went out just as the clock struck nine.", "Nobody had opened the attic in forty years.",
                                                                      "The map was wrong, and that was the best thing that ever happened to us.",
                                                                      "On Tuesday, the river started flowing backwards.", "She found the note tucked inside a library book."]),
    ("Explain to a beginner how to {x}.", ["plant a vegetable garden", "start journaling", "change a flat bicycle tyre", "make a budget spreadsheet",
                                           "brew pour-over coffee", "prepare for a job interview"]),
]


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
