"""General mix: the row makers

Short rows in five styles standing in for the Stage-1 SFT mixture: plain instructions, math
with a final "The answer is N." line, verifiable-constraint prompts with answers that satisfy
them, casual chat, and FLAN-style task templates.
"""

import json

from sample_data.common import norm, num, rng_for
from sample_data.general_words import (
    ANIMAL_NOTES,
    ANIMALS,
    COMPANIES,
    CONCEPTS,
    CONVERSIONS,
    COUNTRIES,
    DIFFERENCES,
    DISHES,
    ELI5,
    END_PHRASES,
    EVENTS,
    FEELINGS,
    FORMAL,
    GRAMMAR,
    IDEAS,
    INGREDIENTS,
    MESSAGES,
    NLI_ACTIONS,
    NLI_NEUTRAL,
    NLI_PEOPLE,
    PETS,
    REVIEW_NEG,
    REVIEW_POS,
    REVIEW_PRODUCTS,
    STUDY_SUBJECTS,
    SYNONYMS,
    TEAMS,
    TIPS,
    TOPIC_FACTS,
    TRAITS,
    WORDS,
)
from sample_data.math_answers import NAMES

# -----------------------------------------------------------------------------
# General mix: row makers. Each returns the messages of one row.


def chat(*turns):
    """Alternating user/assistant messages from plain strings."""
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(turns)]


def gm_definition(rng):
    """A term defined in a sentence, with an example so the row teaches usage too."""
    term, definition, example = rng.choice(CONCEPTS)
    q = rng.choice(
        [
            f"What is {term}?",
            f"Define {term} in one or two sentences.",
            f"Explain {term} briefly.",
            f'What does the term "{term.split(" ", 1)[-1] if term.startswith(("a ", "an ", "the ")) else term}" mean?',
            f"Give a short definition of {term} with an example.",
        ]
    )
    name = term[0].upper() + term[1:]
    a = f"{name} is {definition}. For example: {example}"
    return chat(q, a)


def gm_tips(rng):
    """A numbered list of tips; the count asked for is the count given."""
    goal, tips = rng.choice(TIPS)
    n = rng.choice([3, 4, 5])
    q = rng.choice(
        [
            f"Give me {n} tips for {goal}.",
            f"What are {n} practical tips for {goal}?",
            f"List {n} ways to get better at {goal}.",
        ]
    )
    picked = rng.sample(tips, n)
    a = rng.choice([f"Here are {n} tips for {goal}:\n\n", "", f"Sure. {n} tips:\n\n"]) + "\n".join(
        f"{i}. {t}" for i, t in enumerate(picked, 1)
    )
    a += "\n\n" + rng.choice(
        [
            "Start with one or two of these; small changes are easier to keep.",
            "Pick the one that seems easiest and try it for a week.",
            "None of these needs special equipment, just a bit of consistency.",
            "",
        ]
    )
    a = a.rstrip()
    return chat(q, a)


def gm_formal(rng):
    """A register change: casual sentence in, formal sentence out."""
    informal, formal = rng.choice(FORMAL)
    q = rng.choice(
        [
            f'Rewrite this sentence to sound more formal: "{informal}"',
            f"Make this more professional: {informal}",
            f'How would I say "{informal}" in a formal email?',
        ]
    )
    note = rng.choice(
        [
            " This replaces the casual wording with complete, neutral phrasing.",
            " Formal writing avoids slang and contractions and states the point directly.",
            "",
        ]
    )
    return chat(q, rng.choice([formal, f'"{formal}"', f'A more formal version: "{formal}"']) + note)


def gm_grammar(rng):
    """One grammar slip and its correction."""
    wrong, right = rng.choice(GRAMMAR)
    q = rng.choice(
        [
            f"Correct the grammar in this sentence: {wrong}",
            f'Fix any mistakes: "{wrong}"',
            f"Is this sentence correct? {wrong}",
        ]
    )
    a = f'The corrected sentence is: "{right}"' if not q.startswith("Is") else f'Not quite. It should be: "{right}"'
    return chat(q, a)


def gm_synonym(rng):
    """Synonyms or an antonym: very short rows that still need the right word."""
    word, syns, ant = rng.choice(SYNONYMS)
    kind = rng.choice(["syn", "syn", "ant"])
    if kind == "ant":
        return chat(
            rng.choice([f'What is the opposite of "{word}"?', f"Give an antonym for {word}."]),
            f'The opposite of "{word}" is "{ant}".',
        )
    n = rng.choice([2, 3])
    return chat(f'Give me {n} synonyms for "{word}".', ", ".join(syns[:n]).capitalize() + ".")


