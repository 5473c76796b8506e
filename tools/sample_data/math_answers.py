"""Worked math answers

A math template returns the prompt, the solution steps, the answer and a check, plus the
steps and answer of a plausible mistake. math_variants() renders the four answer kinds.
"""

from fractions import Fraction

from sample_data.common import money, num

NAMES = [
    "Maya",
    "Leo",
    "Priya",
    "Daniel",
    "Sofia",
    "Omar",
    "Hannah",
    "Kenji",
    "Grace",
    "Mateo",
    "Aisha",
    "Tom",
    "Elena",
    "Samuel",
    "Nadia",
    "Lucas",
    "Zoe",
    "Ibrahim",
    "Chloe",
    "Ravi",
]


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
            (
                "Apply the discount",
                f"{disc}% of {money(price)} is {money(d_amt)}, so the sale price is {money(price)} − {money(d_amt)} = {money(sale)}.",
            ),
            (
                "Add the sales tax",
                f"Tax is charged on the sale price: {tax}% of {money(sale)} is {money(t_amt)}, so the total is {money(sale)} + {money(t_amt)} = {money(final)}.",
            ),
        ],
        "answer": f"The final price is **{money(final)}**.",
        "check": f"In one line: {money(price)} × {1 - disc / 100:.2f} × {1 + tax / 100:.2f} = {money(final)}. Taxing first and discounting second gives the same result.",
        "wrong": [
            f"The discount is {disc}% and the tax is {tax}%, so overall the price drops by {disc - tax}%.",
            f"{disc - tax}% of {money(price)} is {money(price * (disc - tax) / 100)}, which leaves {money(wrong)}.",
        ],
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
            (
                "Find the time",
                f"{dist} km ÷ {a + b} km/h = {num(t)} hours" + (f", which is {hours_text(t)}." if t != int(t) else "."),
            ),
            (
                "Clock time and position",
                f"Starting at {start[1]}, they meet at {clock(start[0], t)}; by then the slower train has covered {a} × {num(t)} = {num(a * t)} km.",
            ),
        ],
        "answer": f"They meet at **{clock(start[0], t)}**, **{num(a * t)} km** from the slower train's station.",
        "check": f"The faster train covers {b} × {num(t)} = {num(b * t)} km, and {num(a * t)} + {num(b * t)} = {dist} km.",
        "wrong": [
            f"The trains' relative speed is {b} − {a} = {b - a} km/h.",
            f"So they meet after {dist} ÷ {b - a} = {num(round(wrong_t, 2))} hours.",
        ],
        "wrong_answer": f"They meet after about {num(round(wrong_t, 1))} hours.",
        "why": "trains moving toward each other close the gap at the sum of their speeds, not the difference.",
    }


