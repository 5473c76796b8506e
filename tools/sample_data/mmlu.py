"""Eval: MMLU-style multiple choice. Fact questions are (question, correct, three distractors);
computed questions draw their numbers and build distractors from typical slips.
"""

from fractions import Fraction

from sample_data.common import TEXT, norm, num, rng_for

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
        return (
            f"Solve for x: {a}x + {b} = {c}.",
            str(x),
            [
                str(x + 1),
                str((c + b) // a) if (c + b) % a == 0 else str(c - b),
                str(-x) if x else str(x + 2),
                str(x - 1),
            ],
        )
    if kind == 1:
        x1, y1 = rng.randint(-5, 5), rng.randint(-5, 5)
        dx, dy = rng.choice([1, 2, 3, 4]), rng.choice([-6, -4, -3, -2, 2, 3, 4, 6, 8])
        m = Fraction(dy, dx)
        inv = Fraction(dx, dy)
        return (
            f"What is the slope of the line through ({x1}, {y1}) and ({x1 + dx}, {y1 + dy})?",
            str(m),
            [str(inv), str(-m), str(-inv), str(m + 1)],
        )
    if kind == 2:
        r1, r2 = rng.sample([-6, -5, -4, -3, -2, -1, 1, 2, 3, 4, 5, 6, 7], 2)
        b, c = -(r1 + r2), r1 * r2
        eq = f"x² {'+' if b >= 0 else '−'} {abs(b)}x {'+' if c >= 0 else '−'} {abs(c)} = 0"
        fmt = lambda p, q: f"x = {min(p, q)} or x = {max(p, q)}"
        return (
            f"What are the solutions of {eq}?",
            fmt(r1, r2),
            [fmt(-r1, -r2), fmt(r1, -r2), fmt(-r1, r2), fmt(r1 + 1, r2)],
        )
    if kind == 3:
        a, b, k = rng.randint(2, 5), rng.randint(1, 12), rng.randint(2, 6)
        v = a * k * k - b
        return (
            f"If f(x) = {a}x² − {b}, what is f({k})?",
            str(v),
            [str((a * k) ** 2 - b), str(a * 2 * k - b), str(a * k * k + b), str(v + a)],
        )
    s = rng.randint(3, 11)
    ways = sum(1 for i in range(1, 7) for j in range(1, 7) if i + j == s)
    p = Fraction(ways, 36)
    return (
        f"Two fair six-sided dice are rolled. What is the probability that the sum is {s}?",
        str(p),
        [
            str(Fraction(ways, 12)),
            str(Fraction(1, 11)),
            str(Fraction(ways + 1, 36)),
            str(Fraction(1, 6)) if p != Fraction(1, 6) else str(Fraction(1, 12)),
        ],
    )


def q_elem_math(rng):
    """Fractions, percentages, order of operations, rounding and multiples."""
    kind = rng.randrange(5)
    if kind == 0:
        a, b, c, d = rng.randint(1, 5), rng.choice([2, 3, 4, 5, 6, 8]), rng.randint(1, 5), rng.choice([3, 4, 5, 6, 10])
        r = Fraction(a, b) + Fraction(c, d)
        return (
            f"What is {a}/{b} + {c}/{d}?",
            str(r),
            [f"{a + c}/{b + d}", str(r + Fraction(1, b * d)), str(Fraction(a * c, b * d)), str(r - Fraction(1, b * d))],
        )
    if kind == 1:
        p, n = rng.choice([5, 12, 15, 30, 35, 45, 60]), rng.choice([40, 80, 120, 160, 240, 300, 420])
        v = Fraction(p * n, 100)
        return (
            f"What is {p}% of {n}?",
            num(float(v)),
            [num(float(v * 10)), num(float(v / 10)), num(n - float(v)), num(float(v) + p)],
        )
    if kind == 2:
        a, b, c, d = rng.randint(2, 9), rng.randint(2, 9), rng.randint(2, 9), rng.randint(1, 9)
        v = a + b * c - d
        return (
            f"What is {a} + {b} × {c} − {d}?",
            str(v),
            [str((a + b) * c - d), str(a + b * (c - d)), str(v + 2), str(a + b + c - d)],
        )
    if kind == 3:
        n = rng.randint(1050, 9949)
        r = round(n, -2)
        return (
            f"Round {n:,} to the nearest hundred.",
            f"{r:,}",
            [
                f"{round(n, -3):,}" if round(n, -3) != r else f"{r + 100:,}",
                f"{r - 100:,}",
                f"{round(n, -1):,}",
                f"{r + 100:,}",
            ],
        )
    a, b = rng.sample([4, 6, 8, 9, 10, 12, 14, 15, 18], 2)
    from math import gcd

    lcm = a * b // gcd(a, b)
    return (
        f"What is the least common multiple of {a} and {b}?",
        str(lcm),
        [str(a * b) if a * b != lcm else str(lcm * 2), str(gcd(a, b)), str(lcm + a), str(a + b)],
    )


def q_physics(rng):
    """One-formula mechanics and circuits; distractors invert or misuse the formula."""
    kind = rng.randrange(6)
    if kind == 0:
        m, a = rng.randint(2, 20), rng.randint(2, 9)
        return (
            f"{article(m).capitalize()} {m} kg cart accelerates at {a} m/s². What net force acts on it?",
            f"{m * a} N",
            [f"{num(round(m / a, 2))} N", f"{m + a} N", f"{num(round(a / m, 2))} N", f"{2 * m * a} N"],
        )
    if kind == 1:
        t, v = rng.randint(2, 6), rng.choice([45, 50, 60, 75, 80, 90])
        return (
            f"A car travels {t * v} km in {t} hours. What is its average speed?",
            f"{v} km/h",
            [f"{t * v * t} km/h", f"{v + t} km/h", f"{num(round(t / (t * v), 3))} km/h", f"{2 * v} km/h"],
        )
    if kind == 2:
        m, v = rng.choice([2, 4, 6, 8, 10]), rng.randint(2, 10)
        ke = m * v * v // 2
        return (
            f"What is the kinetic energy of {article(m)} {m} kg ball moving at {v} m/s?",
            f"{ke} J",
            [f"{m * v * v} J", f"{m * v // 2} J", f"{m * v} J", f"{ke + m} J"],
        )
    if kind == 3:
        r, i = rng.choice([2, 4, 5, 10, 12, 20, 50]), rng.choice([2, 3, 4, 5, 6])
        return (
            f"{article(r).capitalize()} {r} Ω resistor carries a current of {i} A. What is the voltage across it?",
            f"{r * i} V",
            [f"{num(round(r / i, 2))} V", f"{num(round(i / r, 2))} V", f"{r + i} V", f"{r * i * i} V"],
        )
    if kind == 4:
        vol, d = rng.choice([5, 10, 20, 25, 40]), rng.choice([2, 3, 4, 8])
        return (
            f"An object has a mass of {vol * d} g and a volume of {vol} cm³. What is its density?",
            f"{d} g/cm³",
            [f"{vol * d * vol} g/cm³", f"{num(round(1 / d, 3))} g/cm³", f"{vol * d + vol} g/cm³", f"{d * 2} g/cm³"],
        )
    t, p = rng.choice([2, 4, 5, 10, 20]), rng.choice([25, 50, 60, 100, 150])
    return (
        f"A motor does {t * p} J of work in {t} s. What is its power output?",
        f"{p} W",
        [f"{t * p * t} W", f"{t * p + t} W", f"{num(round(t / (t * p), 3))} W", f"{2 * p} W"],
    )


MOLAR = [
    ("H₂O", 18.0),
    ("CO₂", 44.0),
    ("NaCl", 58.5),
    ("CH₄", 16.0),
    ("NH₃", 17.0),
    ("O₂", 32.0),
    ("C₆H₁₂O₆", 180.0),
    ("H₂SO₄", 98.0),
    ("CaCO₃", 100.0),
    ("N₂", 28.0),
    ("HCl", 36.5),
    ("NaOH", 40.0),
]


def q_chem(rng):
    """Molar masses and mole counts for common compounds."""
    formula, mm = rng.choice(MOLAR)
    if rng.random() < 0.5:
        return (
            f"Using H = 1, C = 12, N = 14, O = 16, Na = 23, S = 32, Cl = 35.5 and Ca = 40, what is the molar mass of {formula}?",
            f"{num(mm)} g/mol",
            [f"{num(mm + 2)} g/mol", f"{num(mm - 2)} g/mol", f"{num(mm * 2)} g/mol", f"{num(mm + 16)} g/mol"],
        )
    n = rng.choice([2, 3, 4, 5, 0.5])
    mass = mm * n
    return (
        f"How many moles are in {num(mass)} g of {formula} (molar mass {num(mm)} g/mol)?",
        f"{num(n)} mol",
        [f"{num(round(mass * mm, 1))} mol", f"{num(n * 2)} mol", f"{num(n + 1)} mol", f"{num(round(n / 2, 2))} mol"],
    )


def q_binary(rng):
    """Binary and hexadecimal conversions."""
    kind = rng.randrange(3)
    n = rng.randint(9, 250)
    if kind == 0:
        return (
            f"What is the decimal value of the binary number {n:b}?",
            str(n),
            [
                str(n + 1),
                str(n * 2),
                str(n - 2),
                str(int(f"{n:b}"[::-1], 2)) if int(f"{n:b}"[::-1], 2) != n else str(n + 4),
            ],
        )
    if kind == 1:
        alts = [f"{n + 1:b}", f"{n * 2:b}", f"{n - 1:b}", f"{n ^ 4:b}"]
        return f"What is {n} written in binary?", f"{n:b}", alts
    return (
        f"What is the decimal value of the hexadecimal number 0x{n:X}?",
        str(n),
        [
            str(int(f"{n:X}", 10)) if f"{n:X}".isdigit() and int(f"{n:X}") != n else str(n + 16),
            str(n - 16),
            str(n + 1),
            str(n * 16),
        ],
    )


def q_capital(rng):
    """Capitals, with the largest city as the tempting wrong answer where there is one."""
    country, capital, region, trap = rng.choice(CAPITALS)
    same = [c for _, c, r, _ in CAPITALS if r == region and c != capital]
    cands = ([trap] if trap else []) + rng.sample(same, len(same))
    return (
        rng.choice([f"What is the capital of {country}?", f"Which city is the capital of {country}?"]),
        capital,
        cands,
    )


MMLU_COMPUTED = {
    "high_school_mathematics": q_hs_math,
    "elementary_mathematics": q_elem_math,
    "high_school_physics": q_physics,
    "high_school_geography": q_capital,
}


def make_mmlu(seed, taken):
    """240 items, 24 per subject, correct letters balanced 60/60/60/60."""
    rng = rng_for(seed, "mmlu")
    items = []
    subjects = [
        "high_school_biology",
        "high_school_world_history",
        "astronomy",
        "nutrition",
        "high_school_chemistry",
        "college_computer_science",
        "high_school_mathematics",
        "elementary_mathematics",
        "high_school_physics",
        "high_school_geography",
    ]
    for subject in subjects:
        pool = []
        for q, a, d in MMLU_FACTS.get(subject, []):
            pool.append((q, a, d))
        maker = {"high_school_chemistry": q_chem, "college_computer_science": q_binary}.get(
            subject, MMLU_COMPUTED.get(subject)
        )
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
