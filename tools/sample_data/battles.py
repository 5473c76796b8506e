"""The prompt pool: 190 distinct prompts, each with its four answer variants"""

import random
from collections import Counter
from datetime import UTC, datetime, timedelta

from sample_data.citations import cite
from sample_data.common import OPPONENTS, OWN_MODEL, TEXT, fill, fill_any, rng_for
from sample_data.math_answers import MATH_TEMPLATES, math_variants
from sample_data.render import section_variants
from sample_data.subjects import CITIES, PARAM_SUBJECTS, SUBJECTS, c_meal_plan, t_itinerary, w_cover, w_toast

WARMUPS = TEXT["WARMUPS"]
ACKS = [
    "Thanks!",
    "Great, that helps.",
    "Got it, thanks.",
    "Perfect. Next question:",
    "OK, makes sense.",
    "Thanks. Another one:",
]


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
    return [
        {"role": "user", "content": q},
        {"role": "assistant", "content": a},
        {"role": "user", "content": f"{rng.choice(ACKS)} {inst['prompt']}"},
    ]


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
    start = datetime(2026, 2, 23, tzinfo=UTC)
    hour_weights = [1, 1, 1, 1, 1, 1, 2, 3, 5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 7, 8, 8, 7, 5, 3]
    out = []
    while len(out) < n:
        t = start + timedelta(
            days=rng.randrange(42),
            hours=rng.choices(range(24), hour_weights)[0],
            minutes=rng.randrange(60),
            seconds=rng.randrange(60),
        )
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
            decorated[b["win"]] = (
                (cite(base, inst, rng, safe=True) if rng.random() < 0.5 else base)
                if markers
                else maybe_cite(base, inst, rng)
            )
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
        out.append(
            {
                "vote": vote,
                "own": maybe_cite(variants[a], inst, rng),
                "other": maybe_cite(variants[b], inst, rng),
                "model": rng.choice(opponents),
            }
        )
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
    singles = {
        "own_better": [
            p for p in plans if p["kind"] == "single" and p["note"] == "" and p["battles"][0]["vote"] == "own_better"
        ],
        "other_better": [
            p for p in plans if p["kind"] == "single" and p["note"] == "" and p["battles"][0]["vote"] == "other_better"
        ],
    }
    assigned = {}
    for key, vote, style, form in FORCED:
        inst = next(
            p
            for p in pool
            if p["key"] == key
            and p["prompt"] == instantiate(next(s for s in SUBJECTS if s["key"] == key), 0, random.Random(0))["prompt"]
        )
        plan = singles[vote].pop(0)
        pool.remove(inst)
        assigned[id(plan)] = (inst, style, form)
    rest = iter(pool)

    used_times = set()
    rows = []
    multi = set(
        rng.sample(range(N_DECISIVE_PROMPTS + N_TIE_PROMPTS), round(0.15 * (N_DECISIVE_PROMPTS + N_TIE_PROMPTS)))
    )
    for n, plan in enumerate(plans):
        inst, style, form = assigned[id(plan)] if id(plan) in assigned else (next(rest), None, None)
        variants = variants_of(inst, rng)
        messages = conversation(inst, rng, n in multi)
        filled = decisive_battles(plan, inst, variants, rng, OPPONENTS)
        if style:
            filled[0]["own" if filled[0]["vote"] == "own_better" else "other"] = cite(
                variants["D"], inst, rng, style=style, form=form
            )
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
        out.append(
            {
                "battle_id": f"bt-{number:06d}",
                "prompt_id": pid,
                "messages": messages,
                "own": {"model": OWN_MODEL, "answer": b["own"]},
                "other": {"model": b["model"], "answer": b["other"]},
                "vote": b["vote"],
                "created_at": t.strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
        )
    return out