def gm_animal(rng):
    """An animal and its class, with the defining traits of that class."""
    animal, cls = rng.choice(ANIMALS)
    q = rng.choice(
        [
            f"Is a {animal} a mammal, bird, reptile, amphibian or fish?",
            f"What kind of animal is a {animal}?",
            f"Classify the {animal} into its animal group.",
        ]
    )
    art = "an" if cls[0] in "aeiou" else "a"
    return chat(q, f"A {animal} is {art} {cls}. {ANIMAL_NOTES[cls]}")


def gm_convert(rng):
    """A unit conversion with the factor shown, so the number can be checked."""
    if rng.random() < 0.25:
        c = rng.choice([-10, 0, 5, 12, 18, 21, 25, 30, 37, 100])
        f = c * 9 / 5 + 32
        return chat(f"Convert {c}°C to Fahrenheit.", f"{c}°C × 9/5 + 32 = {num(round(f, 1))}°F.")
    a, b, k = rng.choice(CONVERSIONS)
    x = rng.choice([1, 2, 3, 5, 8, 10, 12, 15, 20, 25, 42, 50, 100])
    return chat(
        rng.choice([f"Convert {x} {a} to {b}.", f"How many {b} is {x} {a}?"]),
        f"{x} {a} is about {num(round(x * k, 2))} {b} (1 {a[:-1] if a.endswith('s') else a} ≈ {num(round(k, 3))} {b}).",
    )


def gm_sort(rng):
    """Alphabetical or numeric ordering: exact answers a small model can learn."""
    if rng.random() < 0.5:
        ws = rng.sample(WORDS, rng.randint(4, 7))
        return chat(f"Sort these words alphabetically: {', '.join(ws)}", ", ".join(sorted(ws)))
    ns = rng.sample(range(1, 200), rng.randint(5, 8))
    return chat(
        f"Put these numbers in order from smallest to largest: {', '.join(map(str, ns))}",
        ", ".join(map(str, sorted(ns))),
    )


def gm_instruction(rng):
    """The 'instructions' source: definitions, tips, rewrites and small transformations."""
    maker = rng.choices(
        [gm_definition, gm_tips, gm_formal, gm_grammar, gm_synonym, gm_animal, gm_convert, gm_sort],
        [6, 6, 2, 2, 1, 1, 1, 1],
    )[0]
    return maker(rng)


def gm_math(rng):
    """The 'math' source: small word problems whose last line is 'The answer is N.'"""
    name = rng.choice(NAMES)
    kind = rng.randrange(15)
    if kind == 0:
        n, p = rng.randint(2, 9), rng.choice([2, 3, 4, 5, 6, 7, 8, 9, 12])
        bill = 20 if n * p < 20 else 50 if n * p < 50 else 100
        q = f"{name} buys {n} notebooks at ${p} each and pays with a ${bill} bill. How much change does {name} get?"
        work, ans = (
            f"The notebooks cost {n} × ${p} = ${n * p}. The change is ${bill} − ${n * p} = ${bill - n * p}.",
            bill - n * p,
        )
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
            q, work, ans = (
                f"A rectangle is {l} cm long and {w} cm wide. What is its area in square centimetres?",
                f"Area = {l} × {w} = {l * w} cm².",
                l * w,
            )
        else:
            q, work, ans = (
                f"A rectangular garden is {l} m long and {w} m wide. How many metres of fence go around it?",
                f"Perimeter = 2 × ({l} + {w}) = {2 * (l + w)} m.",
                2 * (l + w),
            )
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
        work, ans = (
            f"{name} is {s} + {d} = {s + d} now, so in {y} years she will be {s + d} + {y} = {s + d + y}.",
            s + d + y,
        )
    elif kind == 12:
        t0, rise = rng.randint(-8, 5), rng.randint(4, 15)
        q = f"The temperature was {t0}°C in the morning and rose by {rise} degrees by the afternoon. What was the afternoon temperature?"
        work, ans = f"{t0} + {rise} = {t0 + rise}°C.", t0 + rise
    elif kind == 13:
        r, d = rng.randint(10, 40), rng.randint(2, 7)
        pages = r * d + rng.randint(20, 150)
        q = f"A book has {pages} pages. {name} reads {r} pages a day. How many pages are left after {d} days?"
        work, ans = (
            f"{name} reads {r} × {d} = {r * d} pages, leaving {pages} − {r * d} = {pages - r * d}.",
            pages - r * d,
        )
    else:
        n, each, m = rng.randint(2, 6), rng.randint(2, 9), rng.randint(3, 12)
        q = f"{n} notebooks cost ${n * each}. How much do {m} notebooks cost?"
        work, ans = (
            f"One notebook costs ${n * each} ÷ {n} = ${each}, so {m} cost {m} × ${each} = ${m * each}.",
            m * each,
        )
    return chat(q, f"{work}\nThe answer is {ans}.")


