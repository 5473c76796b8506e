"""Handwritten battle subjects

Each subject: topic, prompts (phrasings with {{placeholders}}), params (one dict is drawn per
prompt), intro (two openings), sections, outro (two closings) and wrong (the flawed answer's
claim). A subject gives one prompt per phrasing, so similar questions get similar answers,
as they do in a real arena.
"""

from sample_data.common import TEXT, money
from sample_data.math_answers import NAMES

SUBJECTS = TEXT["SUBJECTS"]


# -----------------------------------------------------------------------------
# Parametric battle subjects: personal finance, writing help and city itineraries


def f_budget(rng):
    """50/30/20 split of a given take-home pay."""
    income = rng.choice([2800, 3400, 4200, 5000, 6500])
    n, w, s = income * 0.5, income * 0.3, income * 0.2
    return {
        "topic": "finance",
        "key": "fin_budget",
        "prompt": rng.choice(
            [
                f"I take home {money(income)} a month. How should I split it using the 50/30/20 rule?",
                f"Can you help me make a simple budget? My take-home pay is {money(income)} per month.",
            ]
        ),
        "intro": [
            f"The 50/30/20 rule splits take-home pay into needs, wants and savings. On {money(income)} a month it looks like this.",
            "A simple starting point is 50/30/20: half for needs, 30% for wants and 20% for savings and extra debt payments.",
        ],
        "sections": [
            (
                "table",
                "Your split",
                ["Category", "Share", "Per month"],
                [["Needs", "50%", money(n)], ["Wants", "30%", money(w)], ["Savings and debt", "20%", money(s)]],
            ),
            (
                "ul",
                "What goes where",
                [
                    "Needs: rent or mortgage, utilities, groceries, insurance, transport to work and minimum loan payments.",
                    "Wants: eating out, streaming, hobbies, holidays and anything you could cut in a pinch.",
                    "Savings and debt: emergency fund, retirement contributions and payments above the minimums.",
                ],
            ),
            (
                "p",
                "If the numbers don't fit",
                f"In high-cost cities, needs often run above 50%. If rent alone is more than about {money(income * 0.35)}, a 60/20/20 split is a reasonable compromise; what matters is that the savings part happens automatically.",
            ),
            (
                "ol",
                "Getting started",
                [
                    "Pull last month's spending from your bank statements.",
                    "Sort each item into needs, wants or savings.",
                    f"Set up an automatic transfer of {money(s)} on payday.",
                    "Review after a month and adjust the categories that surprised you.",
                ],
            ),
        ],
        "outro": [
            "Even if you can't reach 20% right away, start with what you can and raise it with each pay rise.",
            "Budgeting apps can sort transactions for you, but a spreadsheet works just as well.",
        ],
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
        "topic": "finance",
        "key": "fin_compound",
        "prompt": rng.choice(
            [
                f"If I invest {money(p)} at {r}% a year, compounded annually, how much will I have after {n} years?",
                f"How much will {money(p)} grow to in {n} years at {r}% interest? Please explain how compound interest works.",
            ]
        ),
        "intro": [
            f"After {n} years you'd have about **{money(round(amount))}**, because each year's interest also earns interest.",
            f"With compound interest the balance grows by {r}% of itself each year, so {money(p)} becomes about {money(round(amount))} in {n} years.",
        ],
        "sections": [
            ("p", "The formula", f"A = P × (1 + r)^n = {money(p)} × {1 + r / 100:.2f}^{n} ≈ {money(round(amount))}."),
            ("table", "Balance over time", ["Year", "Balance"], rows),
            (
                "p",
                "Monthly compounding",
                f"If interest is added monthly instead, A = P × (1 + r/12)^(12n) ≈ {money(round(monthly))}, about {money(round(monthly - amount))} more.",
            ),
            (
                "p",
                "Rule of 72",
                f"Divide 72 by the rate to estimate how long money takes to double: 72 ÷ {r} ≈ {72 / r:.0f} years.",
            ),
            (
                "ul",
                "Keep in mind",
                [
                    f"Investment returns aren't guaranteed; {r}% is an assumption, not a promise.",
                    "Inflation erodes purchasing power; at 2-3% a year, prices roughly double in 25-35 years.",
                    "Taxes on interest or gains reduce the result unless the money is in a tax-advantaged account.",
                ],
            ),
        ],
        "outro": [
            "Adding even a small monthly contribution changes the picture a lot; try it in a compound interest calculator.",
            "Time is the biggest lever, which is why starting early matters more than starting big.",
        ],
        "wrong": f"Compound interest on {money(p)} at {r}% for {n} years is {money(p)} × {r / 100} × {n} = {money(p * r / 100 * n)}, so you'd have {money(p * (1 + r / 100 * n))} in total.",
    }


