"""Eval: IFEval-format prompts. Each instruction id has a phrasing in plain words and the
keyword arguments lm-eval's IFEval registry expects for it (unused arguments left out).
"""

import re

from sample_data.common import TEXT, norm, rng_for

IF_TASKS = TEXT["IF_TASKS"]
IF_FILL = TEXT["IF_FILL"]
IF_KEYWORDS = [
    "community",
    "patience",
    "sunlight",
    "journey",
    "balance",
    "curious",
    "window",
    "harmony",
    "careful",
    "memory",
    "garden",
    "bridge",
]
IF_FORBIDDEN = ["very", "really", "amazing", "basically", "literally", "awesome", "thing", "nice"]
IF_END = [
    "Is there anything else I can help with?",
    "Let me know if you have additional questions.",
    "Peace and love.",
    "See you next time.",
]
IF_CONFLICTS = [set(pair) for pair in TEXT["IF_CONFLICTS"]]  # pairs that contradict each other


def if_instruction(iid, rng):
    """(kwargs, sentence) for one instruction id, phrased as a person would ask."""
    if iid == "punctuation:no_comma":
        return {}, rng.choice(
            [
                "Do not use any commas in your response.",
                "Please avoid commas entirely.",
                "Your answer must not contain a single comma.",
            ]
        )
    if iid == "change_case:english_lowercase":
        return {}, rng.choice(
            [
                "Write everything in English using only lowercase letters.",
                "Please respond in English, in all lowercase, with no capital letters anywhere.",
            ]
        )
    if iid == "change_case:english_capital":
        return {}, rng.choice(
            [
                "Write your whole answer in English using capital letters only.",
                "Respond entirely in English and in ALL CAPS.",
            ]
        )
    if iid == "detectable_format:number_bullet_lists":
        n = rng.randint(2, 6)
        return {"num_bullets": n}, rng.choice(
            [
                f"Use exactly {n} bullet points, written as markdown bullets like:\n* First point",
                f"Organise the answer as exactly {n} markdown bullet points that start with an asterisk.",
            ]
        )
    if iid == "detectable_format:title":
        return {}, rng.choice(
            [
                "Give it a title wrapped in double angular brackets, for example <<a title>>.",
                "Start with a title in double angular brackets, such as <<my title>>.",
            ]
        )
    if iid == "detectable_format:json_format":
        return {}, rng.choice(
            [
                "Format the entire output as JSON; you may wrap it in markdown code fences.",
                "Your whole response must be valid JSON.",
            ]
        )
    if iid == "keywords:existence":
        kws = rng.sample(IF_KEYWORDS, rng.choice([1, 2]))
        return {"keywords": kws}, f"Make sure to include the word{'s' if len(kws) > 1 else ''} " + " and ".join(
            f'"{k}"' for k in kws
        ) + "."
    if iid == "keywords:forbidden_words":
        ws = rng.sample(IF_FORBIDDEN, rng.choice([1, 2]))
        return {"forbidden_words": ws}, "Do not use the word" + ("s " if len(ws) > 1 else " ") + " or ".join(
            f'"{w}"' for w in ws
        ) + "."
    if iid == "length_constraints:number_words":
        rel = rng.choice(["less than", "at least"])
        n = rng.choice([50, 80, 100, 150]) if rel == "less than" else rng.choice([120, 200, 300, 400])
        return {"relation": rel, "num_words": n}, (
            f"Keep it under {n} words." if rel == "less than" else f"The response should be at least {n} words long."
        )
    if iid == "length_constraints:number_paragraphs":
        n = rng.randint(2, 5)
        return {"num_paragraphs": n}, f"Write exactly {n} paragraphs and separate them with the markdown divider ***."
    if iid == "startend:end_checker":
        p = rng.choice(IF_END)
        return {"end_phrase": p}, f'End your response with the exact phrase "{p}", with nothing after it.'
    if iid == "startend:quotation":
        return {}, rng.choice(
            ["Put your entire response inside double quotation marks.", "Wrap the whole answer in double quotes."]
        )
    if iid == "detectable_content:postscript":
        return {"postscript_marker": "P.S."}, rng.choice(
            ["Finish with a postscript that starts with P.S.", "Add a postscript at the end, beginning with P.S."]
        )
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
            prompt = (
                request
                + " Before you answer, repeat the request above word for word without changing anything, then give your answer. "
                "Do not say anything before the repeated request, and do not repeat this sentence."
            )
        if norm(prompt) in taken:
            continue
        taken.add(norm(prompt))
        key += rng.randint(1, 9)
        out.append({"key": key, "prompt": prompt, "instruction_id_list": ids, "kwargs": kwargs})
    return out