def constraint_answer(rng, kind, topic, facts):
    """A (prompt clause, answer) pair for one verifiable constraint type."""
    if kind == "lowercase":
        text = " ".join(rng.sample(facts, 3)).lower()
        return (
            rng.choice(
                [
                    "Your entire response must be in lowercase letters.",
                    "Use only lowercase letters, with no capitals at all.",
                ]
            ),
            text,
        )
    if kind == "bullets":
        n = rng.choice([2, 3, 4, 5])
        return (
            f"Answer with exactly {n} bullet points, using markdown bullets such as:\n* This is a point.",
            "\n".join(f"* {f}" for f in rng.sample(facts, n)),
        )
    if kind == "keyword":
        picked = rng.sample(facts, 3)
        kw = rng.choice(
            [w.strip(".").lower() for w in picked[0].split() if len(w.strip(".")) >= 6 and w.strip(".").isalpha()]
            or ["important"]
        )
        text = " ".join(picked) if kw in " ".join(picked).lower() else " ".join(picked) + f" That is why it is {kw}."
        return (f'Include the keyword "{kw}" in your response.', text)
    if kind == "end":
        phrase = rng.choice(END_PHRASES)
        return (
            f'Finish your response with the exact phrase "{phrase}"; no other words should follow it.',
            " ".join(rng.sample(facts, 3)) + " " + phrase,
        )
    if kind == "no_comma":
        return ("Do not use any commas in your response.", " ".join(rng.sample(facts, 3)))
    if kind == "json":
        body = json.dumps({"topic": topic, "facts": rng.sample(facts, 3)}, indent=2)
        return ("Wrap your entire output in JSON format.", f"```json\n{body}\n```" if rng.random() < 0.5 else body)
    n = rng.choice([2, 3])
    chunks = rng.sample(facts, 2 * n)
    paras = [" ".join(chunks[2 * i : 2 * i + 2]) for i in range(n)]
    return (
        f"There should be exactly {n} paragraphs, separated from each other by the markdown divider ***.",
        "\n\n***\n\n".join(paras),
    )


def gm_constraint(rng):
    """The 'constraints' source: instructions with checkable constraints and answers that satisfy them."""
    topic, facts = rng.choice(TOPIC_FACTS)
    kind = rng.choice(["lowercase", "bullets", "keyword", "end", "no_comma", "json", "paragraphs"])
    task = rng.choice(
        [
            f"Write a short piece about {topic}.",
            f"Tell me about {topic}.",
            f"Explain {topic} to a curious teenager.",
            f"Write a few sentences on {topic}.",
        ]
    )
    clause, answer = constraint_answer(rng, kind, topic, facts)
    if kind in ("no_comma", "keyword") and rng.random() < 0.4:  # a second, compatible constraint
        phrase = rng.choice(END_PHRASES)
        clause += f' End your response with the exact phrase "{phrase}" and nothing after it.'
        answer += " " + phrase
    return chat(f"{task} {clause}", answer)


