"""Eval: open-ended generation prompts for the repetition score"""

from sample_data.common import TEXT, norm, rng_for

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