def f_emergency(rng):
    """Emergency-fund targets and how long they take to build."""
    e = rng.choice([1800, 2400, 3100, 3600])
    s = rng.choice([200, 300, 400, 500])
    m3, m6 = -(-3 * e // s), -(-6 * e // s)
    return {
        "topic": "finance",
        "key": "fin_emergency",
        "prompt": rng.choice(
            [
                f"My essential expenses are about {money(e)} a month. How big should my emergency fund be, and where should I keep it?",
                f"I can save {money(s)} a month. How long will it take to build an emergency fund if my bills are {money(e)} a month?",
            ]
        ),
        "intro": [
            "The usual guideline is three to six months of essential expenses, kept somewhere safe and easy to reach.",
            f"On {money(e)} a month of essentials, aim for somewhere between {money(3 * e)} and {money(6 * e)}.",
        ],
        "sections": [
            ("table", "Targets", ["Cushion", "Amount"], [["3 months", money(3 * e)], ["6 months", money(6 * e)]]),
            (
                "p",
                "How long it takes",
                f"Saving {money(s)} a month, you'd reach the three-month level in about {m3} months and six months in about {m6}.",
            ),
            (
                "ul",
                "Where to keep it",
                [
                    "A high-yield savings account: instant access and no market risk.",
                    "Separate from your everyday account, so it doesn't get spent by accident.",
                    "Not in stocks: a market drop often arrives at the same time as a job loss.",
                ],
            ),
            (
                "ul",
                "Three months or six?",
                [
                    "Closer to three: a stable job, two incomes, few dependants.",
                    "Closer to six or more: freelance or commission income, a single income, or a mortgage and children.",
                ],
            ),
            (
                "p",
                "Start small",
                "A first goal of $1,000 covers most car repairs and surprise bills, and reaching it quickly builds the habit.",
            ),
        ],
        "outro": [
            "Once it's built, only touch it for real emergencies, and refill it first afterwards.",
            "Automating the monthly transfer is what makes it happen.",
        ],
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
    verdict = (
        f"In your case the {aval[0][0].lower()} is both the smallest balance and the highest rate, so both methods start there."
        if same
        else f"Avalanche starts with the {aval[0][0].lower()} at {aval[0][2]}%, snowball with the {snow[0][0].lower()} at {money(snow[0][1])}. The interest difference is modest, so choose the one you'll stick with."
    )
    return {
        "topic": "finance",
        "key": "fin_debt",
        "prompt": f"I have three debts: a {listing}. Should I use the avalanche or the snowball method to pay them off?",
        "intro": [
            "Both methods work. Avalanche (highest interest first) saves the most money; snowball (smallest balance first) gives quicker wins.",
            "The best method is the one you'll keep following, but the numbers favour the avalanche.",
        ],
        "sections": [
            ("table", "Your debts", ["Debt", "Balance", "APR"], [[n, money(b), f"{a}%"] for n, b, a in debts]),
            ("ol", "Avalanche order (highest rate first)", [f"{n}: {a}%" for n, b, a in aval]),
            ("ol", "Snowball order (smallest balance first)", [f"{n}: {money(b)}" for n, b, a in snow]),
            ("p", "Which to choose", verdict),
            (
                "ul",
                "Either way",
                [
                    "Pay the minimum on every debt, every month.",
                    "Put every spare dollar on the target debt; when it's gone, roll its payment into the next one.",
                    "Stop adding new charges to the cards you're paying down.",
                ],
            ),
        ],
        "outro": [
            "Calling the card issuers to ask for a lower rate takes ten minutes and sometimes works.",
            "A 0% balance-transfer card can help with the card debt if you can clear it within the promotional period.",
        ],
        "wrong": "Pay off the largest balance first; that's the avalanche method, and it always saves the most interest.",
    }


def f_goal(rng):
    """Monthly saving needed for a goal, with the mistake that ignores current savings."""
    goal, target = rng.choice(
        [("house deposit", 24000), ("wedding", 15000), ("car", 9000), ("trip to Japan", 6000), ("new laptop", 1800)]
    )
    months = rng.choice([12, 18, 24, 36]) if target > 5000 else rng.choice([6, 9, 12])
    have = rng.choice([0.1, 0.2, 0.25]) * target
    need = (target - have) / months
    rows = [[str(m), money(have + need * m)] for m in (months // 3, 2 * months // 3, months)]
    return {
        "topic": "finance",
        "key": "fin_goal",
        "prompt": f"I want to save {money(target)} for a {goal} in {months} months. I already have {money(have)}. How much do I need to put away each month?",
        "intro": [
            f"You need about **{money(need)} a month**.",
            f"Subtract what you have, then divide by the months left: about {money(need)} a month.",
        ],
        "sections": [
            (
                "p",
                "The math",
                f"You still need {money(target)} − {money(have)} = {money(target - have)}. Spread over {months} months, that's {money(need)} a month.",
            ),
            ("table", "Milestones", ["Month", "Saved by then"], rows),
            (
                "ul",
                "Making it happen",
                [
                    "Automate the transfer on payday so it happens before you can spend it.",
                    "Keep the money in a separate high-yield savings account; the interest is a small bonus.",
                    f"If {money(need)} is too much, extend the deadline or trim one spending category.",
                ],
            ),
            ("p", "Weekly version", f"That's about {money(need * 12 / 52)} a week, if you're paid weekly."),
        ],
        "outro": [
            "Check in every few months; windfalls like tax refunds can shorten the timeline.",
            "Name the account after the goal; it helps.",
        ],
        "wrong": f"Divide {money(target)} by {months}: you need {money(target / months)} a month.",
    }


EMAIL_SCENARIOS = TEXT["EMAIL_SCENARIOS"]


def w_email(rng):
    """Rewrite a blunt message politely; the flawed answer keeps the bluntness."""
    sc = rng.choice(EMAIL_SCENARIOS)
    thing = rng.choice(["the quarterly report", "the client proposal", "the budget review"])
    meeting = rng.choice(["planning meeting", "weekly sync", "all-hands meeting"])
    v = {
        "r": rng.choice(["Dana", "Mr. Patel", "Karen", "Luis", "Ms. Okafor", "Jonas"]),
        "s": rng.choice(NAMES),
        "thing": thing,
        "Thing": thing.split(" ", 1)[1].capitalize(),
        "day": rng.choice(["Friday", "Monday", "Thursday"]),
        "later": rng.choice(["next Wednesday", "the 14th", "Tuesday"]),
        "inv": rng.randrange(1040, 2999),
        "days": rng.choice([30, 45, 60]),
        "amount": money(rng.choice([850, 1200, 2400, 3150])),
        "meeting": meeting,
        "Meeting": meeting.capitalize(),
        "commitment": rng.choice(["a client deadline", "the product launch", "an on-site visit"]),
        "address": rng.choice(["Flat 3, 27 Elm Road", "Apartment 12B, 410 Harbor Street", "14 Mill Lane"]),
    }
    draft, formal, short = (sc[k].format(**v) for k in ("draft", "formal", "short"))
    return {
        "topic": "writing",
        "key": "w_email",
        "prompt": rng.choice(
            [
                f'Can you rewrite this email so it sounds more professional?\n\n"{draft}"',
                f"Make this message more polite but still clear:\n\n{draft}",
                f'How can I say this nicely? "{draft}"',
            ]
        ),
        "intro": [
            "Here's a version that keeps your point but is much more likely to get a good response.",
            "The goal is to stay clear and firm while removing the edge.",
        ],
        "sections": [
            ("block", "Rewritten", formal),
            ("ul", "What changed", sc["notes"]),
            ("block", "A shorter version", short),
        ],
        "outro": [
            "Read it aloud once before sending; if a sentence sounds sharp out loud, it will on the screen too.",
            "",
        ],
        "wrong": "Here's a more professional version:\n\n" + sc["bad"].format(**v),
    }


COVER_ROLES = TEXT["COVER_ROLES"]


def w_cover(rng):
    """Cover-letter opening built around one concrete achievement."""
    role, place, achv = rng.choice(COVER_ROLES)
    years = rng.choice([2, 3, 4, 5, 6, 8])
    art = "an" if role[0] in "aeiou" else "a"
    one = (
        f"When I saw that [Company] is hiring {art} {role}, I knew I wanted to apply. Over the past {years} years at {place}, "
        f"I {achv}, and I'd like to bring the same focus on measurable results to your team."
    )
    two = (
        f"In {years} years as {art} {role} at {place}, the work I'm proudest of is easy to describe: I {achv}. "
        f"I'm applying for the {role} role at [Company] because your work on [specific project or product] is exactly where I want to use those skills next."
    )
    return {
        "topic": "writing",
        "key": "w_cover",
        "prompt": rng.choice(
            [
                f"Can you write the opening paragraph of a cover letter for {art} {role} position? I have {years} years of experience and I {achv}.",
                f"Help me start my cover letter. I'm applying to be {art} {role}; I've worked {years} years at {place} and I {achv}.",
            ]
        ),
        "intro": [
            "Lead with a concrete result rather than a list of adjectives; it's what makes a hiring manager keep reading.",
            "Here's an opening that gets to your strongest evidence in the first two sentences.",
        ],
        "sections": [
            ("block", "Opening paragraph", one),
            (
                "ul",
                "Why this works",
                [
                    "It names the role, so the reader knows immediately why you're writing.",
                    'It gives one specific, checkable achievement instead of "hard-working team player".',
                    "It connects your experience to what they need.",
                ],
            ),
            ("block", "Another option", two),
            (
                "ul",
                "Fill in before sending",
                [
                    "The company name and the exact job title from the posting.",
                    "One detail that shows you know the company: a product, a project or a value.",
                    "A number from your own work, if you have a stronger one.",
                ],
            ),
        ],
        "outro": ["Keep the whole letter under a page; three or four short paragraphs is plenty.", ""],
        "wrong": (
            'Open with: "To whom it may concern, I am writing to apply for the position advertised. I am a hard-working team player with '
            "excellent communication skills.\" Hiring managers expect this standard wording, so there's no need to mention specific achievements."
        ),
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
        "retirement party": "Your colleagues will miss the calm you bring to every crisis, and whoever takes over your desk has very big shoes to fill.",
        "engagement party": f"{partner}, you're marrying someone who remembers every birthday and never leaves a friend to move house alone. Choose wisely what you forget.",
    }
    closes = {
        "wedding": f"to {name} and {partner}, and to many happy years together",
        "50th birthday": f"to {name}, and to the next fifty",
        "retirement party": f"to {name}, and to a retirement full of long lunches",
        "engagement party": f"to {name} and {partner}",
    }
    toast = (
        f"Good evening, everyone. For those who don't know me, I'm {name}'s {rel}, and I've known {name} for {years} years. "
        f"In that time I've seen [a memorable moment, like the road trip where we got lost for six hours]. Through all of it, {name} has been the person who shows up, listens and makes everyone laugh.\n\n"
        f"{middles[occ]}\n\nPlease raise your glasses: {closes[occ]}."
    )
    return {
        "topic": "writing",
        "key": "w_toast",
        "prompt": rng.choice(
            [
                f"I need to give a short toast at my {rel}'s {occ}. Their name is {name}. Can you help me write one?",
                f"Write a two-minute toast for {name}'s {occ}. I'm their {rel}.",
            ]
        ),
        "intro": [
            "Here's a warm, short toast you can personalise; it runs about a minute and a half spoken.",
            "Short and sincere beats long and clever. Here's a draft built around one memory.",
        ],
        "sections": [
            ("block", "Toast", toast),
            (
                "ul",
                "Delivery tips",
                [
                    "Keep it under three minutes.",
                    "Practise out loud a few times, but bring notes on a card.",
                    "Look at the person you're toasting for the last line, then at the room as you raise your glass.",
                    "Skip inside jokes that only two people in the room will get.",
                ],
            ),
            (
                "ul",
                "Make it yours",
                [
                    "Swap in a real memory for the one in brackets.",
                    "Add one sentence about something you admire in them.",
                ],
            ),
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
        "topic": "travel",
        "key": f"t_{city.lower()}",
        "prompt": rng.choice(
            [
                f"Plan a {days}-day itinerary for {city}.",
                f"I'm visiting {city} for {days} days {who}. What should we see?",
                f"What's a good {days}-day plan for a first trip to {city}?",
            ]
        ),
        "intro": [
            f"Here's a {days}-day plan that groups sights by area, so you're not crisscrossing {city}.",
            f"{days} days is enough for {city}'s highlights if you start early each day.",
        ],
        "sections": [("ul", f"Day {i}: {title}", items) for i, (title, items) in enumerate(c["days"][:days], 1)]
        + [("ul", "What to eat", c["food"]), ("p", "Getting around", c["transport"])],
        "outro": [
            "Book the timed-entry sights a week or two ahead, especially in high season.",
            "Leave one evening unplanned; wandering is half the fun.",
        ],
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
    days = [
        ("ul", day, [f"Breakfast: {b[i]}.", f"Lunch: {l[i]}.", f"Dinner: {dinners[i]}."])
        for i, day in enumerate(WEEKDAYS)
    ]
    wrong = (
        "Vegetarian diets can't provide enough protein, so add a protein shake to every meal and skip the beans, which are mostly carbohydrate."
        if diet == "vegetarian"
        else "Skip breakfast and eat one big meal at night; it's the easiest way to stay healthy on any meal plan."
    )
    chili = "turkey" if diet != "vegetarian" else "vegetable"
    recipe = (
        "ol",
        f"Monday's {chili} chili (serves 6-8)",
        [
            "Soften 2 chopped onions, 2 peppers and 3 garlic cloves in 2 tbsp oil for 8 minutes"
            + (", then brown 500 g of ground turkey." if chili == "turkey" else "."),
            "Stir in 2 tbsp chili powder, 1 tbsp cumin and 1 tsp smoked paprika and cook for a minute.",
            "Add 2 cans of chopped tomatoes, 2 cans of drained kidney or black beans"
            + (", a can of sweetcorn" if chili == "vegetable" else "")
            + " and 250 ml of water.",
            "Simmer uncovered for 30-40 minutes, stirring now and then, until thick.",
            "Season with salt and a squeeze of lime; serve with rice, yogurt and chopped coriander.",
        ],
    )
    return {
        "topic": "cooking",
        "key": "c_meal_plan",
        "prompt": f"Can you make me a 7-day {diet} meal plan for {who}? Simple recipes, please.",
        "intro": [
            f"Here's a simple {diet} week for {who}, built so that leftovers from one dinner become the next day's lunch.",
            "The plan repeats a few ingredients on purpose, which keeps the shopping list short and cuts waste.",
        ],
        "sections": days
        + [
            recipe,
            (
                "ul",
                "Shopping list basics",
                [
                    "Oats, wholegrain bread, rice, pasta and noodles.",
                    "Canned tomatoes, beans, chickpeas and lentils.",
                    "Eggs, Greek yogurt, milk, feta or halloumi.",
                    "Spinach, peppers, broccoli, carrots, potatoes and onions.",
                    "Bananas, berries (frozen is fine), apples and a lemon.",
                ],
            ),
            (
                "ul",
                "Prep on Sunday",
                [
                    "Cook a big pot of rice or quinoa for the first half of the week.",
                    "Wash and chop vegetables for two or three dinners.",
                    "Make the overnight oats for Monday and Tuesday.",
                ],
            ),
        ],
        "outro": [
            f"Scale the dinners for {who} and freeze a portion of the chili; it makes a good emergency meal later.",
            "Swap any day around to fit your schedule; the plan works in any order.",
        ],
        "wrong": wrong,
    }


PARAM_SUBJECTS = [f_budget, f_compound, f_emergency, f_debt, f_goal, w_email, w_cover, w_toast, c_meal_plan]