def gm_casual_more(rng):
    """More casual requests: what to cook, reassurance, study plans and pet names."""
    kind = rng.randrange(4)
    if kind == 0:
        a, b, c = rng.sample(list(INGREDIENTS), 3)
        dish = rng.choice(DISHES)
        q = rng.choice(
            [
                f"what should I cook tonight? I have {a}, {b} and {c}",
                f"I've got {a}, {b} and {c} in the fridge. Dinner ideas?",
            ]
        )
        return chat(
            q,
            f"You could make {dish}. Start with the {a}: {INGREDIENTS[a]}. Then add the {b}; {INGREDIENTS[b]}. "
            f"Finish with the {c} ({INGREDIENTS[c]}), season with salt, pepper and a squeeze of lemon, and dinner is ready in about 30 minutes.",
        )
    if kind == 1:
        feeling, event = rng.choice(FEELINGS), rng.choice(EVENTS)
        q = rng.choice(
            [
                f"is it normal to feel {feeling} about {event}?",
                f"I'm feeling really {feeling} about {event}. Any advice?",
            ]
        )
        echo = event.replace("my ", "your ")
        return chat(
            q,
            f"Yes, that's very normal. {echo[0].upper() + echo[1:]} is a big step, and feeling {feeling} usually means it matters to you. "
            "A few things help: prepare what you can in advance, get a good night's sleep beforehand, and talk it through with someone you trust. "
            "If the feeling stays with you for weeks or starts to affect your daily life, it's worth speaking to a doctor or counsellor.",
        )
    if kind == 2:
        subject, days = rng.choice(STUDY_SUBJECTS), rng.randint(3, 7)
        plan = [
            "review your notes and list the topics you feel weakest on",
            "work through the weakest topic with practice questions",
            "do a timed past paper and mark it",
            "revisit the mistakes from the past paper",
            "make one-page summary sheets",
            "do a second past paper",
            "light review of your summary sheets and an early night",
        ]
        steps = plan[: days - 1] + [plan[-1]]
        return chat(
            f"can you help me make a study schedule? my {subject} exam is in {days} days",
            f"Here's a simple {days}-day plan for {subject}:\n\n"
            + "\n".join(f"Day {i}: {x[0].upper() + x[1:]}." for i, x in enumerate(steps, 1))
            + "\n\nStudy in 45-minute blocks with short breaks, and test yourself rather than just rereading.",
        )
    pet, trait = rng.choice(list(PETS)), rng.choice(TRAITS)
    names = rng.sample(PETS[pet], 4)
    return chat(
        rng.choice([f"I just got a {trait} {pet}. Name ideas?", f"help me name my new {pet}, it's {trait}"]),
        f"Congratulations on your new {pet}! A few names that might suit a {trait} one: "
        + ", ".join(names[:3])
        + f" or {names[3]}. "
        "Say them out loud a few times and see which one your pet seems to respond to.",
    )