def m_painters(rng):
    """Work rates add; the mistake averages the times."""
    a, b = rng.choice([(3, 6), (4, 12), (6, 12), (10, 15), (2, 6), (12, 24), (6, 30), (20, 30)])
    r = a * b / (a + b)
    p, q = rng.sample(NAMES, 2)
    job = rng.choice(
        [
            "paint a fence",
            "weed the community garden",
            "sort the library's donations",
            "wash all the windows of the house",
        ]
    )
    return {
        "prompt": f"{p} can {job} in {a} hours. {q} can do the same job in {b} hours. How long will it take if they work together?",
        "steps": [
            ("Rates per hour", f"{p} does 1/{a} of the job per hour and {q} does 1/{b} of it per hour."),
            ("Add the rates", f"Together: 1/{a} + 1/{b} = {Fraction(1, a) + Fraction(1, b)} of the job per hour."),
            (
                "Invert",
                f"The time is 1 ÷ {Fraction(1, a) + Fraction(1, b)} = {num(r)} hours"
                + (f", or {hours_text(r)}." if r != int(r) else "."),
            ),
        ],
        "answer": f"Working together, they finish in **{hours_text(r)}**.",
        "check": f"In {num(r)} hours, {p} does {Fraction(a * b, a + b) / a} of the job and {q} does {Fraction(a * b, a + b) / b}, which together make the whole job.",
        "wrong": [
            f"On average, one person takes ({a} + {b}) ÷ 2 = {num((a + b) / 2)} hours.",
            f"Two people working together halve that: {num((a + b) / 4)} hours.",
        ],
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
            (
                "Solve",
                f"0.4 × F = {goal} − {num(0.2 * sum(s))} = {num(goal - 0.2 * sum(s))}, so F = {num(goal - 0.2 * sum(s))} ÷ 0.4 = {need}.",
            ),
        ],
        "answer": f"You need **{need}** on the final.",
        "check": f"0.2 × {sum(s)} + 0.4 × {need} = {num(0.2 * sum(s))} + {num(0.4 * need)} = {goal}.",
        "wrong": [
            f"For an average of {goal} over four scores you need a total of 4 × {goal} = {4 * goal}.",
            f"You have {sum(s)} so far, so the final must be {4 * goal} − {sum(s)} = {wrong}.",
        ],
        "wrong_answer": f"You need {wrong} on the final.",
        "why": "the final counts twice as much as each test, so the scores have to be weighted.",
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
            (
                "Percentage",
                f"Divide by the starting value: {num(new - base)} ÷ {num(base)} = {p / 100:.2f}, which is {p}%.",
            ),
            ("Next year", f"{num(new)} × {1 + p / 100:.2f} = {num(nxt)}."),
        ],
        "answer": f"The population grew by **{p}%**, and at that rate it will be about **{num(nxt)}** next year.",
        "check": f"{num(base)} × {1 + p / 100:.2f} = {num(new)}, which matches the figure given.",
        "wrong": [
            f"The increase is {num(new - base)} people.",
            f"As a percentage of the population: {num(new - base)} ÷ {num(new)} ≈ {wrong_p}%.",
        ],
        "wrong_answer": f"The growth rate was about {wrong_p}%.",
        "why": "a percentage change is always measured against the starting value.",
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
            (
                "Each share",
                ", ".join(f"{n}: {r} × {money(unit)} = {money(v)}" for n, r, v in zip(people, ratio, shares)) + ".",
            ),
        ],
        "answer": f"{people[0]} gets **{money(shares[0])}**, {people[1]} gets **{money(shares[1])}** and {people[2]} gets **{money(shares[2])}**.",
        "check": f"{money(shares[0])} + {money(shares[1])} + {money(shares[2])} = {money(total)}.",
        "wrong": [
            f"Split evenly first: {money(total)} ÷ 3 = {money(total / 3)} each.",
            f"Then scale by the ratio relative to {people[0]}: "
            + ", ".join(f"{n} {money(v)}" for n, v in zip(people, wrong))
            + ".",
        ],
        "wrong_answer": f"So the shares are {', '.join(money(v) for v in wrong)}.",
        "why": "a ratio splits the whole into equal parts; scaling an even split overshoots the total.",
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
            (
                "Outer rectangle",
                f"The path adds {num(w)} m on both sides, so the outer size is {num(length + 2 * w)} m by {num(width + 2 * w)} m, an area of {num(outer)} m².",
            ),
            (
                "Subtract the garden",
                f"{num(outer)} − {length} × {width} = {num(outer)} − {length * width} = {num(path)} m².",
            ),
            ("Cost", f"{num(path)} m² × {money(cost)} = {money(path * cost)}."),
        ],
        "answer": f"The path covers **{num(path)} m²** and the gravel costs **{money(path * cost)}**.",
        "check": f"Split the path into strips: two of {num(length + 2 * w)} × {num(w)} and two of {width} × {num(w)}, which gives {num(2 * (length + 2 * w) * w + 2 * width * w)} m².",
        "wrong": [
            f"With the path the garden becomes {num(length + w)} m by {num(width + w)} m, an area of {num((length + w) * (width + w))} m².",
            f"The path is {num((length + w) * (width + w))} − {length * width} = {num(wrong)} m², costing {money(wrong * cost)}.",
        ],
        "wrong_answer": f"The path is {num(wrong)} m² and costs {money(wrong * cost)}.",
        "why": "the path widens the garden on both sides, so each dimension grows by twice the width.",
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
            (
                "Solve",
                f"{num(vol * a / 100)} + {b / 100:g}x = {num(vol * c / 100)} + {c / 100:g}x, so {(b - c) / 100:g}x = {num(vol * (c - a) / 100)} and x = {num(int(x))}.",
            ),
        ],
        "answer": f"Add **{num(int(x))} litres** of the {b}% solution.",
        "check": f"Salt: {num(vol * a / 100)} + {num(int(x) * b / 100)} = {num((vol * a + int(x) * b) / 100)} L in {vol + int(x)} L, which is {c}%.",
        "wrong": [
            f"The gap to close is {c} − {a} = {c - a} points out of the {b} − {a} = {b - a} point range.",
            f"So add {vol} × {c - a}/{b - a} = {num(round(float(wrong), 2))} litres.",
        ],
        "wrong_answer": f"Add about {num(round(float(wrong), 2))} litres.",
        "why": "the amount of salt has to balance, which puts the gap between the added solution and the target in the denominator.",
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
    parent, child = rng.choice(
        [("Maria", "her son"), ("James", "his daughter"), ("Anjali", "her daughter"), ("Carlos", "his son")]
    )
    wrong = round(n * (m + 1) / (k - m), 1)
    return {
        "prompt": f"{parent} is {k} times as old as {child}. In {n} years, {parent} will be {m} times as old as {child}. How old are they now?",
        "steps": [
            (
                "Set up",
                f"Let the child's age be c. Then the parent is {k}c, and in {n} years: {k}c + {n} = {m}(c + {n}).",
            ),
            ("Expand", f"{k}c + {n} = {m}c + {m * n}."),
            ("Solve", (f"{k - m}c = {m * n - n}, so c = {c}." if k - m > 1 else f"c = {m * n} − {n} = {c}.")),
        ],
        "answer": f"The {child.split()[1]} is **{c}** and {parent} is **{k * c}**.",
        "check": f"In {n} years: {k * c + n} and {c + n}, and {k * c + n} = {m} × {c + n}.",
        "wrong": [
            f"{k}c + {n} = {m}(c + {n}) gives {k - m if k - m > 1 else ''}c = {m * n} + {n} = {m * n + n}.",
            f"So c = {num(wrong)}.",
        ],
        "wrong_answer": f"The child is about {num(wrong)} and {parent} about {num(round(k * wrong, 1))}.",
        "why": "expanding the bracket gives a subtraction on the right-hand side, not an addition.",
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
    thing = rng.choice(
        ["yogurt cups", "AA batteries", "granola bars", "cans of sparkling water", "rolls of paper towels"]
    )
    return {
        "prompt": f"A pack of {n1} {thing} costs {money(p1)} and a pack of {n2} costs {money(p2)}. Which is the better deal, and how much do you save per item?",
        "steps": [
            ("Small pack", f"{money(p1)} ÷ {n1} = {money(u1)} per item."),
            ("Large pack", f"{money(p2)} ÷ {n2} = {money(u2)} per item."),
            ("Difference", f"{money(u1)} − {money(u2)} = {money(u1 - u2)} saved per item with the large pack."),
        ],
        "answer": f"The **pack of {n2}** is the better deal, saving about **{money(u1 - u2)} per item**.",
        "check": f"Buying {n2} items as small packs would cost {n2 // n1} × {money(p1)} = {money(p1 * n2 / n1)}, more than {money(p2)}.",
        "wrong": [
            f"The pack of {n1} costs {money(p1)} and the pack of {n2} costs {money(p2)}.",
            f"{money(p1)} is less than {money(p2)}, so the smaller pack is cheaper.",
        ],
        "wrong_answer": f"The pack of {n1} is the better deal.",
        "why": "packs of different sizes can only be compared per item.",
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
        "wrong": [f"Let them be n, n + 1 and n + 2, so 3n + 3 = {total}.", f"Then n = {mid - 1}."],
        "wrong_answer": f"The integers are {mid - 1}, {mid} and {mid + 1}.",
        "why": "consecutive even or odd integers are two apart, not one.",
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
        "wrong": [
            f"Each draw is red with probability {r}/{n}.",
            f"So both are red with probability ({r}/{n})² = {wrong}.",
        ],
        "wrong_answer": f"The probability is {wrong}, about {float(wrong) * 100:.1f}%.",
        "why": "the first marble isn't put back, so the second draw has one red marble and one marble fewer.",
    }


MATH_TEMPLATES = [
    m_discount,
    m_trains,
    m_painters,
    m_final_grade,
    m_growth,
    m_ratio,
    m_path,
    m_mixture,
    m_ages,
    m_unit_price,
    m_consecutive,
    m_marbles,
]


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
        d.append(
            f'**A common mistake:** {problem["wrong"][0][0].lower() + problem["wrong"][0][1:]} That leads to "{problem["wrong_answer"].rstrip(".")}", '
            f"which is wrong: {problem['why']}"
        )
    a = [rng.choice(["Here's one way to set it up:", "Set it up like this:", "You can solve it in a few lines:"])]
    a.append("\n".join(f"{i}. {body}" for i, (_, body) in enumerate(steps, 1)))
    first = problem["answer"].split()[0]
    lower = first in ("The", "They", "You", "Add", "Working")
    a.append("So " + (first.lower() if lower else first) + problem["answer"][len(first) :])
    b = " ".join(body for _, body in steps) + " " + problem["answer"].replace("**", "")
    f = (
        " ".join(problem["wrong"])
        + "\n\n"
        + problem["wrong_answer"]
        + rng.choice(["", "", " Let me know if you have other questions!", " Hope this helps."])
    )
    return {"D": "\n\n".join(d), "A": "\n\n".join(a), "B": b, "F": f}