def gm_sharegpt(rng):
    """The 'sharegpt_style' source: casual requests, sometimes with a follow-up turn."""
    kind = rng.randrange(6)
    if kind >= 4:
        return gm_casual_more(rng)
    if kind == 0:
        thing, ideas = rng.choice(IDEAS)
        n = rng.choice([3, 4, 5])
        q = rng.choice(
            [
                f"hey, can you give me some ideas for {thing}?",
                f"I need ideas for {thing}. Any suggestions?",
                f"brainstorm {n} ideas for {thing} pls",
            ]
        )
        picked = rng.sample(ideas, n)
        a = (
            rng.choice(
                [
                    "Sure! Here are a few ideas:",
                    "Happy to help. Some options:",
                    "Here are some ideas to get you started:",
                ]
            )
            + "\n\n"
            + "\n".join(f"{i}. {x}" for i, x in enumerate(picked, 1))
            + "\n\n"
            + rng.choice(
                ["Want me to expand on any of these?", "Let me know which one you like and I can add details.", ""]
            )
        )
        a = a.strip()
        short = f"Sure, the top two: {picked[0].rstrip('.')} or {picked[1][0].lower() + picked[1][1:]}"
    elif kind == 1:
        topic, text = rng.choice(ELI5)
        q = rng.choice(
            [f"can you explain {topic} like I'm five?", f"Explain {topic} in really simple terms.", f"ELI5: {topic}"]
        )
        a, short = text, text.split(". ")[0] + "."
    elif kind == 2:
        x, y, text = rng.choice(DIFFERENCES)
        q = rng.choice(
            [
                f"what's the difference between {x} and {y}?",
                f"{x} vs {y}, what's the difference?",
                f"How is {x} different from {y}?",
            ]
        )
        a, short = text, text.split(". ")[0] + "."
    else:
        who, what, text = rng.choice(MESSAGES)
        q = rng.choice(
            [
                f"help me write a text to {who} saying {what}",
                f"Can you write a short message to {who}? I want to tell them {what}.",
            ]
        )
        a, short = text, text.split(". ")[0] + "."
    if rng.random() < 0.12:
        follow = rng.choice(
            ["can you make it shorter?", "thanks! shorter version?", "Great. Can you boil that down to one line?"]
        )
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
        q = rng.choice(
            [
                f"Review: {review}\nIs this review positive or negative?",
                f"{review}\nDid this reviewer like the product?",
                f"What is the sentiment of the following review?\n{review}\nOPTIONS:\n- negative\n- positive",
            ]
        )
        ans = ("Yes." if positive else "No.") if "Did" in q else ("Positive." if positive else "Negative.")
        if rng.random() < 0.6:
            ans += f" The reviewer says the {product} {a} and {b}."
        return chat(q, ans)
    if kind == 1:
        person, (action, general, contra) = rng.choice(NLI_PEOPLE), rng.choice(NLI_ACTIONS)
        premise = f"A {person} is {action}."
        label = rng.choice(["yes", "no", "it is not possible to tell"])
        hyp = {
            "yes": f"The {person} {general}.",
            "no": f"The {person} {contra}.",
            "it is not possible to tell": f"The {person} is {action.split(' ')[0]} {' '.join(action.split(' ')[1:])} {rng.choice(NLI_NEUTRAL)}.",
        }[label]
        q = f'Premise: "{premise}"\nHypothesis: "{hyp}"\nDoes the premise entail the hypothesis?\nOPTIONS:\n- yes\n- it is not possible to tell\n- no'
        why = {
            "yes": f"Someone who is {action} {general}, so the hypothesis follows.",
            "no": f"Someone who is {action} cannot at the same time be someone who {contra}.",
            "it is not possible to tell": "The premise says nothing about why or when this is happening.",
        }[label]
        return chat(q, f"{why} The answer is: {label}." if rng.random() < 0.6 else label)
    if kind == 2:
        cat = rng.choice(["Sports", "Business", "World", "Science/Tech"])
        a, b = rng.sample(TEAMS, 2)
        c1, c2 = rng.sample(COUNTRIES, 2)
        head = {
            "Sports": f"{a} beat {b} {rng.randint(2, 5)}-{rng.randint(0, 1)} to reach the cup final",
            "Business": f"{rng.choice(COMPANIES)} shares rise {rng.randint(3, 15)}% after strong quarterly results",
            "World": f"{c1} and {c2} sign new trade and climate agreement",
            "Science/Tech": f"Researchers in {c1} unveil a battery that charges in {rng.randint(5, 15)} minutes",
        }[cat]
        return chat(
            f"Headline: {head}\nWhich topic is this headline about? World, Sports, Business or Science/Tech?", cat
        )
    if kind == 3:
        term, definition, example = rng.choice(CONCEPTS)
        passage = f"{term[0].upper() + term[1:]} is {definition}. {example}"
        return chat(
            f"Read the passage and answer the question.\n\nPassage: {passage}\n\nQuestion: What is {term}?",
            f"{definition[0].upper() + definition[1:]}.",
        )
    if kind == 4:
        topic, facts = rng.choice(TOPIC_FACTS)
        chosen = facts[: rng.randint(3, 5)]
        return chat(
            f"Summarize this passage in one sentence:\n\n{' '.join(chosen)}",
            f"The passage describes {topic}: {chosen[0][0].lower() + chosen[0][1:]}",
        )
    if kind == 5:
        (i1, f1), (i2, f2) = rng.sample(FORMAL, 2)
        same = rng.random() < 0.5
        s2 = f1 if same else f2
        return chat(
            f"Sentence 1: {i1}\nSentence 2: {s2}\nDo these two sentences mean the same thing? Answer yes or no.",
            "yes" if same else "no",
        )
    topic, facts = rng.choice(TOPIC_FACTS)
    fact = rng.choice(facts)
    content = [w.strip(".").lower() for w in fact.split() if len(w.strip(".")) > 4 and w.strip(".").isalpha()]
    picked = content[:3] if len(content) >= 3 else (content + ["today"])[:3]
    return chat(f"Write a sentence that uses all of these words: {', '.join(picked)}.", fact)


GM_SOURCES = [
    ("instructions", gm_instruction, 900),
    ("math", gm_math, 650),
    ("constraints", gm_constraint, 550),
    ("sharegpt_style", gm_sharegpt, 450),
    ("flan_style", gm_flan, 450),
]


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
    return [
        {"id": f"gm-{i:05d}", "source": source, "messages": messages} for i, (source, messages) in enumerate(rows, 1)
    ]
